"""LevelDB stores that lost files, hold damaged ones, or sit on a full disk: each is refused or
stopped with the store's own error naming the folder and what to do, and nothing is lost."""

import json
import logging
import os
import subprocess
import sys
from pathlib import Path

import plyvel
import pytest
import pytest_twisted
from support import warm_python
from support.corpus import ARTICLES, random_news, reprint, text
from support.crawls import run_failing_open, settings_for
from support.folders import mounted_tmpfs

from scrapy_neardup import Detector, open_store
from scrapy_neardup.stores.leveldb.store import LevelDBError, index_folder

FRESH = "\n".join(text(name) for name in ARTICLES)[::-1]  # like none of them


def filled_store(path) -> list[str]:
    """A closed store holding every corpus article; returns LevelDB's table files."""
    with open_store(f"leveldb://{path}") as store:
        detector = Detector(store)
        for name in ARTICLES:
            detector.check(name, text(name))
        store.compact()  # the records move from the log into table files
    return sorted(name for name in os.listdir(path) if name.endswith((".ldb", ".sst")))


def test_a_store_without_current_is_refused_and_repair_brings_it_back(tmp_path):
    path = tmp_path / "db"
    tables = filled_store(path)
    assert tables
    os.remove(path / "CURRENT")
    with pytest.raises(LevelDBError) as error:
        open_store(f"leveldb://{path}")
    message = str(error.value)
    assert str(path) in message and "no CURRENT" in message and "plyvel.repair_db" in message
    assert set(tables) <= set(os.listdir(path))  # nothing deleted
    assert not (path / "CURRENT").exists()  # and no new database started
    plyvel.repair_db(str(path))
    with open_store(f"leveldb://{path}") as store:
        assert store.count() == len(ARTICLES)
        assert Detector(store).check("copy", reprint("rice")).duplicate_of == "rice"


def test_a_new_store_opens_in_an_empty_folder_and_never_among_other_files(tmp_path):
    path = tmp_path / "db"
    path.mkdir()
    (path / "notes.txt").write_text("not LevelDB")
    with pytest.raises(LevelDBError, match="holds files that are not a store's"):
        open_store(f"leveldb://{path}")
    assert os.listdir(path) == ["notes.txt"]
    (path / "notes.txt").unlink()
    with open_store(f"leveldb://{path}") as store:
        assert store.count() == 0


def neardup(*args: str) -> subprocess.CompletedProcess:
    return warm_python.run(
        [sys.executable, "-m", "scrapy_neardup.cli", *args], capture_output=True, text=True, timeout=120
    )


