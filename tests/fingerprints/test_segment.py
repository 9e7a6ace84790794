"""The study's C cut (fingerprints/segment.py) gives rjieba's tokens, token for token.

Skipped where the extension or rjieba is missing; NEARDUP_REQUIRE_KERNEL makes it refuse.
"""

import importlib.util
import os
import random

import pytest
from support.corpus import ARTICLES

from scrapy_neardup.fingerprints import segment
from scrapy_neardup.fingerprints.text import split_sentences

pytestmark = pytest.mark.skipif(
    (segment._segment is None or importlib.util.find_spec("rjieba") is None)
    and not os.environ.get("NEARDUP_REQUIRE_KERNEL"),
    reason="the study's C cut was not built, or rjieba is not installed",
)

# Each decides a rule: the route's ties, a dictionary word cut into characters, the HMM (and
# its ties where a character has no emission), runs of letters and digits joined by "._-",
# a percent sign, characters outside jieba's blocks (kana, Hangul, extension A, beyond the BMP).
EDGE_LINES = [
    "小明硕士毕业于中国科学院计算所",
    "我们中出了一个叛徒",
    "2023年gdp增长5.2%达到126万亿元",
    "権利者の许诺を得ずに贩売することは",
    "硏究所今回贩売颜呤欠夹鞘褂肧",
    "givewell.org和wes-5.4.5及a_b与a-.b还有a.%b",
    "한국어와ひらがな混在㐀䶵𠀀𪚥豈的句子",
    "x",
    "",
]


def rjieba_joined(line: str) -> str:
    import rjieba

    return "\x1f".join(rjieba.cut(line, hmm=True))


@pytest.mark.parametrize("line", EDGE_LINES)
def test_edge_lines_cut_as_rjieba(line):
    assert segment.cut_joined(line) == rjieba_joined(line)


def test_sentences_and_random_mixes_cut_as_rjieba():
    lines = [s for sentences in ARTICLES.values() for t in sentences for s in split_sentences(t, 0)]
    rng = random.Random(1998)
    pieces = [*"".join(lines)] + ["ま", "한", "㐀", "𠀀", "7", "12", "abc", ".", "-", "%", "ab.3"]
    lines += ["".join(rng.choice(pieces) for _ in range(rng.randint(1, 40))) for _ in range(2000)]
    differing = [line for line in lines if segment.cut_joined(line) != rjieba_joined(line)]
    assert differing == []
