"""Documents for the benchmarks: real news from ``../shared/data`` and cheap synthetic fillers.

Shared by the benchmark scripts so that they read the data the same way. Nothing here
imports the engine, so a baseline can be measured on exactly the same texts.

- :func:`load_articles` reads a JSON-lines corpus (gzip or plain) of the shared data dir.
- :func:`news_length_docs` joins consecutive articles into news-length texts.
- :class:`FillerTexts` makes any number of distinct, deterministic news-length texts that are
  not near-duplicates of each other (sampled corpus sentences with a few characters changed
  in each), to fill a store to a given size.
- :func:`reprint` makes a simple site reprint of a text (banner, edits, cut end).
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import random
import re
from pathlib import Path
from typing import Iterator

import numpy as np

REPO_ROOT = Path(__file__).resolve().parent.parent
DEFAULT_DATA = REPO_ROOT.parent / "shared" / "data"
PD199801 = "zh-pd199801/pd199801_dev.jsonl.gz"

_SENTENCE_END = re.compile(r"(?<=[。！？；!?;…])|\n")  # as every splitter of the compared methods
_CJK = re.compile(r"[\u4e00-\u9fff]")


def add_data_option(parser: argparse.ArgumentParser) -> None:
    """``--data DIR``: the shared data directory (default ``../shared/data`` from the repo)."""
    parser.add_argument(
        "--data",
        type=Path,
        default=DEFAULT_DATA,
        help="shared data directory (default: ../shared/data relative to the repository root)",
    )


def load_jsonl(path: str | os.PathLike) -> Iterator[dict]:
    """Records of a JSON-lines file, gzip-compressed when the name ends in ``.gz``."""
    opener = gzip.open if str(path).endswith(".gz") else open
    with opener(path, "rt", encoding="utf-8") as handle:
        for line in handle:
            if line.strip():
                yield json.loads(line)


def load_articles(data_dir: str | os.PathLike, name: str = PD199801) -> list[dict]:
    """Articles (``{"id", "title", "text"}``) of one corpus of the shared data directory."""
    path = Path(data_dir) / name
    if not path.exists():
        raise SystemExit(f"corpus not found: {path} (give the shared data directory with --data)")
    return [a for a in load_jsonl(path) if a.get("text")]


def split_sentences(text: str, min_chars: int = 8) -> list[str]:
    """Sentences with their end punctuation, as a reprint site would copy them."""
    return [s for s in (p.strip() for p in _SENTENCE_END.split(text)) if len(s) >= min_chars]


def _cut(text: str, max_chars: int) -> str:
    """``text`` cut at the last sentence end before ``max_chars``."""
    if len(text) <= max_chars:
        return text
    head = text[:max_chars]
    ends = [m.end() for m in re.finditer(r"[。！？\n]", head)]
    return head[: ends[-1]].rstrip() if ends else head


def news_length_docs(
    articles: list[dict], min_chars: int = 1000, max_chars: int = 2000
) -> list[str]:
    """Consecutive articles joined until each text has ``min_chars`` to ``max_chars`` characters.

    The corpus median is below news length today, so short items are joined in order; a
    text that grows past ``max_chars`` is cut at a sentence end. Leftovers shorter than
    ``min_chars`` at the end of the corpus are dropped.
    """
    docs: list[str] = []
    parts: list[str] = []
    size = 0
    for article in articles:
        parts.append(article["text"].strip())
        size += len(parts[-1]) + 1
        if size >= min_chars:
            text = _cut("\n".join(parts), max_chars)
            if len(text) >= min_chars:
                docs.append(text)
            parts, size = [], 0
    return docs


def sentence_pool(articles: list[dict], min_chars: int = 12) -> list[str]:
    """Distinct sentences of the corpus, in corpus order."""
    return list(dict.fromkeys(s for a in articles for s in split_sentences(a["text"], min_chars)))


class FillerTexts:
    """Distinct news-length texts, the ``i``-th always the same for a given seed.

    Each text is corpus sentences from ``pool``, drawn until it reaches a length drawn from
    ``chars``, with ``substitutions`` two-character spans of every sentence replaced by
    common two-character words. Two fillers rarely share a pool sentence, and a shared one
    differs in its replaced spans, so sentence hashes and most shingles differ: a filler is
    a new story for any detector. Replacing by dictionary words (rather than random
    characters) keeps the tokenizer's vocabulary realistic: a few new tokens per text, as in
    a real news stream, not dozens. The random draws of a block of ``block`` texts are made
    at once with numpy, so a text costs tens of microseconds, well below what is measured.
    """

    def __init__(
        self,
        pool: list[str],
        seed: int = 1998,
        chars: tuple[int, int] = (1000, 2000),
        substitutions: tuple[int, int] = (2, 3),
        paragraph: tuple[int, int] = (3, 6),
        block: int = 1000,
        words: list[str] | None = None,
    ):
        pool = [s for s in pool if 12 <= len(s) <= 200]  # a few run-on "sentences" are paragraphs
        if len(pool) < 1000:
            raise ValueError(f"a sentence pool of {len(pool)} is too small for distinct fillers")
        self.seed = seed
        self.chars = chars
        self.substitutions = substitutions
        self.paragraph = paragraph
        self.block = block
        # The pool as one array of code points, so a block of texts is built by numpy gathers.
        self._codes = np.frombuffer("".join(pool).encode("utf-32-le"), dtype=np.uint32)
        self._lengths = np.array([len(s) for s in pool], dtype=np.int64)
        self._starts = np.concatenate([[0], self._lengths.cumsum()[:-1]])
        self._slots = int(chars[1] / self._lengths.mean() * 1.5) + 8  # sentences drawn per text
        words = [w for w in (words or common_words(pool)) if len(w) == 2]
        self._words = np.frombuffer("".join(words).encode("utf-32-le"), dtype=np.uint32).reshape(-1, 2)
        self._cache: tuple[int, list[str]] | None = None

    def _make_block(self, number: int) -> list[str]:
        rng = np.random.default_rng([self.seed, number])
        n, slots = self.block, self._slots
        picks = rng.integers(0, len(self._lengths), size=(n, slots))
        targets = rng.integers(self.chars[0], self.chars[1] + 1, size=n)
        lengths = self._lengths[picks]
        counts = np.minimum((lengths.cumsum(axis=1) < targets[:, None]).sum(axis=1) + 1, slots)
        used = np.arange(slots)[None, :] < counts[:, None]  # (n, slots): slots that go in a text
        most = self.substitutions[1]
        subs = rng.integers(self.substitutions[0], most + 1, size=(n, slots))
        # span starts, the end punctuation kept
        where = (rng.random((n, slots, most)) * (lengths[:, :, None] - 2)).astype(np.int64)
        words = self._words[rng.integers(0, len(self._words), size=(n, slots, most))]
        # a paragraph break after a sentence with probability 1 / mean paragraph length
        breaks = rng.random((n, slots)) < 2.0 / (self.paragraph[0] + self.paragraph[1])
        # Every used sentence is copied with one extra trailing character: a line break, a
        # 0 to be removed, or at a text's last sentence the text separator 1.
        sel = picks[used]
        sizes = self._lengths[sel] + 1
        out_starts = np.concatenate([[0], sizes.cumsum()[:-1]])
        total = int(sizes.sum())
        gather = np.repeat(self._starts[sel] - out_starts, sizes) + np.arange(total)
        codes = self._codes[np.minimum(gather, len(self._codes) - 1)].copy()
        ends = out_starts + sizes - 1
        last = np.zeros_like(used)
        last[np.arange(n), counts - 1] = True
        tail = np.where(last[used], 1, np.where(breaks[used], 10, 0)).astype(np.uint32)
        codes[ends] = tail
        k = np.arange(most)[None, :] < subs[used][:, None]  # (sentences, most)
        positions = (out_starts[:, None] + where[used])[k]
        chosen = words[used][k]
        codes[positions] = chosen[:, 0]
        codes[positions + 1] = chosen[:, 1]
        codes = codes[codes != 0]
        text = codes.astype("<u4").tobytes().decode("utf-32-le")
        return [t.strip() for t in text.split("\x01")[:n]]

    def text(self, i: int) -> str:
        number, offset = divmod(i, self.block)
        if self._cache is None or self._cache[0] != number:
            self._cache = (number, self._make_block(number))
        return self._cache[1][offset]

    def chunk(self, start: int, stop: int) -> list[str]:
        """Texts ``start`` to ``stop - 1``."""
        out: list[str] = []
        i = start
        while i < stop:
            number, offset = divmod(i, self.block)
            take = min(stop - i, self.block - offset)
            block = self._cache[1] if self._cache and self._cache[0] == number else self._make_block(number)
            self._cache = (number, block)
            out.extend(block[offset : offset + take])
            i += take
        return out


def common_words(pool: list[str] | None = None, min_count: int = 1000) -> list[str]:
    """Common two-character Chinese words: from jieba's dictionary when jieba is installed,
    else the most frequent character pairs of ``pool``."""
    try:
        import jieba
    except ImportError:
        jieba = None
    if jieba is not None:
        path = Path(jieba.__file__).parent / "dict.txt"
        words = []
        with open(path, encoding="utf-8") as handle:
            for line in handle:
                word, count = line.split(" ")[:2]
                if len(word) == 2 and _CJK.fullmatch(word[0]) and _CJK.fullmatch(word[1]) and int(count) >= min_count:
                    words.append(word)
        return words
    if not pool:
        raise ValueError("without jieba, common_words needs a sentence pool")
    pairs: dict[str, int] = {}
    for sentence in pool:
        for i in range(len(sentence) - 1):
            pair = sentence[i : i + 2]
            if _CJK.fullmatch(pair[0]) and _CJK.fullmatch(pair[1]):
                pairs[pair] = pairs.get(pair, 0) + 1
    return sorted(pairs, key=pairs.get, reverse=True)[:5000]


BANNERS = [
    "来源：新华网 | 编辑：张伟 | 2024-05-01 08:00",
    "【环球时报综合报道】",
    "本文转载自人民网，版权归原作者所有。",
    "原标题：{title}",
]


def reprint(text: str, rng: random.Random) -> str:
    """A site's reprint of ``text``: banner on top, a few characters changed, end cut, editor line.

    Deliberately plain (the accuracy benchmark makes the hard ones); enough to give the speed
    benchmark a realistic share of duplicates that go through verification.
    """
    paragraphs = text.split("\n")
    keep = max(1, round(len(paragraphs) * rng.uniform(0.8, 1.0)))
    body = list("\n".join(paragraphs[:keep]))
    for _ in range(rng.randint(1, 4)):
        position = rng.randrange(len(body))
        if _CJK.match(body[position]):
            body[position] = rng.choice("的一是在不了有和人这中大为上个国")
    banner = rng.choice(BANNERS).format(title=paragraphs[0][:20])
    body_text = "".join(body).replace("，", ",", rng.randint(0, 3))
    return f"{banner}\n{body_text}\n（责任编辑：李{rng.choice('明华军芳')}）"
