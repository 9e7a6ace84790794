"""The store contract, written once and run on every backend (``store_uri``: memory, LevelDB,
Redis). Backend-only behaviour (files, keys, scripts, races) is tested beside it in
test_store.py (LevelDB) and test_redis_store.py."""

import time
import zlib

import pytest
import redis
from support import news_corpus
from support.corpus import ARTICLES, reprint, text
from support.news_corpus import edited
from support.verdicts import checked_in_batches, renamed

from scrapy_neardup import DUPLICATE, REVISIT, UNIQUE, Detector, Recipe, StoreFormatError, StoreUnavailable, open_store
from scrapy_neardup.cli import main
from scrapy_neardup.engine.prefer import PreferSources, prefer_longest
from scrapy_neardup.stores import STORES_BASE, Probe, Store, StoreError
from scrapy_neardup.stores.base import GONE, REPLACED
from scrapy_neardup.stores.memory import MemoryStore
from scrapy_neardup.stores.record import DocRecord, UnpackedTexts, pack_text

NAMES = list(ARTICLES)


def corpus() -> list[tuple[str, str, str]]:
    """(key, story, text): the test corpus's articles, then four reprints of each."""
    return news_corpus.reprinted({name: text(name) for name in NAMES})


def test_the_same_verdicts_on_one_corpus_as_the_reference_store(store_uri):
    def verdicts(uri: str) -> list[dict]:
        with open_store(uri, "corpus") as store:
            detector = Detector(store)
            return [detector.check(key, body).as_dict() for key, _, body in corpus()]

    found = verdicts(store_uri)
    assert renamed(found) == renamed(verdicts("memory://"))
    kept = {v["key"] for v in found if v["status"] == UNIQUE}
    assert kept == {key for key, _, _ in corpus() if key.startswith("https://a.")}
    stories = {key: story for key, story, _ in corpus()}
    assert all(stories[v["duplicate_of"]] == stories[v["key"]] for v in found if v["status"] == DUPLICATE)


def test_the_news_corpus_keeps_each_story_once_and_ignores_a_shared_disclaimer(store_uri):
    """Reprints of eight stories, and eight stories that share only a long site line and disclaimer."""

    def verdicts(uri: str) -> list[dict]:
        with open_store(uri, "news") as store:
            detector = Detector(store)
            return [detector.check(key, body).as_dict() for key, _, body in news_corpus.corpus()]

    found, reference = verdicts(store_uri), verdicts("memory://")
    with open_store(store_uri, "news") as store:
        # A store that files before verifying (Redis) uses up ids on duplicates; the others
        # hand out the reference store's very ids.
        if store.files_before_verifying:
            assert renamed(found) == renamed(reference)
        else:
            assert found == reference
        # The boilerplate guard was exercised: the site line is a key of the first five stories only.
        leads = [store.get(v["doc_id"]) for v in found if v["key"].startswith("https://f.")]
        shared = set(leads[0].sentence_keys).intersection(*(r.sentence_keys for r in leads[1:5]))
        assert shared
        assert [bool(shared & set(r.sentence_keys)) for r in leads] == [True] * 5 + [False] * 3
    kept = {v["key"] for v in found if v["status"] == UNIQUE}
    assert kept == {key for key, _, _ in news_corpus.corpus() if key.startswith(("https://a.", "https://f."))}
    stories = {key: story for key, story, _ in news_corpus.corpus()}
    assert all(stories[v["duplicate_of"]] == stories[v["key"]] for v in found if v["status"] == DUPLICATE)


@pytest.mark.parametrize("size", [1, 5, 64])
def test_batches_give_the_verdicts_of_checks_one_by_one(store_uri, size):
    """Later documents of a batch see the earlier ones, duplicates included, until those are
    taken out; verification must skip them."""
    with open_store("memory://", "one-by-one") as store:
        detector = Detector(store)
        one_by_one = [detector.check(key, body).as_dict() for key, _, body in news_corpus.corpus()]
    with open_store(store_uri, f"batch{size}") as store:
        verdicts = checked_in_batches(store, size)
        assert renamed(verdicts) == renamed(one_by_one)
        # Every duplicate filed by a batch was taken out again (the last batch's with count).
        assert store.count() == len({v["doc_id"] for v in verdicts if v["status"] == UNIQUE})


