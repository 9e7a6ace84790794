"""The C kernel computes exactly the fingerprints of the numpy path, on every kind of text.

Skipped only where the extension was not built (no compiler); CI builds it.
"""

import copy
import os
import pickle
import random

import numpy as np
import pytest
import xxhash
from support.corpus import ARTICLES, reprint, text

from scrapy_neardup.fingerprints.fingerprint import WEIGHT_SCALE, Fingerprinter, Recipe
from scrapy_neardup.fingerprints.kernel import compiled_kernel_available, kernel
from scrapy_neardup.fingerprints.text import fold_codes

pytestmark = pytest.mark.skipif(
    not compiled_kernel_available() and not os.environ.get("NEARDUP_REQUIRE_KERNEL"),
    reason="the C kernel was not built (no compiler at install time)",
)


def fields(fingerprint):
    return (
        fingerprint.sentence_keys,
        fingerprint.simhash,
        fingerprint.sketch.hashes.tolist(),
        fingerprint.sketch.size,
        fingerprint.chars,
        fingerprint.tokens,
        fingerprint.sketch_keys,
    )


def random_text(rng: random.Random, size: int) -> str:
    """Chinese, Latin, digits, dots, sentence ends, spaces, invisible and odd characters."""
    pieces = [
        "".join(rng.choice("今天市政府发布通知要求各区加强防汛工作确保群众安全") for _ in range(rng.randint(1, 30))),
        rng.choice(["。", "！", "？", "；", "…", "\n", ".", ". ", "!", "?", ";", "，", "、", " "]),
        rng.choice(["3.5", "www.example.com", "Done.Next", "ＡＢＣ１２３", "Ｈｅｌｌｏ", "e.g."]),
        rng.choice(["\u200b", "\u00ad", "\ufeff", "\t", "\r\n", "\x00", "\u3000"]),
        rng.choice(["ﬁnance", "㈠", "é", "e\u0301", "𝐀𝐁", "𠀀𠀁𠀂𠀃𠀄𠀅𠀆𠀇", "😀", "\ud800"]),
        "".join(chr(rng.randint(0x20, 0x2FFF)) for _ in range(rng.randint(0, 5))),
    ]
    weights = [40, 10, 2, 2, 1, 2]
    return "".join(rng.choices(pieces, weights)[0] for _ in range(size))


def test_xxh64_matches_the_xxhash_package():
    rng = random.Random(5)
    for length in list(range(0, 70)) + [rng.randint(70, 5000) for _ in range(30)]:
        data = bytes(rng.getrandbits(8) for _ in range(length))
        assert kernel.xxh64(data) == xxhash.xxh64_intdigest(data), length


def test_fold_matches_the_numpy_path():
    rng = random.Random(11)
    samples = [text(name) for name in ARTICLES] + [random_text(rng, rng.randint(0, 300)) for _ in range(300)]
    for sample in samples:
        assert fold_codes(sample).tolist() == fold_codes(sample, compiled=False).tolist(), sample


def test_fold_of_every_str_kind_with_dropped_characters_anywhere_is_the_numpy_path():
    """The kernel folds in one loop for each kind of str (Latin-1, BMP, astral), writing each
    character and then over a dropped one: texts of each kind, dropped characters first,
    last, in runs and alone, give numpy's code points; the kernel leaves to the exact path
    only texts with a character beyond the BMP or one that folds with its neighbours."""
    from scrapy_neardup.fingerprints.text import text_tables

    table = text_tables().fold
    alphabets = {
        "latin-1": "aZ09 .\t\x00\x7f\xad\xa0éß",  # \xad dropped
        "bmp": "今天。Ａａ\u200b\ufeff\u00ad\u2028\u3000x",  # \u200b, \ufeff, \u00ad dropped
        "astral": "今\U00020000😀𝐀\u200b",
        "slow": "ﬁ今e\u0301\u200b½",  # ﬁ, \u0301 and ½ fold with their neighbours or to several
    }
    rng = random.Random(13)
    for name, alphabet in alphabets.items():
        for size in [0, 1, 2, 3, 5, 50] + [rng.randint(0, 300) for _ in range(60)]:
            sample = "".join(rng.choices(alphabet, k=size))
            assert fold_codes(sample).tolist() == fold_codes(sample, compiled=False).tolist(), (name, sample)
            exact = any(ord(char) > 0xFFFF or char in "ﬁ\u0301½" for char in sample)
            assert (kernel.fold(sample, table) is None) == exact, (name, sample)


