"""A stored record: the sketch's hashes packed, and records of the layout before it read as written."""

import struct

import plyvel
from support.corpus import ARTICLES, reprint, text

from scrapy_neardup import Detector, open_store
from scrapy_neardup.fingerprints.sketch import Sketch
from scrapy_neardup.stores.record import COMMITTED, PENDING, DocRecord, passed_over


def old_layout(record: DocRecord) -> bytes:
    """A record's bytes as stores wrote them before the sketch's hashes were packed: the same
    head, sentence keys, flags, key, story fields, titles and story words, then each hash in 4
    bytes and (with story words) the places."""
    key = record.key.encode()
    story = titles = words = places = b""
    if record.story or record.replaces or record.source:
        source = record.source.encode()
        story = struct.pack("<QQB", record.story, record.replaces, len(source)) + source
    if record.title or record.declared:
        titles = struct.pack("<QQ", record.title, record.declared)
    found = record.story_words
    if found is not None:
        words = b"".join(
            [
                struct.pack("<BBQH", len(found.words), len(found.figures), record.digest, found.datelines),
                found.words.astype("<u4").tobytes(),
                found.idf.tobytes(),
                found.spread.astype("<u2").tobytes(),
                found.figures.astype("<u4").tobytes(),
            ]
        )
        places = record.sketch.places.tobytes()
    flags = (0x8000 if story else 0) | (0x4000 if words else 0) | (0x2000 if titles else 0)
    keys = record.sentence_keys
    sketch = record.sketch
    head = (record.doc_id, record.time, record.simhash, sketch.size, record.chars, record.state, len(keys))
    return b"".join(
        [
            struct.pack("<QdQIIBB", *head),
            struct.pack(f"<{len(keys)}Q", *keys),
            struct.pack("<H", len(key) | flags) + key + story + titles + words,
            sketch.hashes.astype("<u4").tobytes() + places,
        ]
    )


def fields(record: DocRecord) -> tuple:
    found = record.story_words
    words = None if found is None else [a.tolist() for a in (found.words, found.idf, found.spread, found.figures)]
    places = None if record.sketch.places is None else record.sketch.places.tolist()
    return (
        (record.doc_id, record.key, record.time, record.simhash, record.chars, record.state, record.sentence_keys),
        (record.story, record.replaces, record.source, record.digest, record.title, record.declared),
        (record.sketch.hashes.tolist(), record.sketch.size, places, words, found and found.datelines),
    )


def records() -> list[DocRecord]:
    detector = Detector(open_store("memory://"))
    made = []
    for number, name in enumerate(ARTICLES, 1):
        fp = detector.fingerprint("浙江日报讯 " + text(name))
        placed = number != 2  # a record of a version before story words: no places, no digest
        made.append(
            DocRecord(
                number,
                f"https://a.example/{name}",
                1_700_000_000.25 + number,
                fp.simhash,
                fp.sketch if placed else Sketch(fp.sketch.hashes, fp.sketch.size),
                fp.chars,
                PENDING if number % 2 else COMMITTED,
                [number, 2**64 - number],
                story=number if number % 3 == 0 else 0,
                source="滨江日报" if number % 3 == 0 else "",
                story_words=fp.story_words if placed else None,
                digest=fp.digest if placed else 0,
                title=fp.title or number,
                declared=number if number % 2 else 0,
            )
        )
    empty = detector.fingerprint("")
    made.append(DocRecord(99, "empty", 1.0, 0, empty.sketch, 0, story_words=empty.story_words))
    return made


def test_records_of_the_layout_before_read_as_they_were_written():
    for record in records():
        old = old_layout(record)
        read = DocRecord.from_bytes(old)
        assert fields(read) == fields(record), record.key
        new = read.to_bytes()
        assert fields(DocRecord.from_bytes(new)) == fields(record), record.key
        if len(record.sketch.hashes) == 128:  # at least half a byte a hash less (a byte in news texts)
            assert len(new) <= len(old) - 64, (record.key, len(old), len(new))


def test_a_records_story_words_are_read_from_its_bytes_when_first_read():
    """Most records read as candidates are never judged by the one-story rule: their story
    words stay in the record's bytes until read, then are the ones written, and a record
    written again from one never read carries them whole."""
    for record in records():
        if record.story_words is None:
            continue
        read = DocRecord.from_bytes(record.to_bytes())
        assert read.story_words.datelines == record.story_words.datelines  # from the record's head
        assert read.story_words._found is None, record.key
        assert fields(read) == fields(record), record.key
        assert read.story_words._found is not None
        unread = DocRecord.from_bytes(record.to_bytes())
        assert fields(DocRecord.from_bytes(unread.to_bytes())) == fields(record), record.key