def test_every_sentence_key_is_looked_up(store_uri):
    """A reprint whose n longest sentences are an added promotion is found by its next ones."""
    story = news_corpus.ARTICLES["rail"]
    reprinted = "\n".join(news_corpus.PROMOTION) + "\n" + story
    outcomes = []
    for uri in ("memory://", store_uri):
        with open_store(uri, "lookup") as store:
            detector = Detector(store, methods=("nshash",))
            first = detector.check("https://a.example/rail", story)
            outcomes.append(detector.check("https://b.example/rail", reprinted).as_dict())
            assert store.get(first.doc_id).sentence_keys  # the original is filed under its keys
    assert outcomes[0] == outcomes[1]
    assert outcomes[1]["status"] == DUPLICATE and outcomes[1]["method"] == "nshash"


def test_a_reopen_keeps_documents_and_the_id_counter(store_uri):
    with open_store(store_uri) as store:
        detector = Detector(store)
        first = [detector.check(name, text(name)) for name in NAMES]
    with open_store(store_uri) as store:
        detector = Detector(store)
        assert store.count() == len(NAMES)
        copy = detector.check("copy", reprint("rice"))
        assert copy.status == DUPLICATE and copy.duplicate_of == "rice"
        fresh = detector.check("fresh", "\n".join(text(n) for n in NAMES)[::-1])
        assert fresh.doc_id > max(v.doc_id for v in first)  # ids are never handed out twice


def test_namespaces_are_kept_apart(store_uri):
    with open_store(store_uri, namespace="one") as one, open_store(store_uri, namespace="two") as two:
        assert Detector(one).check("a", text("battery")).status == UNIQUE
        assert Detector(two).check("b", text("battery")).status == UNIQUE  # not a copy: another namespace
        assert Detector(one).check("a2", reprint("battery")).status == DUPLICATE
        assert one.count() == 1 and two.count() == 1


def test_another_recipe_is_refused_with_the_differences(store_uri):
    open_store(store_uri, recipe=Recipe(nshash_n=5)).close()
    with pytest.raises(StoreFormatError, match=r"nshash_n: stored 5, configured 7.*configure the stored values"):
        open_store(store_uri, recipe=Recipe(nshash_n=7))
    open_store(store_uri, recipe=Recipe(nshash_n=5)).close()  # the right recipe still opens


def test_a_store_of_another_text_version_says_to_use_a_new_store(store_uri):
    """Text processing changed between versions: no setting brings the old recipe back."""
    open_store(store_uri, recipe=Recipe(text_version=2)).close()
    with pytest.raises(
        StoreFormatError, match=r"text_version: stored 2, configured \d+.*another scrapy-neardup version"
    ):
        open_store(store_uri)


def test_a_store_that_does_not_exist_is_refused_without_create(store_uri):
    if store_uri.startswith("memory://"):
        pytest.skip("a memory store exists as soon as it is named")
    with pytest.raises(StoreUnavailable, match="there is no"):
        open_store(store_uri, create=False)
    with open_store(store_uri) as store:
        Detector(store).check("a", text("library"))
    with open_store(store_uri, create=False) as store:
        assert store.count() == 1
    with pytest.raises(StoreUnavailable, match="there is no"):
        open_store(store_uri, namespace="never-written", create=False)