@pytest.mark.parametrize(
    "recipe",
    [
        Recipe(),
        Recipe(simhash_sentences=0),
        Recipe(nshash_n=1, sketch_size=16, shingle_width=2),
        Recipe(simhash_sentences=2, shingle_width=9, sketch_keys=16),
        Recipe(sketch_keys=0),
    ],
)
def test_fingerprints_match_the_numpy_path(recipe):
    compiled = Fingerprinter(recipe)
    numpy_only = Fingerprinter(recipe, compiled=False)
    assert compiled.compiled and not numpy_only.compiled
    rng = random.Random(recipe.shingle_width)
    samples = ["", "。", "短句。", "a" * 3, "\ud800" * 20]
    for name in ARTICLES:
        samples += [text(name), reprint(name, cut=0.75, edits=3)]
    samples += [random_text(rng, rng.randint(0, 400)) for _ in range(200)]
    for sample in samples:
        assert fields(compiled.fingerprint(sample)) == fields(numpy_only.fingerprint(sample)), sample


def test_weighing_counts_repeated_and_unknown_words_like_the_numpy_path():
    fingerprinter = Fingerprinter()
    features = fingerprinter.features
    common = list(list(features._row)[:3000:7])
    rng = random.Random(2)
    for _ in range(50):
        tokens = [rng.choice(common) for _ in range(rng.randint(0, 300))]
        tokens += ["鑫淼犇骉", "，", " ", "\n", "2026", "x" * 300, "\ud800"] * rng.randint(0, 3)
        rng.shuffle(tokens)
        assert features.simhash(tokens) == features.simhash(tokens, compiled=False)


def test_weighing_lines_as_the_cache_keeps_them_is_weighing_their_tokens():
    """The SimHash of lines whose tokens are joined by the cache's separator (the C kernel
    splits them) is that of the token list, compiled or not: empty lines and empty tokens
    count for nothing, long and odd tokens as themselves."""
    from scrapy_neardup.fingerprints.segment import SEPARATOR

    fingerprinter = Fingerprinter()
    features = fingerprinter.features
    common = list(list(features._row)[:3000:7])
    rng = random.Random(3)
    for _ in range(60):
        lines = []
        for _ in range(rng.randint(0, 6)):
            tokens = [rng.choice(common) for _ in range(rng.randint(0, 40))]
            tokens += ["鑫淼犇骉", "，", " ", "2026", "x" * 300, "\ud800", "𠀀"] * rng.randint(0, 2)
            rng.shuffle(tokens)
            lines.append(SEPARATOR.join(tokens))
        tokens = [token for line in lines for token in line.split(SEPARATOR) if token]
        expected = features.simhash(tokens, compiled=False)
        assert features.simhash_of_lines(lines) == features.simhash_of_lines(lines, compiled=False) == expected
        assert features.simhash(tokens) == expected
    for body in [text(name) for name in ARTICLES] + [random_text(rng, 400).replace("\ud800", "") for _ in range(50)]:
        cut = fingerprinter.cut(body)
        assert features.simhash_of_lines(fingerprinter.cut_lines(body)) == features.simhash(cut, compiled=False)


