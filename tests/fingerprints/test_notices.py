import os
import random

import pytest
from support.corpus import ARTICLES, DISCLAIMER, EDITOR, PROMOTION, text

from scrapy_neardup import Fingerprinter
from scrapy_neardup.fingerprints.kernel import compiled_kernel_available
from scrapy_neardup.fingerprints.notices import (
    _ACTIONS,
    _CHANNELS,
    _HEADINGS,
    _LABELS,
    _LINE_OPENINGS,
    _NOT_SELF,
    _RIGHTS,
    _SELF,
    notice_spans,
    strip_notices,
)
from scrapy_neardup.fingerprints.text import fold_codes, to_text

STORY = "\n".join(ARTICLES["rice"])


def cut(value: str) -> list[str]:
    folded = to_text(fold_codes(value))
    return [folded[start:end].strip() for start, end in notice_spans(folded)]


@pytest.mark.parametrize(
    "notice",
    [
        DISCLAIMER,
        "免责声明：本网转载的稿件均来自互联网或其他媒体，并不代表本网赞同其观点或对其真实性负责。",
        "版权声明：凡注明来源的稿件，版权均属本站所有，未经书面授权不得转载或摘编；",
        "长河晚报提醒：本报所有文字、图片均受著作权法保护，媒体转载请联系本报取得授权。",
        "免責聲明：本網轉載的稿件均來自互聯網，並不代表本網贊同其觀點。",  # Traditional script
        PROMOTION,
        "来源：滨海新闻网  原标题：东平镇水稻喜获丰收",
        "本文转载自滨海新闻网",
        EDITOR,
        "[责任编辑:王晓明]",
    ],
)
def test_a_notice_or_credit_line_is_cut_whole(notice):
    assert cut(f"{STORY}\n{notice}\n{STORY}") == [to_text(fold_codes(notice)).strip()]


@pytest.mark.parametrize(
    "sentence",
    [
        "本报讯 国家版权局今日宣布，未经授权转载新闻作品的网站将被依法追究责任。",  # no site speaking of itself
        "本报记者从国家版权局获悉，今年查处的侵权盗版案件比去年减少了三成。",  # 本报记者: a byline
        "本文作者认为，这项政策的效果还有待观察。",  # the site, but no rights words
        "编辑部今天发布了一则通知，说明了征文比赛的评选办法。",  # 编辑 without a colon
        "市民可以通过政务服务中心的窗口办理相关业务。",
        "来源：据统计，" + "今年全镇水稻种植面积比去年扩大了两千亩，平均亩产达到六百五十公斤，" * 3,  # too long a line
    ],
)
def test_a_news_sentence_is_kept(sentence):
    assert cut(f"{STORY}\n{sentence}\n{STORY}") == []


def test_a_fingerprint_leaves_notices_and_credit_lines_out():
    fingerprinter = Fingerprinter()
    plain = fingerprinter.fingerprint(text("rice"))
    dressed = fingerprinter.fingerprint("\n".join(["来源：滨海新闻网", text("rice"), EDITOR, PROMOTION, DISCLAIMER]))
    assert dressed.chars == plain.chars
    assert dressed.sentence_keys == plain.sentence_keys
    assert dressed.simhash == plain.simhash
    assert dressed.sketch.hashes.tolist() == plain.sketch.hashes.tolist()


def test_a_text_of_notices_only_has_no_content():
    assert Fingerprinter().fingerprint(DISCLAIMER + "\n" + EDITOR).chars == 0


NOTICE_WORDS = [
    *(
        word
        for words in (_RIGHTS, _SELF, _NOT_SELF, _CHANNELS, _ACTIONS, _HEADINGS, _LABELS, _LINE_OPENINGS)
        for word in words
    ),
    *"：: \n。，！…【（([\t本报网题转载",
    "原标",
    *("今天市政府发布通知", "ｗｗｗ．", "免責聲明：本網轉載", "𠀀", "a" * 30, "东平镇水稻喜获丰收，" * 5),
]


@pytest.mark.skipif(
    not compiled_kernel_available() and not os.environ.get("NEARDUP_REQUIRE_KERNEL"),
    reason="the C kernel was not built (no compiler at install time)",
)
def test_the_kernel_cuts_what_the_patterns_cut():
    """The C scan of the code points and the regular expressions on their text: the same cut,
    on the corpus dressed in notices and on random runs of the rules' words, folded or not."""
    rng = random.Random(1998)
    texts = [text(name) for name in ARTICLES]
    texts += ["\n".join([f"来源：{name}", text(name), EDITOR, PROMOTION, DISCLAIMER]) for name in ARTICLES]
    texts += ["".join(rng.choice(NOTICE_WORDS) for _ in range(rng.randint(0, 80))) for _ in range(3000)]
    cut_somewhere = 0
    for value in texts:
        codes = fold_codes(value)
        compiled, patterns = strip_notices(codes, compiled=True), strip_notices(codes, compiled=False)
        assert compiled.tolist() == patterns.tolist(), value
        cut_somewhere += len(patterns) < len(codes)
    assert cut_somewhere > 1000  # the runs hold notices, not only text the rules leave alone


@pytest.mark.skipif(
    not compiled_kernel_available() and not os.environ.get("NEARDUP_REQUIRE_KERNEL"),
    reason="the C kernel was not built (no compiler at install time)",
)
def test_the_kernel_cuts_the_credit_lines_the_patterns_cut():
    """The kernel lists the line breaks, sentence ends and anchor characters in one pass and
    tries at a line's start only the words beginning with its character: lines opening with
    leads, then a label (a space or not before the colon, or none) or a line opening, as long
    as a credit line may be and a character longer, the last without its line break, give
    the regular expressions' cut."""
    rng = random.Random(15)
    openers = [*_LABELS, *_LINE_OPENINGS, "来", "本文", "编", "原标题编辑"]
    for _ in range(2000):
        lines = []
        for _ in range(rng.randint(1, 6)):
            head = "".join(rng.choices(" \t([【", k=rng.choice([0, 0, 1, 3]))) + rng.choice(openers)
            head += rng.choice(["", ":", " :", "  :", "：", "\n:"])
            filler = "".join(rng.choices("新华社记者今天。本报讯转载版权𠀀 ", k=rng.randint(0, 90)))
            lines.append(head + filler[: rng.choice([0, 5, 76 - len(head), 77 - len(head), 90])])
        value = "\n".join(lines) + rng.choice(["", "\n", "\n\n"])
        codes = fold_codes(value)
        assert strip_notices(codes, compiled=True).tolist() == strip_notices(codes, compiled=False).tolist(), value


@pytest.mark.skipif(
    not compiled_kernel_available() and not os.environ.get("NEARDUP_REQUIRE_KERNEL"),
    reason="the C kernel was not built (no compiler at install time)",
)
def test_the_kernel_refuses_words_chained_out_of_their_order():
    """The kernel walks each first character's chain of words in order: a chain that goes back
    (and could go round for ever) is a bad table."""
    import numpy as np

    from scrapy_neardup.fingerprints.kernel import kernel
    from scrapy_neardup.fingerprints.notices import CREDIT_LINE_CHARS, _kernel_words

    chars, words, first, head = _kernel_words()
    codes = fold_codes("来源：本报")
    assert kernel.notice_spans(codes, chars, words, first, head, CREDIT_LINE_CHARS)
    backwards = words.copy()
    chained = int(np.flatnonzero(backwards[:, 3] >= 0)[0])
    backwards[chained, 3] = chained
    with pytest.raises(ValueError, match="bad words"):
        kernel.notice_spans(codes, chars, backwards, first, head, CREDIT_LINE_CHARS)