def test_commit_makes_a_reservation_permanent_and_release_forgets_it(store_uri):
    with open_store(store_uri, "reserve") as store:
        detector = Detector(store)
        kept = detector.check("https://a.example/rice", text("rice"), reserve=True)
        assert kept.status == UNIQUE and store.get(kept.doc_id).state == 1
        assert detector.check("https://b.example/rice", edited(text("rice"))).status == DUPLICATE
        detector.commit(kept)
        assert store.get(kept.doc_id).state == 0

        dropped = detector.check("https://a.example/museum", text("museum"), reserve=True)
        detector.release(dropped)  # a later pipeline dropped the item: nothing left behind
        assert store.get(dropped.doc_id) is None
        assert store.count() == 1
        again = detector.check("https://b.example/museum", text("museum"))
        assert again.status == UNIQUE  # the released reservation does not catch its reprint
    with open_store(store_uri, "reserve") as store:  # a committed document survives a reopen
        assert store.get(kept.doc_id).state == 0 and store.count() == 2
        store.remove(again.doc_id)  # by another store object (another process, a reopen)
        assert store.count() == 1 and store.get(again.doc_id) is None
        assert Detector(store).check("https://c.example/museum", text("museum")).status == UNIQUE


def test_a_record_reads_back_as_the_reference_store_filed_it(store_uri):
    records = []
    for uri in ("memory://", store_uri):
        with open_store(uri, "records") as store:
            verdict = Detector(store).check("https://a.example/library", text("library"), reserve=True)
            records.append(store.get(verdict.doc_id))
            assert store.get(verdict.doc_id + 100) is None
    reference, found = records
    assert found.sentence_keys and found.sentence_keys == reference.sentence_keys
    assert (found.key, found.simhash, found.chars, found.state) == (
        reference.key,
        reference.simhash,
        reference.chars,
        reference.state,
    )
    assert list(found.sketch.hashes) == list(reference.sketch.hashes)
    assert found.story_words is not None and reference.story_words is not None
    assert len(found.story_words.words) and found.story_words.datelines == reference.story_words.datelines
    for part in ("words", "idf", "spread", "figures"):  # read back in the machine's byte order
        stored, kept = getattr(found.story_words, part), getattr(reference.story_words, part)
        assert stored.dtype == kept.dtype and stored.dtype.isnative and stored.tolist() == kept.tolist()


def _stored_ten_seconds_apart(store: Store) -> Detector:
    """Every story checked into ``store``, the first at time 1,000, each 10 s after the last."""
    now = [1_000.0]
    detector = Detector(store, clock=lambda: now[0])
    for name in NAMES:
        detector.check(f"https://a.example/{name}", text(name))
        now[0] += 10
    return detector


def test_purge_removes_documents_older_than_the_window(store_uri):
    with open_store(store_uri, "purge") as store:
        detector = _stored_ten_seconds_apart(store)
        assert store.purge(1_000.0 + 40) == 4  # the first four stories
        assert store.count() == len(NAMES) - 4
        assert detector.check("https://b.example/x", text(NAMES[0])).status == UNIQUE
        assert detector.check("https://b.example/y", text(NAMES[-1])).status == DUPLICATE
        assert store.purge(0) == 0


def test_a_paced_purge_removes_what_a_purge_at_once_removes(store_uri, capsys):
    """``neardup purge --paced``: the store rests between its batches (so that checks beside it
    keep their rate: benchmarks/purge.py and redis_cluster.py measure it) and removes the same
    documents; a store that cannot pace a purge is refused the option."""
    with open_store(store_uri, "paced") as store:
        detector = _stored_ten_seconds_apart(store)
        if not store.paces_purges:  # the memory store
            args = ["purge", "--store", store_uri, "--namespace", "paced", "--older-than", "1", "--paced"]
            assert main(args) == 2
            assert "cannot pace a purge: leave out --paced" in capsys.readouterr().err
            assert store.count() == len(NAMES)
            return
        assert store.purge(1_000.0 + 40, background=True) == 4
        assert store.count() == len(NAMES) - 4
        assert detector.check("https://b.example/x", text(NAMES[0])).status == UNIQUE
        assert detector.check("https://b.example/y", text(NAMES[-1])).status == DUPLICATE


def test_a_time_window_ignores_old_documents(store_uri):
    now = [1_000_000.0]
    with open_store(store_uri, "window") as store:
        detector = Detector(store, ttl=3600, clock=lambda: now[0])
        detector.check("old", text("marathon"))
        now[0] += 1800
        assert detector.check("mid", reprint("marathon")).status == DUPLICATE
        now[0] += 7200
        assert detector.check("new", reprint("marathon")).status == UNIQUE


