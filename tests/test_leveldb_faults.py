"""LevelDB stores that lost files, hold damaged ones, or sit on a full disk: each is refused or
stopped with the store's own error naming the folder and what to do, and nothing is lost."""

import os

import plyvel
import pytest

from scrapy_neardup import Detector, open_store
from scrapy_neardup.stores.leveldb import LevelDBError

from corpus import ARTICLES, reprint, text


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


def test_a_new_store_in_an_empty_or_foreign_folder_still_opens(tmp_path):
    path = tmp_path / "db"
    path.mkdir()
    (path / "notes.txt").write_text("not LevelDB")
    with open_store(f"leveldb://{path}") as store:
        assert store.count() == 0
