import math
import random

import numpy as np
import pytest
from support.corpus import ARTICLES, text

from scrapy_neardup.fingerprints.fingerprint import Fingerprinter, Recipe
from scrapy_neardup.fingerprints.simhash import PermutedTables, hamming, hamming_many, simhash


def reference_simhash(hashes, weights):
    value = 0
    for bit in range(64):
        score = sum(w if (int(h) >> bit) & 1 else -w for h, w in zip(hashes, weights))
        if score > 0:
            value |= 1 << bit
    return value


def test_simhash_matches_the_bit_by_bit_definition():
    rng = np.random.default_rng(1)
    for size in (1, 2, 17, 300):
        hashes = rng.integers(0, 2**63, size, dtype=np.uint64) * np.uint64(2) + np.uint64(1)
        weights = rng.random(size)
        assert simhash(hashes, weights) == reference_simhash(hashes, weights)


def test_hamming_many_agrees_with_hamming():
    rng = random.Random(3)
    values = [rng.getrandbits(64) for _ in range(50)]
    assert list(hamming_many(values[0], values)) == [hamming(values[0], v) for v in values]


def test_small_edits_move_the_simhash_little_and_other_stories_far():
    """On news-length text one changed word moves a few bits; another story about half."""
    fingerprinter = Fingerprinter(Recipe())
    names = list(ARTICLES)
    near, far = [], []
    for i, _name in enumerate(names):
        body = "\n".join(text(n) for n in names[i:] + names[:i][:2])
        edited = body.replace("，", "，据悉", 1)
        base = fingerprinter.fingerprint(body).simhash
        near.append(hamming(base, fingerprinter.fingerprint(edited).simhash))
        for j in range(len(names)):
            if j != i:
                far.append(
                    hamming(
                        fingerprinter.fingerprint(text(names[i])).simhash,
                        fingerprinter.fingerprint(text(names[j])).simhash,
                    )
                )
    assert sorted(near)[len(near) // 2] <= 3, near
    assert min(far) > 8, far


@pytest.mark.parametrize("k", [0, 1, 3, 5])
def test_tables_find_every_fingerprint_within_k_and_filter_the_rest(k):
    """A lookup through the tables, then the distance filter, finds exactly those within k."""
    rng = random.Random(k)
    tables = PermutedTables(k)
    stored = [rng.getrandbits(64) for _ in range(2000)]
    query = rng.getrandbits(64)
    # Plant neighbours at every distance up to k + 2.
    for distance in range(k + 3):
        for _ in range(5):
            flipped = query
            for bit in rng.sample(range(64), distance):
                flipped ^= 1 << bit
            stored.append(flipped)
    buckets: dict[bytes, list[int]] = {}
    for value in stored:
        for key in tables.keys(value):
            buckets.setdefault(key, []).append(value)
    candidates = {v for key in tables.keys(query) for v in buckets.get(key, [])}
    found = {v for v in candidates if hamming(v, query) <= k}
    expected = {v for v in stored if hamming(v, query) <= k}
    assert found == expected
    assert len(expected) > k  # the planted neighbours are there
    # The tables read a small part of the store, not all of it.
    assert len(candidates) < len(stored) / 10


def test_table_layout_uses_pigeonhole_blocks():
    tables = PermutedTables(3)
    assert tables.blocks == 5 and tables.count == 10
    assert len(set(tables.keys(0x0123456789ABCDEF))) == 10


def test_distance_out_of_range_is_rejected():
    with pytest.raises(ValueError, match="Hamming distance"):
        PermutedTables(40)


def test_words_are_weighted_by_idf_and_term_frequency():
    from scrapy_neardup.fingerprints.fingerprint import STOP_WORDS, WEIGHT_SCALE, _features, word_hash

    features = _features()
    known = next(w for w in features._row if w not in STOP_WORDS and features._idf[features._row[w]] > 0)
    unknown = "鑫淼犇骉"  # not a word of the table
    tokens = [known, "，", " ", "的", unknown, known, "\n"]
    hashes, weights = features.weigh(tokens)
    by_hash = dict(zip(hashes.tolist(), weights.tolist()))
    # Punctuation, spaces and stop words are not features; each word counts once, with its tf.
    assert set(by_hash) == {word_hash(known), word_hash(unknown)}
    assert "的" in STOP_WORDS
    idf_known = float(features._idf[features._row[known]])
    # Integer weights (exact sums): idf * (1 + ln tf) in units of 1 / WEIGHT_SCALE.
    assert by_hash[word_hash(known)] == round(idf_known * (1 + math.log(2)) * WEIGHT_SCALE)
    assert by_hash[word_hash(unknown)] == round(features.rare_idf * WEIGHT_SCALE)
    # Rare words weigh more than frequent ones: the shared weight sits at the top of the table.
    assert features.rare_idf > float(np.median(features._idf))
