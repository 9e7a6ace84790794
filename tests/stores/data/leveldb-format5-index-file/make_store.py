"""Writes store/: a LevelDB store of format 5 whose bucket index is one file, as versions up
to commit e1e6f5f wrote it (``neardup-index-<hash>.bin``).

Run it with that version of scrapy-neardup on the import path (``git archive e1e6f5f``), from
the tests folder of that version (it reads the articles of its ``support/corpus.py``):

    cd e1e6f5f-tree/tests && PYTHONPATH=..:support python /path/to/make_store.py

Three articles are stored and the store closed (the index file covers them); then two more
are stored by a run that ends without closing it (their records are after the index file,
as a killed crawl leaves them).
"""

import os
import sys
from pathlib import Path

import corpus

from scrapy_neardup import Detector, open_store

SAVED = ["rice", "museum", "battery"]
AFTER = ["reservoir", "marathon"]

folder = Path(__file__).resolve().parent / "store"
if folder.exists():
    sys.exit(f"{folder} exists")
with open_store(f"leveldb://{folder}") as store:
    detector = Detector(store)
    for topic in SAVED:
        assert detector.check(topic, corpus.text(topic)).stored
store = open_store(f"leveldb://{folder}")
detector = Detector(store)
for topic in AFTER:
    assert detector.check(topic, corpus.text(topic)).stored
os._exit(0)  # no close: the index file is not written again