def damage(path, how: str) -> None:
    """Cut every table file in half, or overwrite part of its data blocks."""
    for name in os.listdir(path):
        if name.endswith((".ldb", ".sst")):
            size = os.path.getsize(path / name)
            with open(path / name, "r+b") as handle:
                if how == "truncate":
                    handle.truncate(size // 2)
                else:
                    handle.seek(size // 8)
                    handle.write(b"\xff" * (size // 4))


@pytest.mark.parametrize("how, says", [("truncate", "cannot read or write"), ("garble", "is damaged")])
def test_a_damaged_table_file_is_the_stores_own_error(tmp_path, how, says):
    path = tmp_path / "db"
    tables = filled_store(path)
    damage(path, how)
    with pytest.raises(LevelDBError) as error, open_store(f"leveldb://{path}") as store:
        store.count()  # every record is read: a damaged block cannot go unnoticed
    message = str(error.value)
    assert says in message and str(path) in message and "plyvel.repair_db" in message
    assert set(tables) <= set(os.listdir(path))
    # the command line says it in one line, with the exit code of a store error at open
    run = neardup("info", "--store", f"leveldb://{path}")
    assert run.returncode == 2, run.stderr
    assert "Traceback" not in run.stderr and len(run.stderr.strip().splitlines()) == 1
    assert str(path) in run.stderr and "plyvel.repair_db" in run.stderr


def test_a_failed_index_save_leaves_no_partial_file_and_costs_a_refiling(tmp_path, caplog):
    path = tmp_path / "db"
    filled_store(path)
    with open_store(f"leveldb://{path}") as store:
        saved = os.path.join(index_folder(str(path), store._prefix), "MANIFEST.json")
        os.remove(saved)
        os.mkdir(saved)  # the rename over it fails
        assert Detector(store).check("fresh", FRESH).stored
    assert "bucket index not saved" in caplog.text
    assert not os.path.exists(saved + ".partial")
    os.rmdir(saved)
    with open_store(f"leveldb://{path}") as store:  # every record is filed again
        assert Detector(store).check("copy", reprint("rice")).duplicate_of == "rice"
        assert Detector(store).check("copy2", FRESH).duplicate_of == "fresh"


def test_the_index_is_never_written_through_a_link_planted_at_its_partial_names(tmp_path):
    path = tmp_path / "db"
    outside = tmp_path / "outside.txt"
    outside.write_text("keep me")
    filled_store(path)
    with open_store(f"leveldb://{path}") as store:
        folder = index_folder(str(path), store._prefix)
        manifest = json.loads(Path(folder, "MANIFEST.json").read_text())
        planted = [
            os.path.join(folder, "MANIFEST.json.partial"),
            os.path.join(folder, f"run-{manifest['next_run']:08d}.bin.partial"),
        ]
        for link in planted:
            os.symlink(outside, link)
        assert Detector(store).check("fresh", FRESH).stored
    assert outside.read_text() == "keep me"
    assert not any(os.path.lexists(link) for link in planted)
    with open_store(f"leveldb://{path}") as store:
        assert store._index.flushed_upto == store._last[0]  # the saved index was read back whole
        assert Detector(store).check("copy", reprint("rice")).duplicate_of == "rice"
        assert Detector(store).check("copy2", FRESH).duplicate_of == "fresh"


@pytest.fixture
def small_disk(tmp_path):
    """A 256 KB tmpfs, unmounted after the test. Mounting needs root: skipped otherwise."""
    if os.geteuid() != 0:
        pytest.skip("a full disk is made by mounting a small tmpfs, which needs root")
    disk = tmp_path / "disk"
    disk.mkdir()
    with mounted_tmpfs(disk, "size=256k", "a tmpfs to fill"):
        yield disk


def test_a_full_disk_stops_with_one_line_keeps_what_was_stored_and_reopens(tmp_path, small_disk):
    store = small_disk / "db"
    texts = random_news(1000)  # about 800 KB of records: more than the disk holds
    source = tmp_path / "in.jsonl"
    source.write_text(
        "".join(json.dumps({"url": f"u{n}", "text": t}, ensure_ascii=False) + "\n" for n, t in enumerate(texts)),
        encoding="utf-8",
    )
    output = tmp_path / "out.jsonl"
    run = neardup("dedup", str(source), "-o", str(output), "--store", f"leveldb://{store}", "--key-field", "url")
    assert run.returncode == 3, run.stderr
    assert "Traceback" not in run.stderr
    stopped = [line for line in run.stderr.splitlines() if "store failed" in line]
    assert len(stopped) == 1 and f"no space left on the device holding the store at {store}" in stopped[0]
    written = output.read_text(encoding="utf-8").splitlines()
    assert 0 < len(written) < len(texts)
    assert not [name for name in os.listdir(store) if name.endswith(".partial")]

    warm_python.run(["mount", "-o", "remount,size=16m", str(small_disk)], check=True)  # space freed
    with open_store(f"leveldb://{store}") as reopened:
        assert reopened.count() >= len(written)
        detector = Detector(reopened)
        for number in (0, len(written) - 1):  # every written record is known to the store
            assert detector.check(f"again{number}", texts[number]).duplicate_of == f"u{number}"
    rerun = neardup("dedup", str(source), "-o", str(output), "--store", f"leveldb://{store}", "--key-field", "url")
    assert rerun.returncode == 0, rerun.stderr
    verdicts = [json.loads(line)["duplicate_of"] for line in output.read_text(encoding="utf-8").splitlines()]
    assert verdicts == [None] * len(texts)  # the same key again is not its own duplicate


def test_a_store_held_by_another_process_is_one_line_naming_the_path_and_what_to_do(tmp_path):
    path = tmp_path / "db"
    holder = warm_python.popen(
        [
            sys.executable,
            "-c",
            f"import plyvel, sys; db = plyvel.DB({str(path)!r}, create_if_missing=True); "
            "print('held', flush=True); sys.stdin.read()",
        ],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout.readline().strip() == "held"
        run = neardup("info", "--store", f"leveldb://{path}")
    finally:
        holder.stdin.close()
        holder.wait(timeout=10)
    assert run.returncode == 2 and "Traceback" not in run.stderr
    assert len(run.stderr.strip().splitlines()) == 1
    message = run.stderr
    assert str(path) in message and "held by another process" in message
    assert "stop that process" in message and "--store" in message and "redis://" in message


@pytest_twisted.inlineCallbacks
def test_a_crawl_over_a_damaged_store_stops_at_open_with_the_repair(local_site, tmp_path, caplog):
    caplog.set_level(logging.INFO)
    store = tmp_path / "store"
    filled_store(store)
    damage(store, "garble")
    yield run_failing_open(settings_for(store), local_site.root, "neardup_store_unavailable")
    errors = [r.getMessage() for r in caplog.records if r.levelno >= logging.ERROR]
    assert len(errors) == 1
    assert str(store) in errors[0] and "is damaged" in errors[0] and "plyvel.repair_db" in errors[0]


@pytest_twisted.inlineCallbacks
def test_a_crawl_never_makes_its_store_in_a_folder_of_other_files(local_site, tmp_path, caplog):
    """NEARDUP_STORE naming a data folder by mistake: nothing is written there, the crawl stops
    at open, and a file named LOG (LevelDB's own log's name) is not rotated away."""
    folder = tmp_path / "downloads"
    folder.mkdir()
    (folder / "LOG").write_text("the user's own log\n")
    (folder / "report.csv").write_text("a,b\n")
    yield run_failing_open(settings_for(folder), local_site.root, "neardup_store_unavailable")
    errors = [r.getMessage() for r in caplog.records if r.levelno >= logging.ERROR]
    assert len(errors) == 1 and "holds files that are not a store's ('report.csv')" in errors[0], errors
    assert sorted(os.listdir(folder)) == ["LOG", "report.csv"]
    assert (folder / "LOG").read_text() == "the user's own log\n"