def excerpt(name: str) -> str:
    """A portal's cut-down copy: a source line and the first three of five paragraphs."""
    return "来源：滨江日报\n" + "\n".join(text(name).split("\n")[:3])


def near_complete(name: str) -> str:
    """A third copy: the whole article with the end of its last sentence cut."""
    return text(name)[:-15]


def test_a_longer_copy_replaces_the_stored_excerpt_and_keeps_the_story(store_uri):
    with open_store(store_uri, "prefer") as store:
        detector = Detector(store, prefer=prefer_longest)
        first = detector.check("https://portal.example/rice", excerpt("rice"))
        detector.check("https://a.example/museum", text("museum"))
        complete = detector.check("https://a.example/rice", text("rice"))
        assert complete.status == UNIQUE and complete.replaces == "https://portal.example/rice"
        assert complete.similar_id == first.similar_id and complete.doc_id != first.doc_id
        assert store.get(first.doc_id) is None and store.count() == 2
        # Every later copy names the winner; the superseded copy is a duplicate of it now.
        third = detector.check("https://c.example/rice", near_complete("rice"))
        again = detector.check("https://portal.example/rice", excerpt("rice"))
        for verdict in (third, again):
            assert verdict.status == DUPLICATE and verdict.replaces is None
            assert (verdict.duplicate_of, verdict.similar_id) == ("https://a.example/rice", first.similar_id)
    with open_store(store_uri, "prefer") as store:  # as stored, across a reopen
        winner = store.get(complete.doc_id)
        assert (winner.story_id, winner.replaces, winner.state) == (first.similar_id, first.doc_id, 0)
        assert Detector(store).check("https://d.example/rice", text("rice")).duplicate_of == "https://a.example/rice"


@pytest.mark.parametrize("reserve", [False, True], ids=["committed", "reserved"])
def test_a_replaced_copy_leaves_no_kept_text_behind(store_uri, reserve):
    """The replaced copy's kept text goes with it (at once, or at the replacing copy's commit):
    nothing can show it under the name of the copy that took its place."""
    with open_store(store_uri, "prefer-texts") as store:
        detector = Detector(store, prefer=prefer_longest)
        first = detector.check_fingerprint("portal", detector.fingerprint(excerpt("rice")), text=excerpt("rice"))
        body = text("rice")
        complete = detector.check_fingerprint("complete", detector.fingerprint(body), reserve, text=body)
        assert complete.replaces == "portal"
        detector.commit(complete)
        assert store.texts([first.doc_id, complete.doc_id]) == {complete.doc_id: body}


def test_a_copy_too_little_longer_or_seen_first_is_a_plain_duplicate(store_uri):
    with open_store(store_uri, "prefer") as store:
        detector = Detector(store, prefer=prefer_longest)
        kept = detector.check("https://a.example/library", text("library"))
        for key, body in [
            ("https://b.example/library", excerpt("library")),
            ("https://c.example/library", near_complete("library")),
        ]:
            verdict = detector.check(key, body)
            assert verdict.status == DUPLICATE and verdict.duplicate_of == kept.key and verdict.replaces is None
        assert [r.key for r in store.records()] == [kept.key]


def test_the_first_policy_gives_todays_verdicts_and_records(store_uri):
    stream = [("https://portal.example/rice", excerpt("rice")), ("https://a.example/rice", text("rice"))]
    found = []
    for policy in (None, prefer_longest):
        with open_store(store_uri, f"first-{policy is None}") as store:
            detector = Detector(store, prefer=policy)
            verdicts = [detector.check(key, body) for key, body in stream]
            found.append(([v.status for v in verdicts], [r.to_bytes()[8:24] for r in store.records()]))
            if policy is None:
                assert verdicts[1].duplicate_of == "https://portal.example/rice"
                assert all(r.story == r.replaces == 0 and r.source == "" for r in store.records())
    assert found[0][0] == [UNIQUE, DUPLICATE] and found[1][0] == [UNIQUE, UNIQUE]


