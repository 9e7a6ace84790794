"""Reservations on a real store: reserve, commit, release, and a copy waiting for its first copy."""

from __future__ import annotations

from scrapy.utils.defer import deferred_f_from_coro_f, deferred_from_coro, maybe_deferred_to_future

from scrapy_neardup import DUPLICATE, UNIQUE, Detector, open_store
from scrapy_neardup.crawl.reservations import Reservations
from scrapy_neardup.newsworld.small import STORIES
from scrapy_neardup.stores.record import COMMITTED, PENDING

TEXT = "\n".join(STORIES["metro"].paragraphs)
REPRINT = "本文转载自江城日报。\n" + "\n".join(STORIES["metro"].paragraphs[:5]) + "\n（责任编辑：李明）"


def setup(waiting=None, on_error=None, uri="memory://"):
    detector = Detector(open_store(uri))
    return detector, Reservations(detector.commit, detector.release, "url", waiting, on_error)


def reserved(detector, reservations, item):
    verdict = detector.check(item["url"], item["text"], reserve=True)
    assert verdict.status == UNIQUE and verdict.stored
    reservations.reserve(item, verdict)
    return verdict


def test_commit_makes_the_document_permanent():
    detector, reservations = setup()
    item = {"url": "https://a/1", "text": TEXT}
    verdict = reserved(detector, reservations, item)
    assert detector.store.get(verdict.doc_id).state == PENDING
    assert reservations.entries() == [(item, verdict)]
    assert reservations.commit(item) is verdict
    assert detector.store.get(verdict.doc_id).state == COMMITTED
    assert len(reservations) == 0
    assert reservations.commit(item) is None  # nothing held any more


def test_release_takes_the_document_out():
    detector, reservations = setup()
    item = {"url": "https://a/1", "text": TEXT}
    verdict = reserved(detector, reservations, item)
    assert reservations.release(item) is verdict
    assert detector.store.get(verdict.doc_id) is None
    assert reservations.release({"url": "https://other"}) is None


def test_an_item_replaced_by_a_later_pipeline_is_found_by_its_key():
    detector, reservations = setup()
    verdict = reserved(detector, reservations, {"url": "https://a/1", "text": TEXT})
    assert reservations.commit({"url": "https://a/1", "stored": True}) is verdict
    assert detector.store.get(verdict.doc_id).state == COMMITTED


def test_release_all_gives_back_what_was_held():
    detector, reservations = setup()
    one = reserved(detector, reservations, {"url": "https://a/1", "text": TEXT})
    two = reserved(detector, reservations, {"url": "https://a/2", "text": "\n".join(STORIES["canteen"].paragraphs)})
    assert reservations.release_all() == [one, two]
    assert detector.store.count() == 0 and len(reservations) == 0


def test_a_failing_store_is_reported_and_the_reservation_still_settles(tmp_path):
    errors = []
    detector, reservations = setup(on_error=lambda *args: errors.append(args), uri=f"leveldb://{tmp_path}")
    item = {"url": "https://a/1", "text": TEXT}
    reserved(detector, reservations, item)
    detector.store._shared.db.close()  # the database goes away after the check
    reservations.commit(item)
    assert [(action, v.key) for action, v, _ in errors] == [("committing", "https://a/1")]
    assert len(reservations) == 0 and reservations.waiting == {}


async def _waiting(reservations, copy_verdict):
    """first_copy_outcome() started, once it waits on the first copy (the task may start a loop
    turn later)."""
    import asyncio

    outcome = deferred_from_coro(reservations.first_copy_outcome(copy_verdict))
    for _ in range(100):
        if reservations.waiters(copy_verdict.similar_id):
            break
        await asyncio.sleep(0)
    assert reservations.waiters(copy_verdict.similar_id) == 1 and not outcome.called
    return outcome


@deferred_f_from_coro_f
async def test_a_copy_waits_and_hears_that_the_first_copy_was_committed():
    detector, reservations = setup()
    first = {"url": "https://a/1", "text": TEXT}
    verdict = reserved(detector, reservations, first)
    copy = detector.check("https://b/1", REPRINT, reserve=True)
    assert copy.status == DUPLICATE and copy.similar_id == verdict.doc_id
    outcome = await _waiting(reservations, copy)
    reservations.commit(first)
    assert await maybe_deferred_to_future(outcome) is True


@deferred_f_from_coro_f
async def test_a_copy_hears_that_the_first_copy_was_released_and_is_then_a_story_of_its_own():
    detector, reservations = setup()
    first = {"url": "https://a/1", "text": TEXT}
    reserved(detector, reservations, first)
    copy = detector.check("https://b/1", REPRINT, reserve=True)
    outcome = await _waiting(reservations, copy)
    reservations.release(first)
    assert await maybe_deferred_to_future(outcome) is False
    again = detector.check("https://b/1", REPRINT, reserve=True)  # what the pipeline does then
    assert again.status == UNIQUE and again.stored


@deferred_f_from_coro_f
async def test_copies_of_another_spider_wait_on_the_shared_table():
    waiting = {}
    detector, mine = setup(waiting)
    theirs = Reservations(detector.commit, detector.release, "url", waiting)
    first = {"url": "https://a/1", "text": TEXT}
    reserved(detector, mine, first)
    copy = detector.check("https://b/1", REPRINT, reserve=True)
    outcome = await _waiting(theirs, copy)
    mine.commit(first)
    assert await maybe_deferred_to_future(outcome) is True


@deferred_f_from_coro_f
async def test_nothing_is_awaited_for_a_copy_of_a_committed_story_or_a_unique_item():
    detector, reservations = setup()
    first = {"url": "https://a/1", "text": TEXT}
    verdict = reserved(detector, reservations, first)
    reservations.commit(first)
    copy = detector.check("https://b/1", REPRINT, reserve=True)
    assert copy.status == DUPLICATE
    assert await reservations.first_copy_outcome(copy) is None
    assert await reservations.first_copy_outcome(verdict) is None
