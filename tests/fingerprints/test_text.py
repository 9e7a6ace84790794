import functools
import random
import unicodedata

import pytest
from support.corpus import ARTICLES, full_width, text

from scrapy_neardup.fingerprints.text import (
    MAX_SPLICED,
    _codes,
    _exact,
    _expanded,
    content_chars,
    fast_tokenizer_available,
    fold_codes,
    get_tokenizer,
    normalize,
    split_sentences,
    text_tables,
    to_text,
)


def test_full_width_forms_become_half_width():
    assert normalize("ＡＢＣ１２３，！？") == "abc123,!?"


def test_invisible_and_control_characters_are_removed():
    assert normalize("新\u200b闻\u200d报\ufeff道\x07结束") == "新闻报道 结束"


def test_white_space_and_case_are_folded():
    assert normalize("  Hello\u3000\u3000World \r\n\r\n\n  第二段  ") == "hello world\n第二段"


def test_fast_fold_agrees_with_unicodedata_nfkc():
    """The table-driven fold must give what NFKC + lower() gives, on mixed random text."""
    rng = random.Random(7)
    pool = (
        [chr(c) for c in range(0x20, 0x7F)]
        + [chr(c) for c in range(0xFF01, 0xFF5F)]
        + list("中文新闻报道记者今日电。，、；：？！“”（）《》【】…—·")
        + list("ÀÉîõüßæøåÅΩωДж①②ⅣⅫ㈠ﬁ½㎏\u00a0\u3000")
    )
    for _ in range(300):
        sample = "".join(rng.choice(pool) for _ in range(rng.randint(1, 40)))
        expected = unicodedata.normalize("NFKC", sample).lower()
        expected = "".join(c for c in expected if unicodedata.category(c) != "Cf")
        expected = " ".join(expected.split())
        got = " ".join(normalize(sample).split())
        # Only a punctuation expansion may differ: "…" is kept as one sentence end.
        assert got.replace("…", "...") == expected, sample


