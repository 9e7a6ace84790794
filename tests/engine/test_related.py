"""Related stories: stored stories sharing a long passage with a document (dedup --related)."""

import json
import uuid

import pytest
from scrapy.utils.defer import deferred_f_from_coro_f
from scrapy.utils.test import get_crawler
from support.corpus import ARTICLES, SIGNATURE, quoting, reprint, text, with_disclaimer

from scrapy_neardup import DUPLICATE, UNIQUE, Detector, NearDuplicateItem, NearDupPipeline, open_store
from scrapy_neardup.cli import main
from scrapy_neardup.fingerprints.passages import passages_of
from scrapy_neardup.fingerprints.text import content_chars, split_sentences

# Arrival order: a story, an unrelated one, an article quoting the first, a reprint of the
# first, a reprint of the quoting article, another story.
STREAM = [
    ("battery", text("battery")),
    ("museum", text("museum")),
    ("quoting", quoting("rice", "battery")),
    ("battery-copy", reprint("battery")),
    ("quoting-copy", quoting("rice", "battery").replace("有评论指出", "记者了解到")),
    ("library", text("library")),
]


def judge(uri: str, documents: list[tuple[str, str]], related: bool, batch: int) -> tuple[list, list]:
    """Verdicts of ``documents`` checked in batches in a new namespace, and the keys stored."""
    store = open_store(uri, uuid.uuid4().hex)
    try:
        detector = Detector(store)
        verdicts = []
        for at in range(0, len(documents), batch):
            part = documents[at : at + batch]
            prints = [(key, detector.fingerprint(body)) for key, body in part]
            passages = [passages_of(body) for _, body in part] if related else None
            verdicts += detector.start_many(prints, passages)()
        return verdicts, sorted(r.key for r in store.records())
    finally:
        store.close()


def outcome(verdicts: list) -> list:
    return [(v.status, v.duplicate_of, v.similar_id) for v in verdicts]


@pytest.mark.parametrize("batch", [1, 64])
def test_a_quoting_article_lists_the_quoted_story_and_verdicts_do_not_change(store_uri, batch):
    plain, stored_plain = judge(store_uri, STREAM, False, batch)
    verdicts, stored = judge(store_uri, STREAM, True, batch)
    assert outcome(verdicts) == outcome(plain)
    assert stored == stored_plain  # nothing filed beyond what check-and-add files
    assert all(v.related is None for v in plain)
    by_key = dict(STREAM)
    found = {key: v.related for (key, _), v in zip(STREAM, verdicts)}
    assert [entry["key"] for entry in found["quoting"]] == ["battery"]
    for key, entries in found.items():
        for entry in entries:
            for passage in entry["shared"]:
                assert len(content_chars(passage)) >= 20
                assert content_chars(passage) in content_chars(by_key[key])
                assert content_chars(passage) in content_chars(by_key[entry["key"]])
    quoted = content_chars(max(ARTICLES["battery"], key=len))
    assert found["quoting"][0]["shared"] and all(content_chars(p) in quoted for p in found["quoting"][0]["shared"])
    # A copy of the quoting article lists the quoted story, not its own.
    assert verdicts[4].status == DUPLICATE and [e["key"] for e in found["quoting-copy"]] == ["battery"]
    # Earlier stories do not list later ones; a copy does not list its own story.
    assert found["battery"] == [] and found["museum"] == []
    assert verdicts[3].status == DUPLICATE and "battery" not in [e["key"] for e in found["battery-copy"]]
    assert found["library"] == []


def test_a_story_sharing_only_boilerplate_lists_nothing(store_uri):
    names = list(ARTICLES)
    documents = [(name, f"{text(name)}\n{SIGNATURE}") for name in names]
    for batch in (1, 64):
        verdicts, _ = judge(store_uri, documents, True, batch)
        assert all(v.status == UNIQUE for v in verdicts)
        # Five stories filed the site line: from then on it is boilerplate, shared by nobody.
        assert verdicts[-1].related == []
    # Before that the guard had not seen it yet (a batch is read after all of it was filed).
    assert [e["key"] for e in judge(store_uri, documents, True, 1)[0][1].related] == [names[0]]


def test_a_story_sharing_only_a_site_notice_lists_nothing(store_uri):
    """A disclaimer is not fingerprinted, so it is never filed: no story lists another for it."""
    verdicts, _ = judge(store_uri, [(name, with_disclaimer(name)) for name in ARTICLES], True, 1)
    assert [v.related for v in verdicts] == [[]] * len(ARTICLES)


def test_passages_are_runs_of_whole_clauses_shown_as_the_text_has_them():
    quoted = "今年前三季度全國規模以上工業企業實現利潤總額同比增長百分之十二點五，增速比上半年加快零點三個百分點"
    found = passages_of(f"短句不算。據報道，“{quoted}”。\n另一段話比較短，不算。")
    shown = [found.show(key) for key in found.keys]
    assert quoted in shown  # Traditional and full-width punctuation as written
    assert "據報道，“" + quoted in shown
    assert all(len(content_chars(p)) >= 20 for p in shown)
    assert not any("短句不算" in p for p in shown)


def test_passages_hash_like_the_stored_sentence_keys(store_uri):
    store = open_store(store_uri, uuid.uuid4().hex)
    try:
        detector = Detector(store)
        sentence = max(split_sentences(text("museum")), key=len)
        keys = set(detector.fingerprint(text("museum")).sentence_keys)
        found = passages_of("有媒体此前报道，" + max(ARTICLES["museum"], key=len))
        assert any(found.show(k) and content_chars(found.show(k)) == sentence for k in found.keys if k in keys)
    finally:
        store.close()


