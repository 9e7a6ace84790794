import random

import numpy as np

from scrapy_neardup.fingerprints.sketch import (
    SKETCH_KEY_BITS,
    Sketch,
    mixed_shingles,
    resemblance,
    shingle_hashes,
    sketch_and_keys,
)


def exact(a: str, b: str, width: int = 5) -> tuple[float, float]:
    sa = {a[i : i + width] for i in range(len(a) - width + 1)}
    sb = {b[i : i + width] for i in range(len(b) - width + 1)}
    inter = len(sa & sb)
    return inter / len(sa | sb), inter / min(len(sa), len(sb))


def random_text(rng: random.Random, size: int) -> str:
    return "".join(chr(0x4E00 + rng.randrange(3000)) for _ in range(size))


def test_estimates_follow_exact_jaccard_and_containment():
    """Bottom-128 estimates are unbiased: over 10 texts the mean error stays small."""
    rng = random.Random(5)
    errors = {"cut": [], "half": [], "other": [], "tail": []}
    for _ in range(10):
        base = random_text(rng, 1500)
        cases = {
            "cut": base[:1125],
            "half": base[:750] + random_text(rng, 750),
            "other": random_text(rng, 1500),
            "tail": base[300:],
        }
        for name, other in cases.items():
            j, c = resemblance(Sketch.of(base), Sketch.of(other))
            ej, ec = exact(base, other)
            errors[name].append((j - ej, c - ec))
    for name, pairs in errors.items():
        mean_j = sum(p[0] for p in pairs) / len(pairs)
        mean_c = sum(p[1] for p in pairs) / len(pairs)
        assert abs(mean_j) < 0.05 and abs(mean_c) < 0.06, (name, mean_j, mean_c)


def test_identical_and_disjoint_texts():
    rng = random.Random(6)
    a, b = random_text(rng, 800), random_text(rng, 800)
    assert resemblance(Sketch.of(a), Sketch.of(a)) == (1.0, 1.0)
    assert resemblance(Sketch.of(a), Sketch.of(b))[0] < 0.05
    assert resemblance(Sketch.of(""), Sketch.of(a)) == (0.0, 0.0)


def test_sketch_round_trips_through_bytes():
    sketch = Sketch.of("这是一段用来测试序列化的文字内容" * 20)
    again = Sketch.from_bytes(sketch.to_bytes(), sketch.size)
    assert list(again.hashes) == list(sketch.hashes) and again.size == sketch.size


def test_a_sketch_at_the_end_of_a_record_is_read_in_place():
    """A stored record ends with its sketch's hashes, then (in records with story words) a
    place byte for each: read from an offset, they are the sketch's, viewing the record's bytes."""
    from scrapy_neardup.fingerprints.sketch import sketch_and_keys

    codes = np.frombuffer("这是一段用来测试序列化的文字内容，还有别的句子".encode("utf-32-le") * 20, dtype=np.uint32)
    sketch = sketch_and_keys(codes, 64)[0]
    head = b"record head"
    placed = Sketch.from_record(head + sketch.to_bytes() + sketch.places.tobytes(), len(head), sketch.size, True)
    plain = Sketch.from_record(head + sketch.to_bytes(), len(head), sketch.size, False)
    assert placed.hashes.tolist() == plain.hashes.tolist() == sketch.hashes.tolist()
    assert placed.places.tolist() == sketch.places.tolist() and plain.places is None
    assert placed.size == plain.size == sketch.size and isinstance(placed.hashes.base, bytes)
    empty = Sketch.from_record(head, len(head), 0, True)
    assert len(empty.hashes) == len(empty.places) == 0


def test_a_packed_sketch_at_the_end_of_a_record_reads_back_whole_and_smaller():
    """Records store the sketch's hashes packed (at most 3.25 bytes a hash for a news text instead
    of 4), then the places; both read back as they were, the places in place."""
    from scrapy_neardup.fingerprints.sketch import sketch_and_keys

    rng = random.Random(3)
    for size in (0, 1, 4, 60, 800, 3000, 20000):
        codes = np.frombuffer(random_text(rng, size).encode("utf-32-le"), dtype=np.uint32)
        sketch = sketch_and_keys(codes, 128)[0]
        head = b"record head"
        packed = sketch.packed()
        placed = Sketch.from_record(head + packed + sketch.places.tobytes(), len(head), sketch.size, True, True)
        plain = Sketch.from_record(head + packed, len(head), sketch.size, False, True)
        assert placed.hashes.tolist() == plain.hashes.tolist() == sketch.hashes.tolist(), size
        assert placed.hashes.dtype == np.uint32 and placed.places.tolist() == sketch.places.tolist()
        assert isinstance(placed.places.base, bytes) and plain.places is None
        if size >= 800:  # 128 hashes of a news-length text
            assert len(packed) <= 3.25 * len(sketch.hashes) + 3, (size, len(packed))


def test_shingle_hashes_are_distinct_and_sorted():
    hashes = shingle_hashes("abcdeabcdeabcde")
    assert list(hashes) == sorted(set(hashes.tolist()))
    assert len(hashes) == 5


def test_sketch_keys_are_more_bits_of_the_smallest_shingles():
    """Each key is the low 40 bits of the whole hash of a shingle whose top 32 bits are the
    matching smallest sketch hash (bits the sketch does not keep): the same shingle gives the
    same key in every text that has it among its smallest."""
    rng = random.Random(8)
    for _ in range(20):
        text = random_text(rng, rng.randint(5, 600))
        codes = np.frombuffer(text.encode("utf-32-le"), dtype=np.uint32)
        whole = mixed_shingles(codes)
        sketch, keys = sketch_and_keys(codes, keys=4)
        assert sketch.hashes.tolist() == Sketch.of(text).hashes.tolist()
        assert len(keys) == min(4, sketch.size)
        mask = (1 << SKETCH_KEY_BITS) - 1
        for top, key in zip(sketch.hashes.tolist(), keys):
            having = [int(h) for h in whole if int(h) >> 32 == top]
            assert key == min(having) & mask
        # A copy with its first half replaced keeps the keys of the shingles it kept.
        copy = random_text(rng, len(text) // 2) + text[len(text) // 2 :]
        copy_codes = np.frombuffer(copy.encode("utf-32-le"), dtype=np.uint32)
        kept = set(mixed_shingles(copy_codes).tolist())
        copy_sketch, copy_keys = sketch_and_keys(copy_codes, keys=4)
        for top, key in zip(sketch.hashes.tolist(), keys):
            shingle = min(int(h) for h in whole if int(h) >> 32 == top)
            if shingle in kept and top <= int(copy_sketch.hashes[min(3, len(copy_keys) - 1)]):
                assert key in copy_keys


def test_sketch_keys_among_keys_are_those_is_sketch_key_names():
    from scrapy_neardup.fingerprints.fingerprint import SKETCH_TAG, is_sketch_key, sketch_keys_among

    rng = random.Random(4)
    keys = [rng.getrandbits(64) for _ in range(200)] + [SKETCH_TAG | rng.getrandbits(40) for _ in range(50)]
    keys += [SKETCH_TAG, SKETCH_TAG - 1, (1 << 64) - 1, 0]
    assert sketch_keys_among(keys) == {key for key in keys if is_sketch_key(key)}
    assert len(sketch_keys_among(keys)) == 52