def test_a_reserved_replacement_takes_the_old_copy_out_only_when_committed(store_uri):
    with open_store(store_uri, "pending") as store:
        detector = Detector(store, prefer=prefer_longest)
        old = detector.check("https://portal.example/battery", excerpt("battery"))
        winner = detector.check("https://a.example/battery", text("battery"), reserve=True)
        assert winner.replaces == old.key and store.get(old.doc_id) is not None
        # A copy meanwhile names the pending winner and waits for its outcome.
        third = detector.check("https://c.example/battery", near_complete("battery"))
        assert (third.status, third.duplicate_of, third.waits_for) == (DUPLICATE, winner.key, winner.doc_id)
        # A later pipeline dropped the winner: the old copy stays the story's.
        detector.release(winner)
        assert store.get(winner.doc_id) is None and [r.key for r in store.records()] == [old.key]
        again = detector.check("https://a.example/battery", text("battery"), reserve=True)
        assert again.replaces == old.key and again.similar_id == old.similar_id
        detector.commit(again)
        assert [r.key for r in store.records()] == ["https://a.example/battery"]
        assert detector.check("https://c.example/battery", near_complete("battery")).duplicate_of == again.key


def filed(store: Store, key: str, body: str, pending: bool = False) -> DocRecord:
    """``body`` filed as a story of its own, whatever the store holds."""
    fp = Detector(store).fingerprint(body)
    record = DocRecord(0, key, time.time(), fp.simhash, fp.sketch, fp.chars, state=int(pending))
    store.check_and_add(Probe([], []), record)
    return store.get(record.doc_id)


def test_a_document_is_found_under_its_key_whatever_its_text(store_uri):
    """Filed under its key too: a check of the same key reads it even when the two texts
    share no sentence, sketch or SimHash bucket; removed, it is out of that bucket too."""
    with open_store(store_uri, "keys") as store:
        first = filed(store, "https://a.example/1", text("museum"))
        other = filed(store, "https://a.example/2", text("battery"))
        fp = Detector(store).fingerprint(text("rice"))
        probe = DocRecord(0, "https://a.example/1", time.time(), fp.simhash, fp.sketch, fp.chars)
        found = store.check_and_add(Probe([], []), probe)
        assert [c.doc_id for c in found.candidates] == [first.doc_id]
        assert [r.doc_id for r in store.stored_under("https://a.example/1")] == [first.doc_id, probe.doc_id]
        store.remove(first.doc_id)
        store.remove(probe.doc_id)
        assert store.stored_under("https://a.example/1") == []
        again = DocRecord(0, "https://a.example/1", time.time(), fp.simhash, fp.sketch, fp.chars)
        assert store.check_and_add(Probe([], []), again).candidates == []
    with open_store(store_uri, "keys") as store:  # reopened: the key buckets are as they were
        again = DocRecord(0, "https://a.example/2", time.time(), fp.simhash, fp.sketch, fp.chars)
        assert [c.doc_id for c in store.check_and_add(Probe([], []), again).candidates] == [other.doc_id]


