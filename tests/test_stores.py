"""The store contract, written once and run on every backend (``store_uri``: memory, LevelDB,
Redis). Backend-only behaviour (files, keys, scripts, races) is tested beside it in
test_store.py (LevelDB) and test_redis_store.py."""

import pytest

from scrapy_neardup import DUPLICATE, UNIQUE, Detector, Recipe, StoreFormatError, StoreUnavailable, open_store
from scrapy_neardup.stores import STORES_BASE, StoreError
from scrapy_neardup.stores.memory import MemoryStore

from corpus import ARTICLES, reprint, text

NAMES = list(ARTICLES)
EDITS = [("昨天", "前日"), ("记者", "本报记者"), ("表示", "称")]


def edited(body: str) -> str:
    for old, new in EDITS:
        body = body.replace(old, new, 1)
    return body


def corpus() -> list[tuple[str, str, str]]:
    """(key, story, text) in arrival order: originals, then reprints of each kind."""
    bodies = {name: text(name) for name in NAMES}
    docs = [(f"https://a.example/{name}", name, body) for name, body in bodies.items()]
    for name, body in bodies.items():
        paragraphs = body.split("\n")
        docs.append((f"https://b.example/{name}", name, f"转载自滨江日报网\n{body}\n（责任编辑：李明）"))
        docs.append((f"https://c.example/{name}", name, edited(body)))
        docs.append((f"https://d.example/{name}", name, "\n".join(paragraphs[:-1]) + paragraphs[-1][:40]))
        docs.append((f"https://e.example/{name}", name, body.replace("，", ",").replace("\n", "\n\n")))
    return docs


def renamed(verdicts: list[dict]) -> list[dict]:
    """Verdicts with ids renamed by first appearance: ids are each store's own (Redis files a
    duplicate before verifying it, and so uses up ids that the others never hand out)."""
    names: dict[int, int] = {}
    out = []
    for verdict in verdicts:
        verdict = dict(verdict)
        for field in ("doc_id", "similar_id"):
            if verdict[field] is not None:
                verdict[field] = names.setdefault(verdict[field], len(names) + 1)
        out.append(verdict)
    return out


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
    with pytest.raises(StoreFormatError, match=r"text_version: stored 2, configured \d+.*another scrapy-neardup version"):
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
        assert detector.check("https://b.example/museum", text("museum")).status == UNIQUE
    with open_store(store_uri, "reserve") as store:  # a committed document survives a reopen
        assert store.get(kept.doc_id).state == 0 and store.count() == 2


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
        reference.key, reference.simhash, reference.chars, reference.state
    )
    assert list(found.sketch.hashes) == list(reference.sketch.hashes)


def test_purge_removes_documents_older_than_the_window(store_uri):
    now = [1_000.0]
    with open_store(store_uri, "purge") as store:
        detector = Detector(store, clock=lambda: now[0])
        for name in NAMES:
            detector.check(f"https://a.example/{name}", text(name))
            now[0] += 10
        assert store.purge(1_000.0 + 40) == 4  # the first four stories
        assert store.count() == len(NAMES) - 4
        assert detector.check("https://b.example/x", text(NAMES[0])).status == UNIQUE
        assert detector.check("https://b.example/y", text(NAMES[-1])).status == DUPLICATE
        assert store.purge(0) == 0


def test_a_time_window_ignores_old_documents(store_uri):
    now = [1_000_000.0]
    with open_store(store_uri, "window") as store:
        detector = Detector(store, ttl=3600, clock=lambda: now[0])
        detector.check("old", text("marathon"))
        now[0] += 1800
        assert detector.check("mid", reprint("marathon")).status == DUPLICATE
        now[0] += 7200
        assert detector.check("new", reprint("marathon")).status == UNIQUE


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