def test_a_text_with_a_character_nfkc_writes_as_several_folds_as_nfkc_of_the_whole_text():
    """ "℃" (NFKC "°C") sends a text off the table's fold: the characters it writes out, and
    the others the table folds otherwise than NFKC ("…"), are spliced into the table's fold;
    the text is the same as NFKC of the whole of it. A combining mark, which may compose with
    its neighbour, still takes NFKC of the whole text."""
    rng = random.Random(11)
    pool = list("中文新闻报道今日气温。，…‥—·ABCabc123 ") + [
        "℃",
        "Ⅱ",
        "Ⅻ",
        "㎏",
        "½",
        "ﬁ",
        "㈠",
        "①",
        "\u00a0",
        "\u200b",
    ]
    for _ in range(300):
        sample = "".join(rng.choice(pool) for _ in range(rng.randint(1, 40))) + "℃"
        codes = _codes(sample)
        expanded = _expanded(codes, text_tables().fold[codes])
        assert expanded is not None and expanded.tolist() == _exact(sample).tolist(), sample
        assert fold_codes(sample).tolist() == _exact(sample).tolist(), sample
    dense = "℃" + "……文字，" * (MAX_SPLICED // 2)  # more to write out than is worth splicing
    assert _expanded(_codes(dense), text_tables().fold[_codes(dense)]) is None
    assert fold_codes(dense).tolist() == _exact(dense).tolist()
    marked = "气温25℃，cafe\u0301与Ⅱ期"
    assert _expanded(_codes(marked), text_tables().fold[_codes(marked)]) is None
    assert fold_codes(marked).tolist() == _exact(marked).tolist()
    assert "café" in to_text(fold_codes(marked)) and "°c" in to_text(fold_codes(marked))


def test_content_chars_drop_punctuation_and_spaces():
    assert content_chars("新华社，北京 1月1日电！Hello, World.") == "新华社北京1月1日电helloworld"


def test_chinese_sentences_split_on_terminal_punctuation_and_lines():
    assert split_sentences("今天天气很好，我们去公园散步。你想一起来吗？\n当然想去！下一段；分号后", min_chars=2) == [
        "今天天气很好我们去公园散步",
        "你想一起来吗",
        "当然想去",
        "下一段",
        "分号后",
    ]


def test_full_width_and_half_width_punctuation_split_alike():
    half = "第一句话在这里说完!第二句话在这里说完?第三句话在这里说完;"
    assert split_sentences(half, 2) == split_sentences(full_width(half), 2)
    assert len(split_sentences(half, 2)) == 3


def test_latin_sentences_split_after_full_stop_and_space():
    assert split_sentences("The storm hit the coast. Officials opened shelters. 3.5 metres of rain.", 2) == [
        "thestormhitthecoast",
        "officialsopenedshelters",
        "35metresofrain",
    ]


def test_short_sentences_are_left_out():
    assert split_sentences("图片来源。这是一个足够长的句子，会被保留下来。") == ["这是一个足够长的句子会被保留下来"]


def test_auto_tokenizer_prefers_the_fast_one():
    expected = "rjieba" if fast_tokenizer_available() else "jieba"
    assert get_tokenizer("auto").name == expected


def test_unknown_tokenizer_is_a_clear_error():
    with pytest.raises(ValueError, match="unknown tokenizer 'nope'"):
        get_tokenizer("nope")


@pytest.mark.skipif(not fast_tokenizer_available(), reason="rjieba is not installed")
def test_jieba_and_rjieba_cut_our_news_alike():
    """Same dictionary, same algorithm: the fast tokenizer may replace jieba in a recipe."""
    slow, fast = get_tokenizer("jieba"), get_tokenizer("rjieba")
    pages = [normalize(text(name)) for name in ARTICLES]
    assert sum(len(p) for p in pages) > 1500
    for page in pages:
        assert fast.cut(page) == slow.cut(page)


# Copies made with OpenCC's own conversions, as Hong Kong and Taiwan sites make them.
def _converted(config: str, value: str) -> str:
    return _converter(config).convert(value)


@functools.cache
def _converter(config: str):
    """One converter a configuration: making one loads its dictionaries."""
    import opencc

    return opencc.OpenCC(config)


@pytest.mark.parametrize("config", ["s2t", "s2hk", "s2tw"])
def test_traditional_copies_fold_to_the_simplified_text(config):
    for name in ARTICLES:
        copy = _converted(config, text(name))
        assert copy != text(name)  # the conversion changed characters
        assert content_chars(copy) == content_chars(text(name)), name


def test_simplified_reprints_of_a_traditional_original_fold_alike():
    for name in ARTICLES:
        original = _converted("s2hk", text(name))
        assert content_chars(_converted("t2s", original)) == content_chars(original)


def test_regional_variants_and_compatibility_ideographs_fold_to_simplified():
    # Taiwan 著 (着), Hong Kong 綫 and 裏, a CJK compatibility ideograph (U+F900 block) of 更.
    assert normalize("看著綫裏\uf901新") == "看着线里更新"
    # A Simplified character that is also some Traditional character's Simplified form is
    # never turned into another variant: 么 stays (Taiwan's tables map it to 幺).
    assert normalize("什么") == "什么"


def test_taiwan_vocabulary_is_left_but_its_characters_fold():
    """s2twp also changes words (软件 -> 軟體); the characters fold, the words stay."""
    assert normalize(_converted("s2twp", "软件和出租车")) == "软体和计程车"


def test_folding_each_character_alone_places_every_folded_code_point():
    """Marks on text whose whole-text folding joins characters (an ellipsis NFKC expands, a
    letter beyond the BMP): each character folded as fold_codes folds it alone, with its place."""
    from scrapy_neardup.fingerprints.text import fold_codes, fold_each_with_positions

    text = "北京……今天㈠召开会议😀，Ｅｘａｍｐｌｅ e\u0301 ﬁ 臺灣\u200b𝐀。"
    codes, where = fold_each_with_positions(text)
    expected = [(int(code), index) for index, char in enumerate(text) for code in fold_codes(char)]
    assert list(zip(codes.tolist(), where.tolist())) == expected
    assert len(codes) > len(text) - 2  # the ellipses expanded, the zero-width space dropped