def test_revisits_updates_and_key_collisions_over_two_runs(store_uri):
    """A page seen again is a revisit; a page that gained two sentences, an update replacing
    its stored document; a page that tells another story now, a key collision filed beside
    the stored story, which is kept."""
    keys = [f"https://a.example/{name}" for name in NAMES[:4]]
    grown = text(NAMES[1]) + "\n相关部门表示，下一步将继续跟踪进展并及时向社会公布。记者将持续关注此事的后续情况。"
    with open_store(store_uri, "runs") as store:
        detector = Detector(store)
        first = [detector.check(key, text(name)) for key, name in zip(keys, NAMES)]
    with open_store(store_uri, "runs") as store:  # the next crawl of the same pages
        detector = Detector(store)
        again = detector.check(keys[0], "\n" + text(NAMES[0]).replace("。", "。 "))  # re-rendered
        updated = detector.check(keys[1], grown)
        collided = detector.check(keys[2], text(NAMES[5]))  # another story now
        assert again.status == REVISIT and again.similar_id == first[0].similar_id
        assert updated.status == UNIQUE and updated.updated and updated.similar_id == first[1].similar_id
        assert collided.status == UNIQUE and collided.key_collision and not collided.updated
        assert collided.similar_id not in {v.similar_id for v in first}
        assert store.count() == 5
    with open_store(store_uri, "runs") as store:
        assert [r.doc_id for r in store.stored_under(keys[1])] == [updated.doc_id]
        assert [r.story_id for r in store.stored_under(keys[2])] == [first[2].similar_id, collided.similar_id]
        detector = Detector(store)
        for story, similar_id in ((NAMES[2], first[2].similar_id), (NAMES[5], collided.similar_id)):
            copy = detector.check(f"https://b.example/{story}", reprint(story))
            assert (copy.status, copy.duplicate_of, copy.similar_id) == (DUPLICATE, keys[2], similar_id)
    with open_store(store_uri, "runs") as store:  # a batch (Redis: one round trip, verified after)
        detector = Detector(store)
        batch = [keys[0], keys[2], keys[3], "https://c.example/4"]
        texts = [text(NAMES[0]), text(NAMES[5]), text(NAMES[4]), text(NAMES[4])]
        verdicts = detector.check_many([(key, detector.fingerprint(body)) for key, body in zip(batch, texts)])
        assert [(v.status, v.updated, v.key_collision) for v in verdicts] == [
            (REVISIT, False, False),
            (REVISIT, False, False),
            (UNIQUE, False, True),
            (DUPLICATE, False, False),
        ]
        assert verdicts[3].duplicate_of == keys[3] and verdicts[3].similar_id == verdicts[2].similar_id
        store.count()  # Redis takes a batch's duplicates out with its next call
        assert sorted(r.key for r in store.records()) == sorted([*keys, keys[2], keys[3]])


def test_of_two_copies_replacing_one_story_one_wins(store_uri):
    with open_store(store_uri, "race") as store:
        old = filed(store, "https://portal.example/marathon", excerpt("marathon"))
        one = filed(store, "https://a.example/marathon", text("marathon"), pending=True)
        two = filed(store, "https://b.example/marathon", near_complete("marathon"), pending=True)
        assert store.replace(one, old) == REPLACED
        assert store.replace(two, old) == one.doc_id  # claimed by the pending one
        store.commit(one.doc_id)
        assert store.replace(two, old) == GONE and store.get(old.doc_id) is None
        assert store.get(one.doc_id).story_id == old.doc_id and store.get(two.doc_id).story_id == two.doc_id
        # A released claim frees the copy for the next one.
        late = filed(store, "https://portal.example/rice", excerpt("rice"))
        three = filed(store, "https://a.example/rice", text("rice"), pending=True)
        four = filed(store, "https://b.example/rice", near_complete("rice"))
        assert store.replace(three, late) == REPLACED
        store.remove(three.doc_id)
        assert store.get(late.doc_id) is not None
        # Committed at once: the first replacement takes the copy out, the second finds it gone.
        five = filed(store, "https://c.example/rice", text("rice"))
        assert store.replace(four, late) == REPLACED and store.replace(five, late) == GONE
        assert store.get(late.doc_id) is None and store.get(four.doc_id).story_id == late.doc_id


def test_a_source_policy_prefers_the_higher_ranked_site(store_uri):
    with open_store(store_uri, "sources") as store:
        detector = Detector(store, prefer=PreferSources(["xinhua.example", "a.example"]))
        detector.check("https://a.example/reservoir", text("reservoir"))
        ranked = detector.check("https://news.xinhua.example/1", edited(text("reservoir")))
        assert ranked.replaces == "https://a.example/reservoir"
        # Ranked by the source given, not the key's site; unlisted sites rank last.
        listed = detector.check("https://mirror.example/2", text("reservoir"), source="XINHUA.example")
        assert listed.status == DUPLICATE and listed.duplicate_of == "https://news.xinhua.example/1"
        assert detector.check("https://z.example/3", text("reservoir")).status == DUPLICATE


