"""Datelines are looked for only near 日电, 本报讯 and 本报 (found by the C kernel, or by str.find
without it), and found exactly as a scan of the whole text finds them."""

import random

import numpy as np

from scrapy_neardup.fingerprints.storywords import (
    BINS,
    DATELINE,
    DATELINE_LONGEST,
    STORY_AFTER_DATELINE,
    datelines_of,
)

STORY = "市政府今天召开会议部署防汛工作要求各区确保群众安全。" * 4


def whole_scan(text: str) -> int:
    """The definition: the pattern tried at every character of the text."""
    found = 0
    for match in DATELINE.finditer(text):
        if len(text) - match.end() >= STORY_AFTER_DATELINE:
            found |= 1 << (match.start() * BINS // max(1, len(text)))
    return found


def codes(text: str) -> np.ndarray:
    return np.array([ord(c) for c in text], dtype=np.uint32)


def test_the_longest_dateline_is_found_where_it_starts():
    dateline = "新华社" + "乌鲁木齐市天山区北京" + "十二十月三十一日电"
    assert len(dateline) == DATELINE_LONGEST and DATELINE.fullmatch(dateline)
    text = STORY + dateline + STORY * 3
    assert datelines_of(codes(text)) == whole_scan(text) == 1 << (len(STORY) * BINS // len(text))


def test_a_closing_dateline_and_a_text_without_any_give_none():
    assert datelines_of(codes(STORY * 3 + "（新华社北京1月6日电）")) == 0
    assert datelines_of(codes(STORY * 3)) == 0
    assert datelines_of(codes("")) == 0


def test_the_paper_and_a_place_without_a_day_is_a_dateline_and_a_reporter_is_not():
    """ "（本报加拉加斯电）" opens a story as "本报北京1月3日电" does; "本报记者从电力部获悉" and
    "本报刊登的电视节目" are sentences, not datelines."""
    for dateline, expected in (("本报加拉加斯电", True), ("本报上海电", True), ("本报记者从电力部获悉", False),
                               ("本报刊登的电视节目", False), ("本报驻东京记者电", False)):  # fmt: skip
        text = STORY + dateline + STORY * 3
        assert datelines_of(codes(text)) == whole_scan(text) == (expected << (len(STORY) * BINS // len(text))), dateline


def test_datelines_are_those_of_a_scan_of_the_whole_text():
    """Random texts dense in the pattern's pieces: agencies, places, numbers, 月, 日电, 本报讯,
    overlapping and adjacent, near the start and the end."""
    rng = random.Random(1998)
    pieces = ["新华社", "中新社", "本报", "本报讯", "讯", "日电", "月", "日", "电", "1", "12", "3", "十", "二", "北京",
              "珀斯", "乌鲁木齐", "的", "，", " ", "。", "市政府召开会议", "a", STORY[:20], "记者", "加拉加斯"]  # fmt: skip
    found = 0
    for _ in range(3000):
        text = "".join(rng.choice(pieces) for _ in range(rng.randint(0, 60)))
        expected = whole_scan(text)
        assert datelines_of(codes(text)) == expected, text  # the kernel finds where to look
        assert datelines_of(codes(text), compiled=False) == expected, text  # str.find does
        found += expected != 0
    assert found > 300  # the texts did hold datelines
