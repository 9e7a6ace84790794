"""Hostile texts for fingerprinting: one crafted to be slow is fingerprinted in linear time."""

from __future__ import annotations

import time

import pytest

from scrapy_neardup import Fingerprinter
from scrapy_neardup.crawl.settings import NearDupConfig

# Texts made of the words the site-notice scan anchors on (本网, 本报, 本站, rights words),
# in sentences of every length.
UNITS = [
    "本网讯本报记者今天报道，本站转载的消息称版权归本网所有。",
    "本报",
    "本网本报本站。",
    "本文转载自本网，版权所有。\n",
]


@pytest.mark.parametrize("unit", UNITS)
def test_two_megabytes_of_anchor_words_are_fingerprinted_well_within_a_workers_time(unit):
    """The scan searched back to the start of the text from each sentence end: 900 KB took
    138 s, past the 20 s a worker is given (the page passed unchecked), and without workers it
    held the reactor. A generous bound, for a loaded machine: the time a worker is given; the
    scan takes a few seconds (benchmarks measure speed, this only catches a return of the
    quadratic scan, which takes minutes)."""
    fingerprinter = Fingerprinter()
    fingerprinter.fingerprint("预热：词表与内核载入。" * 10)
    body = unit * (2_000_000 // len(unit.encode("utf-8")) + 1)
    started = time.perf_counter()
    fingerprinter.fingerprint(body)
    assert time.perf_counter() - started < NearDupConfig().extract_timeout