def snapshot(store_uri: str, store) -> tuple:
    """What a read must not change: the records, and on Redis every key's value."""
    records = [record.to_bytes() for record in store.records()]
    if not store_uri.startswith("redis"):
        return store.count(), records
    if store_uri.startswith("redis+cluster"):  # every master's keys
        return store.count(), records, {key: store.client.dump(key) for key in store.client.scan_iter()}
    client = redis.Redis.from_url(store_uri)
    with client:
        return store.count(), records, {key: client.dump(key) for key in client.scan_iter()}


def test_a_query_names_the_first_copy_and_changes_nothing(store_uri):
    stored, unseen = NAMES[: len(NAMES) // 2], NAMES[len(NAMES) // 2 :]
    with open_store(store_uri, "query") as store:
        detector = Detector(store)
        ids = {name: detector.check(f"https://a.example/{name}", text(name)).doc_id for name in stored}
        detector.check("https://a.example/pending", text(unseen[0]), reserve=True)
        detector.release(detector.check("https://a.example/released", text(unseen[1]), reserve=True))
        before = snapshot(store_uri, store)
        for key, story, body in corpus()[len(NAMES) :]:
            found = detector.query(body, k=3)
            if story in stored:
                assert found[0].key == f"https://a.example/{story}" and found[0].duplicate, key
                assert found[0].similarity >= 0.7 and found[0].similar_id == ids[story]
            elif story == unseen[0]:
                assert [(s.key, s.duplicate) for s in found[:1]] == [("https://a.example/pending", True)]
            else:
                assert not any(s.duplicate for s in found), key
            assert [s.similarity for s in found] == sorted((s.similarity for s in found), reverse=True)
        own = detector.query(text(stored[0]), key=f"https://a.example/{stored[0]}")
        assert [(s.key, s.similarity, s.duplicate) for s in own] == [(f"https://a.example/{stored[0]}", 1.0, False)]
        assert detector.query(text(stored[0])[:30]) == []  # too short to judge
        assert snapshot(store_uri, store) == before
        # and check() still sees the store as it was: the next document takes the next id
        assert detector.check("https://z.example/new", text(unseen[2])).status == UNIQUE


def test_records_lists_every_document_oldest_first(store_uri):
    with open_store(store_uri, "records") as store:
        detector = Detector(store, clock=iter(range(1_000, 2_000)).__next__)
        verdicts = [detector.check(f"https://a.example/{name}", text(name)) for name in NAMES]
        detector.check("https://b.example/copy", text(NAMES[0]))
        store.remove(verdicts[1].doc_id)
        listed = list(store.records())
    assert [r.key for r in listed] == [f"https://a.example/{name}" for name in NAMES if name != NAMES[1]]
    assert [r.time for r in listed] == sorted(r.time for r in listed)
    assert all(r.sketch.size and r.sentence_keys for r in listed)


def test_texts_unpacked_lately_are_the_texts_unpacking_gives_and_stay_within_their_bound():
    """Kept texts read again are taken from the texts unpacked lately: the same text as
    unpacking the bytes, the least recently read dropped first, a very long one never kept."""
    bodies = [text(name) + f"\n{number}" for number, name in enumerate(NAMES)]
    packed = [pack_text(body) for body in bodies]
    largest = max(len(data) + 2 * len(body) for data, body in zip(packed, bodies))
    unpacked = UnpackedTexts(max_bytes=16 * largest)
    for _ in range(3):
        for data, body in zip(packed, bodies):
            assert unpacked.text(data) == body == zlib.decompress(data).decode("utf-8")
            assert unpacked.bytes <= unpacked.max_bytes
    assert unpacked.text(packed[-1]) is unpacked.text(packed[-1])  # the most recent stays kept
    small = UnpackedTexts(max_bytes=largest)  # every text more than a sixteenth of the bound
    assert [small.text(data) for data in packed] == bodies
    assert len(small) == 0 and small.bytes == 0


def test_kept_texts_are_stored_with_their_records_and_go_with_them(store_uri):
    """NEARDUP_KEEP_TEXT: a text is written with its record, read back whole (also after a
    reopen, also in batches), and taken out with it; the record is filed as without it."""
    bodies = {name: text(name) + "\n\ud800 lone surrogate" * (name == NAMES[0]) for name in NAMES[:4]}
    with open_store(store_uri, "texts") as store:
        detector = Detector(store)
        kept = detector.check_fingerprint(
            "https://a.example/0", detector.fingerprint(bodies[NAMES[0]]), text=bodies[NAMES[0]]
        )
        batch = [(f"https://a.example/{n}", detector.fingerprint(bodies[n])) for n in NAMES[1:4]]
        batch.append(("https://b.example/copy", detector.fingerprint(reprint(NAMES[1]))))
        verdicts = detector.start_many(batch, texts=[bodies[n] for n in NAMES[1:4]] + [reprint(NAMES[1])])()
        plain = detector.check("https://a.example/plain", text(NAMES[4]))  # stored without text
        pending = detector.check_fingerprint(
            "https://a.example/p", detector.fingerprint(text(NAMES[5])), True, text=text(NAMES[5])
        )
        detector.commit(pending)
        assert verdicts[-1].status == DUPLICATE
        ids = [kept.doc_id, *(v.doc_id for v in verdicts[:3])]
        found = store.texts(ids + [plain.doc_id, pending.doc_id, 10_000])
        assert found[kept.doc_id] == bodies[NAMES[0]].replace("\ud800", "\\ud800")  # escaped, not lost
        assert [found[i] for i in ids[1:]] == [bodies[n] for n in NAMES[1:4]]
        assert found[pending.doc_id] == text(NAMES[5])
        assert plain.doc_id not in found and 10_000 not in found
        with open_store("memory://", "texts") as reference:
            without = Detector(reference).check("https://a.example/0", bodies[NAMES[0]])
            assert store.get(kept.doc_id).sentence_keys == reference.get(without.doc_id).sentence_keys
    with open_store(store_uri, "texts") as store:
        assert set(store.texts(ids)) == set(ids)
        store.remove(ids[1])
        assert store.purge(float("inf")) == 5
        assert store.texts(ids + [pending.doc_id]) == {}
        if store_uri.startswith("redis+cluster"):  # nothing of the texts is left behind
            assert not list(store.client.scan_iter("*:texts:x:*"))
        elif store_uri.startswith("redis"):
            client = redis.Redis.from_url(store_uri)
            with client:
                assert not list(client.scan_iter("*{texts}:x:*"))


class CountingStore(MemoryStore):
    """A user's own backend: the memory store, counting the checks it served."""

    checks = 0

    def check_and_add(self, probe, record, confirm=None):
        CountingStore.checks += 1
        return super().check_and_add(probe, record, confirm)


def test_a_store_registered_by_scheme_is_built_from_its_uri():
    stores = {**STORES_BASE, "counting": f"{__name__}.CountingStore"}
    CountingStore.checks = 0
    with open_store("counting://", stores=stores) as store:
        assert isinstance(store, CountingStore)
        Detector(store).check("a", text("library"))
    assert CountingStore.checks == 1
    with pytest.raises(StoreError, match=r"unknown store URI 'nowhere://x': the known schemes are .*counting://"):
        open_store("nowhere://x", stores=stores)
    with pytest.raises(StoreError, match="unknown store URI"):
        open_store("counting://")  # not in the built-in registry
    with pytest.raises(StoreError, match="does not exist"):
        open_store("counting://", stores={"counting": f"{__name__}.NoSuchStore"})


def test_a_missing_optional_package_names_the_extra_to_install(monkeypatch):
    import sys

    # The redis package missing, as in an install without the [redis] extra.
    monkeypatch.setitem(sys.modules, "redis", None)
    for name in [name for name in sys.modules if name.startswith("scrapy_neardup.stores.redis")]:
        monkeypatch.delitem(sys.modules, name)
    with pytest.raises(StoreUnavailable, match=r"the redis:// store .* pip install 'scrapy-neardup\[redis\]'"):
        open_store("redis://127.0.0.1:1/0")
    with pytest.raises(StoreUnavailable, match=r"the rediss:// store"):
        open_store("rediss://127.0.0.1:1/0")
