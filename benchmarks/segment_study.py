"""Study of a C cut (``fingerprints/segment.py``): agreement with rjieba, token for token, and speed.

Lines: every SimHash text line a Fingerprinter cuts (the texts of the shared corpora run
through ``Fingerprinter.fingerprint``, the lines its tokenizer cache is asked for), every
sentence of those texts as content characters (no minimum length), every word of jieba's
dictionary alone, and seeded random mixes of words and edge characters. Agreement: the share of
lines whose tokens equal ``rjieba.cut(line, hmm=True)``'s exactly; each disagreement is put in
a kind by the characters of the first differing stretch, and a few are printed.

Speed: the SimHash texts' lines cut by both, ``"\\x1f".join(rjieba.cut(line, hmm=True))`` and
``segment.cut_joined(line)``, alternating pass by pass (A B A B ...) in one process; printed:
each one's best pass in microseconds a SimHash text (process CPU) and the ratio C/rjieba. Then
the same for ``Fingerprinter.fingerprint`` of the texts, its line cache emptied before each
pass, with each cut (and whether the fingerprints are identical).

    python benchmarks/segment_study.py --passes 20
"""

from __future__ import annotations

import argparse
import collections
import functools
import random
import time

import rjieba
from corpus import add_data_option, load_jsonl

from scrapy_neardup.fingerprints import segment
from scrapy_neardup.fingerprints.fingerprint import CUT_LINES, Fingerprinter
from scrapy_neardup.fingerprints.text import split_sentences

CORPORA = {
    "zh-pd199801/pd199801_dev.jsonl.gz": "text",
    "zh-cwce/zh_cwce.jsonl.gz": "text",
    "zh-gne-testpages/gne_testpages.jsonl.gz": "gne_text",
    "en-aeb/aeb.jsonl.gz": "text",
}


def simhash_lines(fingerprinter: Fingerprinter, texts: list[str]) -> list[list[str]]:
    """The lines the fingerprinter's tokenizer cache is asked for, text by text."""
    asked: list[str] = []
    cut_line = fingerprinter._cut_line

    def recording(line: str) -> str:
        asked.append(line)
        return cut_line(line)

    fingerprinter._cut_line = recording  # type: ignore[method-assign]
    per_text = []
    for text in texts:
        asked.clear()
        fingerprinter.fingerprint(text)
        per_text.append([line for line in asked if line])
    return per_text


def dictionary_words() -> list[str]:
    """Every word of jieba's dictionary, each a line."""
    with open(segment._jieba_file("dict.txt"), encoding="utf-8") as handle:
        return [line.split()[0] for line in handle if line.strip()]


def random_mixes(words: list[str], count: int) -> list[str]:
    """Lines of dictionary words, their first characters and the characters that decide
    the rules' edges (kana, Hangul, CJK outside jieba's HMM range, beyond the BMP, digits,
    letters and the "._-%+#&" that jieba's blocks keep), seeded."""
    rng = random.Random(1998)
    odd = [*"までの아한국αéü07x.-_%+#&㐀䶵𠀀𪚥豈\u9fd6\u9fff〇ⅰ١１", "12", "abc", "ab.3"]
    lines = []
    for _ in range(count):
        parts = []
        for _ in range(rng.randint(1, 12)):
            draw = rng.random()
            word = rng.choice(words)
            parts.append(word if draw < 0.6 else word[0] if draw < 0.8 else rng.choice(odd))
        lines.append("".join(parts))
    return lines


