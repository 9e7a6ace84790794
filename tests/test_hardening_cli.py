"""Hostile input to the ``neardup`` commands: each is refused, or handled, with one clear line on
stderr and nothing lost (the input, the output, the store and files the command did not write
are as they were)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from corpus import ARTICLES, reprint, text

from scrapy_neardup import open_store
from scrapy_neardup.cli import main


def records() -> list[dict]:
    """Each corpus article, then a reprint of it."""
    found = []
    for name in ARTICLES:
        found += [{"id": name, "text": text(name)}, {"id": f"{name}-copy", "text": reprint(name)}]
    return found


def write_lines(path: Path, lines: list[dict]) -> bytes:
    data = "".join(json.dumps(line, ensure_ascii=False) + "\n" for line in lines).encode("utf-8")
    path.write_bytes(data)
    return data


def neardup(capsys, *args: str) -> tuple[int, str]:
    """Run the command; its exit code and its stderr (one error line at most, no traceback)."""
    capsys.readouterr()
    try:
        code = main([str(arg) for arg in args])
    except SystemExit as exc:  # an option argparse refused
        code = exc.code
    err = capsys.readouterr().err
    assert "Traceback" not in err
    return code, err


def one_line(err: str) -> str:
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    return lines[0]


def stored(uri: str) -> int:
    with open_store(uri, create=False) as store:
        return store.count()


# -- seconds ----------------------------------------------------------------------------------


@pytest.mark.parametrize("value", ["nan", "-100", "inf", "0", "-inf", "1e400", "a week"])
def test_purge_refuses_an_age_that_is_not_finite_and_positive_and_removes_nothing(tmp_path, capsys, value):
    """--older-than nan once removed every document of a LevelDB store."""
    store = f"leveldb://{tmp_path / 'store'}"
    write_lines(tmp_path / "in.jsonl", records())
    assert neardup(capsys, "dedup", tmp_path / "in.jsonl", "-o", tmp_path / "out.jsonl", "--store", store)[0] == 0
    before = stored(store)
    code, err = neardup(capsys, "purge", "--store", store, f"--older-than={value}")
    assert code == 2
    assert "--older-than: must be a number of seconds > 0 and finite" in one_line(err)
    assert stored(store) == before == len(ARTICLES)


@pytest.mark.parametrize("value", ["nan", "inf", "-1", "1e999"])
def test_dedup_refuses_a_time_window_that_is_not_finite_and_positive(tmp_path, capsys, value):
    write_lines(tmp_path / "in.jsonl", records())
    store = tmp_path / "store"
    code, err = neardup(
        capsys, "dedup", tmp_path / "in.jsonl", "-o", tmp_path / "out.jsonl", "--store", store, f"--ttl={value}"
    )
    assert code == 2 and "--ttl: must be a number of seconds >= 0 and finite (0: no time window)" in one_line(err)
    assert not store.exists() and not (tmp_path / "out.jsonl").exists()


def test_a_time_window_redis_cannot_hold_is_refused_before_the_namespace_is_made(tmp_path, capsys, redis_server):
    """--ttl 1e18 once created the namespace, then failed on the first line (exit code 3)."""
    write_lines(tmp_path / "in.jsonl", records())
    for namespace, ttl in (("long", "1e18"), ("longer", "1e300")):
        code, err = neardup(
            capsys,
            "dedup",
            tmp_path / "in.jsonl",
            "-o",
            tmp_path / "out.jsonl",
            "--store",
            redis_server.url(),
            "--namespace",
            namespace,
            "--ttl",
            ttl,
        )
        assert code == 2 and "the Redis store cannot keep ttl" in one_line(err)
        assert list(redis_server.client().scan_iter(f"neardup:{{{namespace}}}:*")) == []
    assert not (tmp_path / "out.jsonl").exists()
    assert not [name for name in os.listdir(tmp_path) if name.endswith(".partial")]


def test_the_python_api_takes_the_same_seconds(redis_server):
    from scrapy_neardup import Detector
    from scrapy_neardup.stores.redis import RedisStore

    for bad in (float("nan"), float("inf"), -1.0, 0.0):
        with pytest.raises(ValueError, match="ttl"), open_store("memory://") as store:
            Detector(store, ttl=bad)
        with pytest.raises(ValueError, match="ttl"):
            RedisStore(redis_server.url(), ttl=bad)
        with pytest.raises(ValueError, match="pending_timeout"):
            RedisStore(redis_server.url(), pending_timeout=bad)