def test_weighing_lines_of_every_str_kind_and_token_length_is_the_numpy_path():
    """The kernel splits each line in one loop for its kind of str (Latin-1, BMP, astral),
    hashes short tokens by an inline xxh64 and long ones by the whole: lines of each kind, runs
    of separators (empty tokens) at either end and between, tokens of 1 to 40 bytes of UTF-8
    around xxh64's 32-byte stride, and weights on either side of the rounding to 0 give the
    numpy path's SimHash and count."""
    from scrapy_neardup.fingerprints.segment import SEPARATOR

    features = Fingerprinter().features
    common = list(list(features._row)[:3000:7])
    alphabets = ["abcxyz0129", "éüß°±abc", "今天市政府发布通知", "é今a1", "𠀀𠀁😀今a", "\ud800\udfff今"]
    rng = random.Random(9)
    for _ in range(300):
        lines = []
        for _ in range(rng.randint(0, 5)):
            alphabet = rng.choice(alphabets)
            tokens = ["".join(rng.choices(alphabet, k=rng.choice([1, 2, 3, 8, 10, 11, 16, 31, 32, 33, 40])))]
            tokens += [rng.choice(common) for _ in range(rng.randint(0, 20))] + [""] * rng.randint(0, 3)
            tokens = [rng.choice(tokens) for _ in range(rng.randint(0, 30))]
            lines.append(SEPARATOR * rng.randint(0, 2) + SEPARATOR.join(tokens))
        expected = features.simhash_of_lines(lines, compiled=False)
        assert features.simhash_of_lines(lines) == expected, lines
    rare = ["鑫淼犇骉", "2026x", "𠀀𠀁"]
    for rare_idf in (0.5 / WEIGHT_SCALE, np.nextafter(0.5 / WEIGHT_SCALE, 0), 0.25 / WEIGHT_SCALE, 0.0, -1.0):
        exact = copy.copy(features)
        exact.rare_idf = float(rare_idf)  # idf * 1 * scale + 0.5 at, just under and under 1
        for tokens in ([], rare, rare * 2 + common[:5], rare + rare[:1] + common[5:8]):
            assert exact.simhash(tokens) == exact.simhash(tokens, compiled=False), (rare_idf, tokens)


def test_sketch_places_of_long_and_repetitive_texts_are_the_numpy_ones():
    """The kernel's sketch (sorted by radix) and the place of each hash's first shingle (found
    by halving) are numpy's, for texts of fewer and of many more shingles than the sketch keeps,
    and for texts repeating their phrases."""
    from scrapy_neardup.fingerprints.sketch import sketch_and_keys
    from scrapy_neardup.fingerprints.text import MIN_SENTENCE_CHARS, text_tables

    rng = random.Random(11)
    tables = text_tables()
    samples = [random_text(rng, size) for size in (1, 3, 20, 90, 400, 3000)]
    samples += [text(name) * 3 for name in ARTICLES] + ["今天天气很好。" * 200, "甲乙丙丁戊" * 50 + "己"]
    for sample in samples:
        codes = fold_codes(sample)
        for size in (16, 128, 4096):
            _, _, hashes, distinct, _, keys, places, content = kernel.parts(
                codes, tables.ends, tables.content, MIN_SENTENCE_CHARS, 3, 10, size, 5, 16
            )
            sketch, expected_keys = sketch_and_keys(np.frombuffer(content, dtype=np.uint32), size, 5, 16)
            assert np.frombuffer(hashes, dtype="<u4").tolist() == sketch.hashes.tolist()
            assert distinct == sketch.size and keys == expected_keys[: len(keys)]
            assert list(places) == sketch.places.tolist()


def shared_top_bits(length: int, width: int, bits: int) -> str:
    """Han characters whose every shingle of ``width`` has a mixed hash with its top ``bits``
    bits 0: shingles that a sort by the top bits cannot tell apart, each chosen from the
    characters that make one."""
    from scrapy_neardup.fingerprints.sketch import mixed_shingles

    pool = np.arange(0x4E00, 0x9FA6, dtype=np.uint32)
    codes = [0x4E00 + i for i in range(width - 1)]
    while len(codes) < length:
        shingles = np.repeat(np.array([codes[len(codes) - width + 1 :]], dtype=np.uint32), len(pool), axis=0)
        tops = mixed_shingles(np.concatenate([shingles, pool[:, None]], axis=1).ravel(), width)[::width]
        codes.append(int(pool[np.argmin(tops >> np.uint64(64 - bits))]))
    return "".join(map(chr, codes))