def test_dedup_related_writes_the_field_and_passes_bad_lines(tmp_path, store_uri):
    source = tmp_path / "in.jsonl"
    lines = [json.dumps({"id": key, "text": body}, ensure_ascii=False) for key, body in STREAM[:3]]
    source.write_text("\n".join([lines[0], "not json", lines[1], '{"id": "x"}', lines[2]]) + "\n", encoding="utf-8")
    target = tmp_path / "out.jsonl"
    args = [
        "dedup",
        str(source),
        "-o",
        str(target),
        "--store",
        store_uri,
        "--namespace",
        uuid.uuid4().hex,
        "--related",
        "--related-field",
        "see_also",
        "--no-progress",
    ]
    assert main(args) == 0
    written = target.read_text(encoding="utf-8").splitlines()
    assert written[1] == "not json" and written[3] == '{"id": "x"}'
    records = [json.loads(written[i]) for i in (0, 2, 4)]
    assert [r["see_also"] for r in records[:2]] == [[], []]
    assert [e["key"] for e in records[2]["see_also"]] == ["battery"]
    plain = tmp_path / "plain.jsonl"
    assert main(["dedup", str(source), "-o", str(plain), "--store", "memory://", "--no-progress"]) == 0
    assert all("see_also" not in line for line in plain.read_text(encoding="utf-8").splitlines())


def test_dedup_refuses_a_related_field_that_another_field_uses(tmp_path, capsys):
    source = tmp_path / "in.jsonl"
    source.write_text(json.dumps({"id": "a", "text": text("rice")}, ensure_ascii=False) + "\n", encoding="utf-8")
    assert main(["dedup", str(source), "--store", "memory://", "--related", "--related-field", "similar_id"]) == 2
    assert "--related-field" in capsys.readouterr().err


@pytest.mark.parametrize("action", ["drop", "tag"])
@deferred_f_from_coro_f
async def test_pipeline_related_setting_fills_the_configured_field(store_uri, action):
    crawler = get_crawler(
        settings_dict={
            "NEARDUP_STORE": store_uri,
            "NEARDUP_NAMESPACE": uuid.uuid4().hex,
            "NEARDUP_WORKERS": 0,
            "NEARDUP_ACTION": action,
            "NEARDUP_RELATED": True,
            "NEARDUP_RELATED_FIELD": "see_also",
        }
    )
    pipeline = NearDupPipeline.from_crawler(crawler)
    pipeline.open_spider()
    passed = {}
    try:
        for key, body in STREAM:
            try:
                item = await pipeline.process_item({"url": key, "text": body})
            except NearDuplicateItem:
                continue
            pipeline.item_scraped(item)
            passed[key] = item
    finally:
        pipeline.close_spider()
    assert [e["key"] for e in passed["quoting"]["see_also"]] == ["battery"]
    assert passed["battery"]["see_also"] == [] and passed["library"]["see_also"] == []
    if action == "tag":
        assert [e["key"] for e in passed["quoting-copy"]["see_also"]] == ["battery"]
        assert passed["battery-copy"]["duplicate_of"] == "battery"
    else:
        assert "battery-copy" not in passed and "quoting-copy" not in passed


def test_related_field_must_be_a_field_of_its_own():
    from scrapy.settings import Settings

    from scrapy_neardup.crawl.settings import NearDupConfig

    with pytest.raises(ValueError, match="NEARDUP_RELATED_FIELD"):
        NearDupConfig.from_settings(Settings({"NEARDUP_RELATED": True, "NEARDUP_RELATED_FIELD": "url"}))
    with pytest.raises(ValueError, match="NEARDUP_RELATED"):
        NearDupConfig.from_settings(Settings({"NEARDUP_RELATED": "maybe"}))
    assert NearDupConfig.from_settings(Settings({"NEARDUP_RELATED": "1"})).related is True


def test_query_related_lists_the_quoted_story_and_changes_nothing(tmp_path, store_uri):
    source = tmp_path / "in.jsonl"
    source.write_text(
        "\n".join(json.dumps({"id": key, "text": body}, ensure_ascii=False) for key, body in STREAM) + "\n",
        encoding="utf-8",
    )
    namespace = uuid.uuid4().hex
    store_args = ["--store", store_uri, "--namespace", namespace, "--no-progress"]
    assert main(["dedup", str(source), "-o", str(tmp_path / "stored.jsonl"), *store_args]) == 0
    store = open_store(store_uri, namespace)
    before = sorted((r.doc_id, r.key, r.sentence_keys) for r in store.records())
    store.close()
    target = tmp_path / "out.jsonl"
    assert main(["query", str(source), "-o", str(target), "--related", *store_args]) == 0
    found = {r["id"]: r["related"] for r in map(json.loads, target.read_text(encoding="utf-8").splitlines())}
    assert [e["key"] for e in found["quoting"]] == ["battery"]
    assert [e["key"] for e in found["quoting-copy"]] == ["battery"]  # its own story is "quoting"
    assert found["battery-copy"] == [] and found["museum"] == []
    store = open_store(store_uri, namespace)
    assert sorted((r.doc_id, r.key, r.sentence_keys) for r in store.records()) == before
    store.close()
    assert main(["query", str(source), "--related", "--related-field", "similar", *store_args]) == 2


def test_a_sentence_of_many_clauses_gives_a_bounded_number_of_passages():
    from scrapy_neardup.fingerprints.passages import MAX_CLAUSES, MAX_PASSAGES

    clauses = 100
    found = passages_of("，".join(f"第{i}号项目已经完成验收" for i in range(clauses)) + "。")
    assert clauses < len(found.keys) <= clauses * MAX_CLAUSES
    many = passages_of("，".join(f"第{i}号项目已经完成验收" for i in range(5 * clauses)) + "。")
    assert len(many.keys) == MAX_PASSAGES