def kind(line: str, ours: list[str], theirs: list[str]) -> str:
    """What the first differing stretch of the two cuts is made of."""
    start = 0
    for a, b in zip(ours, theirs):
        if a != b:
            break
        start += len(a)
    end = start + max(len(ours[0]), 1)
    stretch = line[start : end + 8]
    if any(c.isascii() for c in stretch):
        return "latin/digits"
    if any(not 0x4E00 <= ord(c) <= 0x9FD5 for c in stretch):
        return "other script"
    return "han"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_data_option(parser)
    parser.add_argument("--passes", type=int, default=20)
    parser.add_argument("--examples", type=int, default=12)
    parser.add_argument("--mixes", type=int, default=200_000, help="random lines to compare")
    args = parser.parse_args()
    segment.loaded()
    fingerprinter = Fingerprinter(tokenizer=None)
    texts = []
    for name, field in CORPORA.items():
        texts += [record[field] for record in load_jsonl(args.data / name) if record.get(field)]
    per_text = simhash_lines(fingerprinter, texts)
    sentences = [s for text in texts for s in split_sentences(text, 0) if s]
    kinds: collections.Counter[str] = collections.Counter()
    examples: list[tuple[str, list[str], list[str]]] = []
    sections = {
        "simhash lines": [line for ls in per_text for line in ls],
        "sentences": sentences,
        "dictionary words": dictionary_words(),
        "random mixes": random_mixes(dictionary_words(), args.mixes),
    }
    for label, lines in sections.items():
        same = 0
        for line in lines:
            ours = segment.cut_joined(line).split("\x1f")
            theirs = rjieba.cut(line, hmm=True)
            if ours == theirs:
                same += 1
                continue
            kinds[kind(line, ours, theirs)] += 1
            if len(examples) < args.examples:
                examples.append((line, ours, theirs))
        print(f"{label}: {same}/{len(lines)} lines agree ({100 * same / max(len(lines), 1):.3f}%)")
    print("disagreements by kind:", dict(kinds))
    for _line, ours, theirs in examples:
        first = next((i for i, (a, b) in enumerate(zip(ours + [""], theirs + [""])) if a != b), 0)
        print(
            f"  C: {'/'.join(ours[max(first - 2, 0) : first + 4])}  rjieba: {'/'.join(theirs[max(first - 2, 0) : first + 4])}"
        )

    def ours_pass() -> None:
        for lines in per_text:
            for line in lines:
                segment.cut_joined(line)

    def theirs_pass() -> None:
        for lines in per_text:
            for line in lines:
                "\x1f".join(rjieba.cut(line, hmm=True))

    best = {"C": float("inf"), "rjieba": float("inf")}
    for _ in range(args.passes):
        for name, run in (("rjieba", theirs_pass), ("C", ours_pass)):
            began = time.process_time()
            run()
            best[name] = min(best[name], time.process_time() - began)
    count = len(per_text)
    chars = sum(len(line) for lines in per_text for line in lines) / count
    print(f"{count} SimHash texts, {chars:.0f} characters each on average, best of {args.passes} passes:")
    for name, seconds in best.items():
        print(f"  {name}: {1e6 * seconds / count:.2f} us a SimHash text")
    print(f"  ratio C/rjieba: {best['C'] / best['rjieba']:.3f}")
    fingerprint_passes(texts, args.passes)


def fingerprint_passes(texts: list[str], passes: int) -> None:
    """``Fingerprinter.fingerprint`` of every text, its line cache emptied before each pass (as
    a crawl cuts new stories), with rjieba and with the C cut in turn; the fingerprints compared."""
    with_rjieba = Fingerprinter()
    rjieba_cut = with_rjieba.tokenizer.cut
    # rjieba's cut throughout (a fingerprinter takes the C cut after segment.SWITCH_AFTER lines)
    with_rjieba._cut_line = functools.lru_cache(maxsize=CUT_LINES)(
        lambda line: segment.SEPARATOR.join(rjieba_cut(line))
    )
    with_c = Fingerprinter()
    with_c._cut_line = functools.lru_cache(maxsize=CUT_LINES)(segment.cut_joined)

    def fields(fingerprinter: Fingerprinter, text: str) -> tuple:
        found = fingerprinter.fingerprint(text)
        return found.simhash, found.tokens, found.sentence_keys, found.chars

    same = all(fields(with_c, t) == fields(with_rjieba, t) for t in texts)
    best = {"C": float("inf"), "rjieba": float("inf")}
    for _ in range(passes):
        for name, fingerprinter in (("rjieba", with_rjieba), ("C", with_c)):
            fingerprinter._cut_line.cache_clear()
            began = time.process_time()
            for text in texts:
                fingerprinter.fingerprint(text)
            best[name] = min(best[name], time.process_time() - began)
    print(f"Fingerprinter.fingerprint of the {len(texts)} texts, fingerprints identical: {same}")
    for name, seconds in best.items():
        print(f"  {name}: {1e6 * seconds / len(texts):.2f} us a text")
    print(f"  ratio C/rjieba: {best['C'] / best['rjieba']:.3f}")


if __name__ == "__main__":
    main()