def test_sketches_of_short_repeated_distinct_and_colliding_texts_are_the_numpy_ones():
    """The kernel's content, sketch, count of distinct shingles, sketch keys and places are
    numpy's for texts shorter than a shingle (0 to 6 content characters), texts of one
    repeated shingle, texts of all distinct shingles, and texts whose shingles share their top
    bits (hashes colliding where a sort by buckets looks first), at every shingle width."""
    from scrapy_neardup.fingerprints.sketch import sketch_and_keys
    from scrapy_neardup.fingerprints.text import MIN_SENTENCE_CHARS, sentences_of, text_tables

    tables = text_tables()
    rng = random.Random(27)
    han = [chr(code) for code in range(0x4E00, 0x9FA6)]
    samples = ["", "，", "\n。\n"] + ["".join(rng.sample(han, size)) for size in range(1, 7)]
    samples += ["今", "今今今今今今今", "今天" * 800, "甲乙丙丁戊" * 300, "。" + "雨" * 3000 + "。"]
    samples += ["".join(rng.sample(han, 3000)), "，".join(rng.sample(han, 200))]  # every shingle distinct
    samples += [shared_top_bits(600, 5, 8), shared_top_bits(300, 5, 12), shared_top_bits(200, 2, 12)]
    for sample in samples:
        codes = fold_codes(sample)
        expected_content = sentences_of(codes).content
        for width in (1, 2, 5, 9, 16):
            for size, key_count in ((16, 0), (128, 4), (4096, 16)):
                _, _, hashes, distinct, chars, keys, places, content = kernel.parts(
                    codes, tables.ends, tables.content, MIN_SENTENCE_CHARS, 3, 10, size, width, key_count
                )
                assert np.frombuffer(content, dtype=np.uint32).tolist() == expected_content.tolist()
                assert chars == len(expected_content)
                sketch, expected_keys = sketch_and_keys(expected_content, size, width, key_count)
                assert np.frombuffer(hashes, dtype="<u4").tolist() == sketch.hashes.tolist(), (sample, width)
                assert distinct == sketch.size and keys == expected_keys, (sample, width)
                assert list(places) == sketch.places.tolist(), (sample, width)


def test_tables_of_the_wrong_size_are_refused():
    with pytest.raises(ValueError):
        kernel.parts(
            np.zeros(3, dtype=np.uint32), np.zeros(10, dtype=bool), np.zeros(10, dtype=bool), 8, 5, 10, 128, 5, 4
        )
    with pytest.raises(ValueError):
        kernel.fold("abc", np.zeros(10, dtype=np.uint32))


def test_packed_sketch_hashes_match_the_numpy_path():
    """The kernel writes a record's packed sketch hashes byte for byte as numpy does, and reads
    back what either wrote; both refuse unsorted hashes, and the kernel a packed sketch cut short."""
    from scrapy_neardup.fingerprints.sketch import packed_hashes, unpacked_hashes

    rng = np.random.default_rng(11)
    cases = [[], [0], [2**32 - 1], [0, 2**32 - 1], list(range(128)), list(range(2**32 - 128, 2**32)), [5, 5, 7]]
    for count in (1, 2, 3, 16, 127, 128, 129, 1000, 4096):
        for top in (2**8, 2**20, 2**28, 2**32):
            cases.append(sorted(rng.choice(top, size=min(count, top), replace=False).tolist()))
    for hashes in cases:
        array = np.array(hashes, dtype=np.uint32)
        data = kernel.pack_hashes(array)
        assert data == packed_hashes(array), hashes
        record = b"head" + data + b"places"
        assert np.frombuffer(kernel.unpack_hashes(record, 4, len(record) - 6), "<u4").tolist() == hashes
        assert unpacked_hashes(record, 4, len(record) - 6).tolist() == hashes
    for pack in (kernel.pack_hashes, packed_hashes):
        with pytest.raises(ValueError, match="not sorted"):
            pack(np.array([3, 2], dtype=np.uint32))
    with pytest.raises(ValueError, match="cut short"):
        kernel.unpack_hashes(data[:-1], 0, len(data) - 1)
    with pytest.raises(ValueError, match="cut short"):
        kernel.unpack_hashes(data, 0, 2)


def test_sketch_overlap_matches_the_numpy_path():
    from scrapy_neardup.fingerprints.sketch import overlap

    rng = np.random.default_rng(3)
    for _ in range(500):
        pool = rng.choice(2**32, size=int(rng.integers(1, 400)), replace=False).astype(np.uint32)
        a = np.sort(rng.choice(pool, size=int(rng.integers(1, min(128, len(pool)) + 1)), replace=False))
        b = np.sort(rng.choice(pool, size=int(rng.integers(1, min(128, len(pool)) + 1)), replace=False))
        assert kernel.overlap(a, b) == overlap(a, b)
        assert kernel.overlap(b, a) == overlap(b, a)


