"""A store records what decides the tokens (dictionary and rules, checked by a probe text),
not which tokenizer implementation cut them: jieba and rjieba share stores."""

import json

import plyvel
import pytest
from support.corpus import ARTICLES, quoting, reprint, text, with_disclaimer

from scrapy_neardup import Detector, Fingerprinter, Recipe, StoreFormatError, open_store
from scrapy_neardup.fingerprints.text import (
    TOKEN_PROBE,
    fast_tokenizer_available,
    fold_codes,
    get_tokenizer,
    to_text,
    token_rules,
)

needs_rjieba = pytest.mark.skipif(not fast_tokenizer_available(), reason="rjieba is not installed")

NAMES = list(ARTICLES)


def _later_documents() -> list[tuple[str, str]]:
    """Reprints, cut reprints, quoting copies and copies with a disclaimer of every article."""
    return (
        [(f"copy-{n}", reprint(n)) for n in NAMES]
        + [(f"cut-{n}", reprint(n, cut=0.75)) for n in NAMES]
        + [(f"quote-{n}", quoting(n, NAMES[(i + 1) % len(NAMES)])) for i, n in enumerate(NAMES)]
        + [(f"disclaimer-{n}", with_disclaimer(n)) for n in NAMES]
    )


def _verdicts(uri: str, first: str, then: str) -> list[tuple]:
    """Half the originals filed with tokenizer ``first``; the store reopened with ``then``
    judges copies of every article (first copies of the other half among them)."""
    with open_store(uri, recipe=Recipe(tokenizer=first)) as store:
        detector = Detector(store)
        for name in NAMES[::2]:
            detector.check(name, text(name))
    with open_store(uri, recipe=Recipe(tokenizer=then)) as store:
        detector = Detector(store)
        verdicts = [detector.check(key, body) for key, body in _later_documents()]
    return [(v.key, v.status, v.duplicate_of, v.method) for v in verdicts]


@needs_rjieba
def test_a_store_written_with_jieba_reopens_with_rjieba_with_the_same_verdicts(tmp_path):
    mixed = _verdicts(f"leveldb://{tmp_path}/mixed", "jieba", "rjieba")
    alone = _verdicts(f"leveldb://{tmp_path}/alone", "jieba", "jieba")
    assert mixed == alone
    statuses = {status for _, status, _, _ in mixed}
    assert statuses == {"duplicate", "unique"}


@needs_rjieba
def test_both_tokenizers_name_the_same_rules():
    jieba, rjieba = get_tokenizer("jieba"), get_tokenizer("rjieba")
    assert jieba.rules == rjieba.rules
    assert jieba.rules.startswith("jieba-dict:")
    assert Recipe(tokenizer="jieba").resolved() == Recipe(tokenizer="rjieba").resolved()
    assert "tokenizer" not in Recipe().resolved().as_dict()


def test_other_rules_give_another_value():
    rules = get_tokenizer("jieba").rules
    per_character = token_rules("jieba-dict", list)  # a tokenizer that cut every character apart
    assert per_character != rules
    assert per_character.split(":")[0] == rules.split(":")[0]
    assert len(set(TOKEN_PROBE)) > 80


def _rewrite_recipe(path, change) -> None:
    db = plyvel.DB(str(path))
    space = db.prefixed_db(b"ns:default\x00")
    meta = json.loads(space.get(b"m"))
    change(meta["recipe"])
    space.put(b"m", json.dumps(meta).encode())
    db.close()


def test_a_store_of_another_dictionary_is_refused_with_what_to_do(tmp_path):
    path = tmp_path / "db"
    open_store(f"leveldb://{path}").close()
    _rewrite_recipe(path, lambda recipe: recipe.update(tokens="jieba-dict:0000000000000000"))
    with pytest.raises(StoreFormatError, match=r"tokens: stored 'jieba-dict:0+'.*cuts text differently"):
        open_store(f"leveldb://{path}")


@pytest.mark.parametrize("name", ["jieba", pytest.param("rjieba", marks=needs_rjieba)])
def test_a_text_is_cut_as_its_lines_joined_and_a_line_seen_again_is_not_cut_again(name):
    """The cut of a text is its lines' cuts with the line breaks between them (a line break
    ends a block of the tokenizer), so a reprint's sentences are cut once and its
    fingerprint is the one its own cut gives."""
    fingerprinter = Fingerprinter(Recipe(tokenizer=name))
    tokenizer = fingerprinter.tokenizer
    bodies = [text(n) for n in NAMES] + [reprint(n) for n in NAMES] + [quoting(n, NAMES[0]) for n in NAMES]
    bodies += ["", "\n", "\n\n今天\n", "新华社北京1月12日电\n\n东平镇 2024 年水稻丰收 ok\r\n", "a\n\nb\n"]
    for body in (to_text(fold_codes(body)) for body in bodies):  # folded, as fingerprints cut it: no \r
        assert fingerprinter.cut(body) == tokenizer.cut(body), body
    fresh = Fingerprinter(Recipe(tokenizer=name))
    first = fresh.fingerprint(text("rice"))
    cut_before = fresh._cut_line.cache_info()
    again = fresh.fingerprint(reprint("rice"))
    cut_after = fresh._cut_line.cache_info()
    assert cut_after.hits > cut_before.hits  # the reprint's longest sentences were cut before
    alone = Fingerprinter(Recipe(tokenizer=name)).fingerprint(reprint("rice"))
    assert (again.simhash, again.tokens) == (alone.simhash, alone.tokens) and first.simhash
