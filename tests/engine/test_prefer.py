"""The policies of NEARDUP_PREFER, and the story fields of a stored record."""

import time

import pytest
from support.corpus import text

from scrapy_neardup import Detector, open_store
from scrapy_neardup.engine.prefer import Copy, PreferSources, policy_from, prefer_longest, source_of
from scrapy_neardup.stores.record import _HEAD, _PACKED_FLAG, DocRecord


def test_longest_follows_the_engines_judgement_not_a_percentage():
    stored = Copy("https://portal.example/1", 1000, "portal.example")
    # One added sentence of the same story is enough; length alone is not.
    assert prefer_longest(Copy("https://a.example/1", 1020, "a.example", extends=True), stored)
    assert not prefer_longest(Copy("https://a.example/1", 1500, "a.example"), stored)
    assert not prefer_longest(stored, Copy("https://a.example/1", 1150, "a.example", extends=True))


def test_sources_rank_domains_with_their_subdomains_and_unlisted_last():
    ranked = PreferSources(["xinhuanet.com", "www.People.com.cn"])
    assert [ranked.rank(s) for s in ("xinhuanet.com", "news.xinhuanet.com", "people.com.cn", "sina.com.cn")] == [
        0,
        0,
        1,
        2,
    ]
    assert ranked.rank("notxinhuanet.com") == 2  # a suffix of the name is not a subdomain
    people, sina = Copy("k", 10, "people.com.cn"), Copy("k", 10, "sina.com.cn")
    assert ranked(people, sina) and not ranked(sina, people) and not ranked(people, people)


def test_the_source_of_a_copy_is_its_field_else_its_hosts_name():
    assert source_of("https://WWW.Xinhuanet.com/politics/1.htm") == "xinhuanet.com"
    assert source_of("https://www.xinhuanet.com/1", " People.com.cn ") == "people.com.cn"
    assert source_of("article-17") == "" and source_of("http://[bad") == ""


def test_policy_names_and_callables():
    assert policy_from("first") is None and policy_from("LONGEST") is prefer_longest
    assert policy_from("source", ["a.example"]).sources == ["a.example"]
    mine = lambda new, stored: new.source == "a.example"  # noqa: E731
    assert policy_from(mine) is mine
    assert policy_from("scrapy_neardup.engine.prefer.prefer_longest") is prefer_longest
    for bad in ("", "newest", 3):
        with pytest.raises(ValueError, match="must be one of first, longest, source"):
            policy_from(bad)


def record(**story) -> DocRecord:
    fp = Detector(open_store("memory://")).fingerprint(text("rice"))
    return DocRecord(7, "https://a.example/rice", time.time(), fp.simhash, fp.sketch, fp.chars, 1, [11, 12], **story)


def test_a_record_without_story_fields_leaves_them_out():
    plain = record()
    data = plain.to_bytes()
    at = _HEAD.size + 8 * len(plain.sentence_keys)
    key_length = int.from_bytes(data[at : at + 2], "little")
    assert key_length & ~_PACKED_FLAG == len(plain.key)  # the story fields' flag bit is clear
    assert data[at + 2 : at + 2 + len(plain.key)] == plain.key.encode()
    back = DocRecord.from_bytes(data)
    assert (back.key, back.state, back.story, back.replaces, back.source) == (plain.key, 1, 0, 0, "")
    assert back.to_bytes() == data and plain.story_id == 7


def test_story_fields_read_back():
    replacing = record(story=3, replaces=5, source="滨江日报" * 80)  # the source is clipped at 255 bytes
    back = DocRecord.from_bytes(replacing.to_bytes())
    assert (back.story, back.replaces, back.story_id) == (3, 5, 3)
    assert back.source == ("滨江日报" * 80)[:85] and back.sketch.size == replacing.sketch.size
    assert list(back.sketch.hashes) == list(replacing.sketch.hashes) and back.sentence_keys == [11, 12]


def test_a_failing_policy_keeps_the_stored_copy(caplog):
    def broken(new, stored):
        raise KeyError("site")

    with open_store("memory://") as store:
        detector = Detector(store, prefer=broken)
        detector.check("https://portal.example/rice", "\n".join(text("rice").split("\n")[:3]))
        for key in ("https://a.example/rice", "https://b.example/rice"):
            assert detector.check(key, text("rice")).duplicate_of == "https://portal.example/rice"
    assert sum("NEARDUP_PREFER policy" in r.getMessage() for r in caplog.records) == 1