def test_bucket_index_probes_match_the_python_loop_and_a_plain_dict():
    """Random adds and removes, with growth, run through the C kernel and the Python loop on
    tables of their own: the tables stay byte-equal and both answer like a dict of lists."""
    from scrapy_neardup.stores.leveldb.bucketindex import BucketIndex

    rng = np.random.default_rng(5)
    pool = [bytes(rng.integers(0, 256, size=int(rng.integers(1, 12)), dtype=np.uint8)) for _ in range(3000)]
    compiled, python = BucketIndex(), BucketIndex(compiled=False)
    assert compiled.compiled and not python.compiled
    model: dict[bytes, set[int]] = {}
    filed: dict[int, list[bytes]] = {}
    for doc_id in range(1, 2500):
        buckets = list(dict.fromkeys(pool[i] for i in rng.integers(0, len(pool), size=8)))
        for index in (compiled, python):
            index.add(buckets, doc_id)
        filed[doc_id] = buckets
        for bucket in buckets:
            model.setdefault(bucket, set()).add(doc_id)
        if rng.random() < 0.3:  # remove an earlier document
            gone = int(rng.choice(list(filed)))
            for index in (compiled, python):
                index.remove(filed[gone], gone)
            for bucket in filed.pop(gone):
                model[bucket].discard(gone)
    assert compiled.slots > 4096  # it grew
    assert compiled.table == python.table and compiled.entries == python.entries
    assert compiled.entries == sum(len(ids) for ids in model.values())
    wanted = [sorted(model.get(bucket, ()))[:5] for bucket in pool]
    assert compiled.members_each(pool, 5) == wanted
    assert python.members_each(pool, 5) == wanted
    with pytest.raises(TypeError):
        kernel.index_find(bytearray(8 * 16), ["not bytes"], 5)
    with pytest.raises(ValueError):
        kernel.index_add(bytearray(8 * 3), [b"x"], 1, 10)  # not a power of two of slots
    with pytest.raises(ValueError):
        kernel.index_add(bytearray(8 * 16), [b"x"], 0, 10)  # id 0 marks an empty slot


def test_story_words_figures_datelines_digest_and_places_are_the_same_compiled_or_not():
    """What the one-story rule reads comes out the same from the C kernel and from numpy."""
    from support.samestory_texts import bridge, letter, roundup, weather

    texts = [text(n) for n in ARTICLES] + [reprint(n) for n in ARTICLES]
    texts += [bridge(), letter(), roundup(), weather("滨海", 12, 8, 15, 3, 40, 62)]
    texts.append(text("rice") + "\n欢迎关注a3f9c21-77b0澜江网官方账号，共有3200户，详见lj88.example/n2024")
    rng = random.Random(8)
    texts += [random_text(rng, rng.randint(0, 600)) for _ in range(60)]
    texts.append("新华社北京1月12日电 " + text("rice") + "\n本报讯 " + text("museum"))
    compiled, plain = Fingerprinter(compiled=True), Fingerprinter(compiled=False)
    for body in texts:
        one, other = compiled.fingerprint(body), plain.fingerprint(body)
        for name in ("words", "idf", "spread", "figures"):
            assert getattr(one.story_words, name).tolist() == getattr(other.story_words, name).tolist(), name
        assert one.story_words.datelines == other.story_words.datelines
        assert one.digest == other.digest and one.sketch.places.tolist() == other.sketch.places.tolist()
    assert bin(compiled.fingerprint(texts[-1]).story_words.datelines).count("1") == 2


def test_story_words_come_from_a_kernel_that_probes_the_pair_table_as_it_is_laid_out():
    """The built kernel probes the pair table as storywords lays it out, so story_words_of uses
    it; a kernel of another layout (built from an older source) would not be used."""
    from scrapy_neardup.fingerprints import storywords

    assert kernel.PAIR_SLOTS_LAYOUT == storywords.PAIR_SLOTS_LAYOUT
    assert storywords.KERNEL_READS_PAIR_SLOTS


