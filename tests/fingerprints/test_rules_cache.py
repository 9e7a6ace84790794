"""The cache of a tokenizer's rules: the rules loading the tokenizer names, read back without
loading its dictionary; not used once the tokenizer's files or version change."""

import json
import os
import subprocess
import sys

import numpy as np
import pytest
from support import child_env

from scrapy_neardup.fingerprints import rules_cache, text
from scrapy_neardup.fingerprints.recipe import Recipe

# A fresh process: the resolved recipe's rules, the rules its tokenizer names when loaded,
# and whether resolving had imported the tokenizer's module.
RESOLVE = """
import json, sys
from scrapy_neardup.fingerprints.recipe import Recipe
from scrapy_neardup.fingerprints.text import get_tokenizer
name = sys.argv[1]
resolved = Recipe(tokenizer=name).resolved()
imported = name in sys.modules
json.dump([resolved.tokens, imported, get_tokenizer(name).rules], sys.stdout)
"""


def _resolve(name: str, cache: str) -> list:
    command = [sys.executable, "-c", RESOLVE, name]
    done = subprocess.run(command, env=child_env(NEARDUP_CACHE_DIR=cache), capture_output=True, text=True, check=True)
    return json.loads(done.stdout)


@pytest.mark.parametrize("name", ["jieba", "rjieba"])
def test_a_warm_process_names_the_rules_without_loading_the_tokenizer(tmp_path, name):
    if not text.package_dir(name):
        pytest.skip(f"{name} is not installed")
    cache = tmp_path / "cache"
    cold_rules, cold_imported, cold_loaded = _resolve(name, str(cache))
    assert [p.name.split("-")[:3] for p in cache.glob("*.npz")] == [["token", "rules", name]]
    warm_rules, warm_imported, warm_loaded = _resolve(name, str(cache))
    off_rules, off_imported, _ = _resolve(name, "")
    assert cold_rules == cold_loaded == warm_rules == warm_loaded == off_rules
    assert cold_rules.startswith("jieba-dict:")
    assert (cold_imported, warm_imported, off_imported) == (True, False, True)


@pytest.fixture(scope="module")
def jieba() -> text.Tokenizer:
    """The installed jieba, loaded once: a load reads its whole dictionary (most of these
    tests' time), and a tokenizer is only read."""
    return text.get_tokenizer("jieba")


@pytest.fixture
def fake_jieba(tmp_path, monkeypatch, jieba):
    """The cache keyed by the files of a jieba package in ``tmp_path`` (the rules still come
    from the installed jieba), with no tokenizer loaded in this process: loading one gives
    the installed jieba, loaded once for the module."""
    package = tmp_path / "site" / "jieba"
    (package / "finalseg").mkdir(parents=True)
    (package / "dict.txt").write_text("中国 100 ns\n")
    (package / "finalseg" / "prob_emit.py").write_text("P = {}\n")
    (tmp_path / "site" / "jieba-0.42.1.dist-info").mkdir()
    monkeypatch.setattr(rules_cache, "package_dir", lambda name: str(package))
    monkeypatch.setattr(text, "_CACHE", {})
    monkeypatch.setitem(text._TOKENIZERS, "jieba", lambda: jieba)
    monkeypatch.setenv("NEARDUP_CACHE_DIR", str(tmp_path / "cache"))
    return package


def _plant(cache, rules: str) -> None:
    """Overwrite the most recently used cached rules, as a cache written by another jieba would hold them."""
    path = max(cache.glob("token-rules-jieba-*.npz"), key=lambda p: p.stat().st_mtime_ns)
    np.savez(path, rules=np.array(rules))


def test_rules_cached_for_other_dictionary_files_are_not_used(fake_jieba, tmp_path, monkeypatch):
    loaded = text.get_tokenizer("jieba").rules
    monkeypatch.setattr(text, "_CACHE", {})
    assert rules_cache.tokenizer_rules("jieba") == loaded  # cold: loaded, then cached
    _plant(tmp_path / "cache", "jieba-dict:planted")
    monkeypatch.setattr(text, "_CACHE", {})
    assert Recipe(tokenizer="jieba").resolved().tokens == "jieba-dict:planted"  # the cache is read
    # The same size and time, another content: another key.
    dictionary = fake_jieba / "dict.txt"
    stat = dictionary.stat()
    dictionary.write_text("中华 100 ns\n")
    os.utime(dictionary, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    assert Recipe(tokenizer="jieba").resolved().tokens == loaded


def test_rules_cached_for_another_version_or_model_are_not_used(fake_jieba, tmp_path, monkeypatch):
    loaded = text.get_tokenizer("jieba").rules
    monkeypatch.setattr(text, "_CACHE", {})
    rules_cache.tokenizer_rules("jieba")
    _plant(tmp_path / "cache", "jieba-dict:planted")
    monkeypatch.setattr(text, "_CACHE", {})
    (tmp_path / "site" / "jieba-0.42.1.dist-info").rename(tmp_path / "site" / "jieba-0.42.2.dist-info")
    assert rules_cache.tokenizer_rules("jieba") == loaded
    _plant(tmp_path / "cache", "jieba-dict:planted")  # now the newest file: the one of 0.42.2
    monkeypatch.setattr(text, "_CACHE", {})
    assert rules_cache.tokenizer_rules("jieba") == "jieba-dict:planted"
    (fake_jieba / "finalseg" / "prob_emit.py").write_text("P = {'B': {}}\n")
    assert rules_cache.tokenizer_rules("jieba") == loaded


def test_a_loaded_tokenizer_names_its_own_rules_and_an_unknown_one_is_an_error(tmp_path, monkeypatch, jieba):
    monkeypatch.setenv("NEARDUP_CACHE_DIR", str(tmp_path / "cache"))
    loaded = text.get_tokenizer("jieba").rules
    assert rules_cache.tokenizer_rules("jieba") == loaded
    assert not (tmp_path / "cache").exists()  # a loaded tokenizer writes no cache
    with pytest.raises(ValueError, match="unknown tokenizer"):
        Recipe(tokenizer="no-such-tokenizer").resolved()