def test_the_copy_a_record_replaces_is_read_from_its_bytes_alone():
    import dataclasses

    for record in records():
        for replaces in (0, 2**40 + record.doc_id):
            replacing = dataclasses.replace(record, replaces=replaces)
            for layout in (replacing.to_bytes(), old_layout(replacing)):
                assert DocRecord.replaces_of(layout) == replaces, record.key


def test_a_leveldb_store_of_records_of_the_layout_before_finds_its_stories(tmp_path):
    """Records rewritten in the layout before, in a real LevelDB store: reopened, they are read,
    reprints of them are found, and records written now stand beside them."""
    path = tmp_path / "db"
    names = list(ARTICLES)
    with open_store(f"leveldb://{path}") as store:
        detector = Detector(store)
        for name in names[:4]:
            assert detector.check(name, text(name)).duplicate_of is None
    db = plyvel.DB(str(path))
    space = db.prefixed_db(b"ns:default\x00")
    rewritten = 0
    for key, value in list(space.iterator(prefix=b"d")):
        space.put(key, old_layout(DocRecord.from_bytes(value)))
        rewritten += 1
    db.close()
    assert rewritten == 4
    with open_store(f"leveldb://{path}") as store:
        detector = Detector(store)
        assert sorted(record.key for record in store.records()) == sorted(names[:4])
        for name in names[:4]:
            assert detector.check(f"copy-{name}", reprint(name)).duplicate_of == name
        for name in names[4:]:
            assert detector.check(name, text(name)).duplicate_of is None
            assert detector.check(f"copy-{name}", reprint(name)).duplicate_of == name
        assert sorted(record.key for record in store.records()) == sorted(names)
    db = plyvel.DB(str(path))
    layouts = {}
    for _, value in db.prefixed_db(b"ns:default\x00").iterator(prefix=b"d"):
        record = DocRecord.from_bytes(value)
        layouts[record.key] = "old" if value == old_layout(record) else "packed"
    db.close()
    assert layouts == {name: "old" if name in names[:4] else "packed" for name in names}


def test_a_record_is_passed_over_undecoded_only_when_the_verdict_rule_would_pass_it_over():
    """A candidate found through a bucket hash shared by chance shares no key and is far in
    SimHash: it is left undecoded. Each other reason to read it keeps it."""
    import dataclasses

    distance = 3
    for record in records():
        committed = dataclasses.replace(record, state=COMMITTED, story=0, replaces=0, source="")
        key = b"https://b.example/other"
        far = committed.simhash ^ 0b1111
        assert passed_over(committed.to_bytes(), {12345}, far, distance, key), record.key
        reasons = {
            "shares a sentence key": (committed, {12345, *committed.sentence_keys[-1:]}, far, key),
            "near in SimHash": (committed, {12345}, committed.simhash ^ 0b111, key),
            "stored under the same key": (committed, {12345}, far, committed.key.encode()),
            "pending": (dataclasses.replace(committed, state=PENDING), {12345}, far, key),
            "replacing a copy": (dataclasses.replace(committed, replaces=7), {12345}, far, key),
            "a copy that replaced one": (dataclasses.replace(committed, story=7), {12345}, far, key),
        }
        for reason, (stored, keys, simhash, own_key) in reasons.items():
            if reason == "shares a sentence key" and not committed.sentence_keys:
                continue
            assert not passed_over(stored.to_bytes(), keys, simhash, distance, own_key), (record.key, reason)


def test_a_leveldb_check_decodes_only_the_candidates_its_verdict_can_use(tmp_path):
    """In a real store: of the ids a check reads, one unrelated (as a bucket hash shared by
    chance gives it) is left out, the reprint's original is kept, and the verdict is the same."""
    names = list(ARTICLES)
    with open_store(f"leveldb://{tmp_path / 'db'}") as store:
        detector = Detector(store)
        ids = {name: detector.check(name, text(name)).doc_id for name in names}
        fp = detector.fingerprint(reprint(names[0]))
        record, probe, _ = detector._ask("copy", fp, False)
        read = store._candidate_records({ids[names[0]], ids[names[1]]}, probe, record)
        assert [found.key for found in read] == [names[0]]
        assert detector.check("copy", reprint(names[0])).duplicate_of == names[0]
