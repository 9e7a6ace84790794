"""The cache of prepared tables: same fingerprints cold, warm and without a cache; rebuilt
when its key changes; never an error when the directory is unusable."""

import json
import os
import subprocess
import sys
import time

import numpy as np
from support import child_env

from scrapy_neardup.fingerprints.tables import KEPT_VERSIONS, cached_arrays, file_signature
from scrapy_neardup.fingerprints.text import fast_tokenizer_available

TOKENIZERS = ["jieba"] + (["rjieba"] if fast_tokenizer_available() else [])

# Fingerprints of the test corpus (originals, reprints, full-width copies) with both
# tokenizers, both code paths, printed as JSON by a fresh process.
FINGERPRINTS = """
import json, sys
from support.corpus import ARTICLES, full_width, reprint, text
from scrapy_neardup.fingerprints.fingerprint import Fingerprinter, Recipe
from scrapy_neardup.fingerprints.text import fast_tokenizer_available
texts = [text(n) for n in ARTICLES] + [reprint(n) for n in ARTICLES]
texts += [full_width(text(n)) for n in ARTICLES] + ["Ｈｅｌｌｏ ﬁne ㈠ 中文报道。" * 20]
out = []
for name in ["jieba"] + (["rjieba"] if fast_tokenizer_available() else []):
    for compiled in (True, False):
        fingerprinter = Fingerprinter(Recipe(tokenizer=name), compiled=compiled)
        for fp in map(fingerprinter.fingerprint, texts):
            words = fp.story_words
            story = [words.words.tolist(), words.idf.tolist(), words.spread.tolist(), words.figures.tolist()]
            story += [words.datelines, fp.digest, fp.sketch.places.tolist()]
            out.append([fp.simhash, fp.sentence_keys, fp.sketch.hashes.tolist(), fp.sketch_keys, fp.tokens, story])
json.dump(out, sys.stdout)
"""


def _start(cache: str) -> subprocess.Popen:
    """A fresh process printing the fingerprints, with ``cache`` as its cache directory."""
    command = [sys.executable, "-c", FINGERPRINTS]
    return subprocess.Popen(command, env=child_env(NEARDUP_CACHE_DIR=cache), stdout=subprocess.PIPE, text=True)


def _fingerprints(process: subprocess.Popen) -> list:
    out, _ = process.communicate()
    assert process.returncode == 0
    return json.loads(out)


def test_fingerprints_are_the_same_with_the_cache_cold_warm_and_off(tmp_path):
    cache = tmp_path / "cache"
    cold_run = _start(str(cache))
    off_run = _start("")  # no cache: built in memory, beside the cold run (it reads no cache)
    cold = _fingerprints(cold_run)
    cached = sorted(p.name.split("-")[0] for p in cache.glob("*.npz"))
    # story-pairs, text-tables, token-rules (one a tokenizer), word-weights
    assert cached == ["story", "text", *["token"] * len(TOKENIZERS), "word"]
    warm = _fingerprints(_start(str(cache)))
    off = _fingerprints(off_run)
    assert len(cold) > 40
    assert cold == warm == off
    # Pairs of every kind differ among themselves: the comparison is not vacuous.
    assert len({fp[0] for fp in cold}) > 10


def test_a_table_is_built_once_per_key_and_the_least_used_keys_leave_the_cache(tmp_path):
    builds = []

    def build():
        builds.append(1)
        return {"values": np.arange(len(builds) * 10, dtype=np.uint32)}

    first = cached_arrays("demo", {"source": 1}, build, tmp_path)
    again = cached_arrays("demo", {"source": 1}, build, tmp_path)
    assert len(builds) == 1
    assert np.array_equal(first["values"], again["values"])
    changed = cached_arrays("demo", {"source": 2}, build, tmp_path)
    assert len(builds) == 2 and len(changed["values"]) == 20
    cached_arrays("demo", {"source": 1}, build, tmp_path)  # two versions side by side: no rebuild
    assert len(builds) == 2
    oldest = time.time() - 3600
    for path in tmp_path.glob("demo-*.npz"):
        os.utime(path, (oldest, oldest))
    cached_arrays("demo", {"source": 1}, build, tmp_path)  # read: now the most recently used
    for source in range(3, 3 + KEPT_VERSIONS - 1):
        cached_arrays("demo", {"source": source}, build, tmp_path)
    assert len(list(tmp_path.glob("demo-*.npz"))) == KEPT_VERSIONS
    built = len(builds)
    cached_arrays("demo", {"source": 1}, build, tmp_path)  # kept: it was used last
    assert len(builds) == built
    cached_arrays("demo", {"source": 2}, build, tmp_path)  # the least used one left
    assert len(builds) == built + 1


def test_a_damaged_cache_file_is_built_again(tmp_path):
    cached_arrays("demo", {"k": 1}, lambda: {"v": np.ones(100)}, tmp_path)
    (path,) = tmp_path.glob("demo-*.npz")
    path.write_bytes(path.read_bytes()[:50])  # cut short, as by a full disk
    rebuilt = cached_arrays("demo", {"k": 1}, lambda: {"v": np.full(100, 2.0)}, tmp_path)
    assert rebuilt["v"].tolist() == [2.0] * 100
    assert cached_arrays("demo", {"k": 1}, lambda: {"v": np.zeros(1)}, tmp_path)["v"][0] == 2.0


def test_an_unusable_cache_directory_gives_the_table_all_the_same(tmp_path):
    blocker = tmp_path / "a-file"
    blocker.write_text("not a directory")
    arrays = cached_arrays("demo", {"k": 1}, lambda: {"v": np.arange(3)}, blocker / "cache")
    assert arrays["v"].tolist() == [0, 1, 2]


def test_a_source_file_signature_changes_with_its_content(tmp_path):
    source = tmp_path / "idf.txt"
    source.write_text("新闻 5.0\n")
    before = file_signature(source)
    stat = source.stat()
    source.write_text("新闻 6.0\n")
    os.utime(source, ns=(stat.st_atime_ns, stat.st_mtime_ns))  # same size and time
    assert file_signature(source) != before