def test_story_words_of_edge_texts_are_the_numpy_ones():
    """The kernel's story words, IDF bytes, spreads and figures are numpy's for texts of 0 to 3
    characters, pairs repeated past the last term-frequency factor, every pair distinct, pairs
    broken by function characters, characters at the ends of the Chinese ranges and beyond the
    Basic Multilingual Plane (whose low 16 bits are a function character's), pairs of the IDF
    table and not, and runs of digits at a text's ends, long, dated and joined to letters. The
    figures counted alone (a text whose words the rule does not read) are those too."""
    from scrapy_neardup.fingerprints.storywords import FUNCTION_CHARACTERS, figures_only, story_words_of
    from scrapy_neardup.fingerprints.text import sentences_of

    rng = random.Random(15)
    han = [chr(code) for code in range(0x4E00, 0x9FA6)]
    edges = "\u33ff\u3400\u4dbf\u4dc0\u4dff\u4e00\u9fff\ua000" + chr(0x20000 + ord("的")) + chr(0x10000 + ord("国"))
    samples = ["", "中", "中国", "中国中国", "的的的的", "中国" * 5000, "中的国" * 300, "".join(rng.sample(han, 4000))]
    samples += ["".join(rng.choice(edges) for _ in range(400)), "中" + edges * 30 + "国"]
    samples += ["".join(rng.choice("中国人民政府经济发展" + FUNCTION_CHARACTERS) for _ in range(2000))]
    samples += [text(name) + "2026年1月5日，3200户，第12期，A3B4，12.5%" for name in ARTICLES]
    samples += ["7", "12中国34", "中国56", "a1中国1a2", "1" * 100 + "中" + "2" * 70, "3年4月5日6"]  # digits at the ends
    samples.append("、".join(f"{rng.randint(0, 10**6)}户" for _ in range(60)))  # more figures than are kept
    for sample in samples:
        content = sentences_of(fold_codes(sample)).content
        one, other = story_words_of(content), story_words_of(content, compiled=False)
        for name in ("words", "idf", "spread", "figures"):
            assert getattr(one, name).tolist() == getattr(other, name).tolist(), (name, sample[:40])
        assert figures_only(content).tolist() == figures_only(content, compiled=False).tolist() == one.figures.tolist()


def test_story_words_are_made_when_first_read_and_travel_made():
    """A fingerprint's story words wait for their first reader (most queries have none), then
    are those numpy makes at once; a pickled or copied fingerprint (a crawl worker's) carries
    them made."""
    body = "新华社北京1月12日电 " + text("rice") + "\n本报讯 " + text("museum")
    made = Fingerprinter(compiled=False).fingerprint(body).story_words
    for travel in (lambda fp: pickle.loads(pickle.dumps(fp)), copy.deepcopy, lambda fp: fp):
        fingerprint = Fingerprinter(compiled=True).fingerprint(body)
        assert fingerprint.story_words._found is None  # not made yet
        arrived = travel(fingerprint)
        for name in ("words", "idf", "spread", "figures"):
            assert getattr(arrived.story_words, name).tolist() == getattr(made, name).tolist(), name
        assert arrived.story_words.datelines == made.datelines and bin(made.datelines).count("1") == 2
        assert len(made.words) > 5
    # The datelines are looked for apart, when read: most judgements never read them.
    words_first = Fingerprinter(compiled=True).fingerprint(body).story_words
    assert words_first.words.tolist() == made.words.tolist() and words_first._datelines is None
    assert words_first.datelines == made.datelines and words_first._make is words_first._date is None
    datelines_first = Fingerprinter(compiled=True).fingerprint(body).story_words
    assert datelines_first.datelines == made.datelines and datelines_first._found is None
    # Figures read before the words are counted alone: a reprint's judgement reads no words.
    assert datelines_first.figures.tolist() == made.figures.tolist() and datelines_first._found is None
    assert datelines_first.words.tolist() == made.words.tolist()
    assert datelines_first._make is datelines_first._date is datelines_first._count is None  # characters let go


def test_digits_joined_to_latin_letters_are_codes_not_figures():
    """A web address or an account's id in a copy's own lines brings no figures of the story:
    only the numbers standing among the text's own characters are its figures."""
    base = "今年全市共新建保障性住房3200套，比上年增加15%，开工当天最高气温9℃。"  # 9℃ folds to 9°c: a unit
    for compiled in (True, False):
        fingerprint = Fingerprinter(compiled=compiled).fingerprint
        alone = fingerprint(base).story_words.figures.tolist()
        with_codes = fingerprint(
            base + "\n欢迎关注a3f9c21-77b0澜江网官方账号，详见lj88.example/n2024"
        ).story_words.figures
        assert with_codes.tolist() == alone and len(alone) == 3
        other = fingerprint(base.replace("3200", "4100")).story_words.figures.tolist()
        assert other != alone  # a figure of the text itself still counts
