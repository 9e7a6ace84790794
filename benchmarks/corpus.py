"""Documents for the benchmarks: real news from ``../shared/data`` and cheap synthetic fillers.

Shared by the benchmark scripts so that they read the data the same way. Nothing here
imports the engine, so a baseline can be measured on exactly the same texts.

- :func:`load_articles` reads a JSON-lines corpus (gzip or plain) of the shared data dir.
- :func:`news_length_docs` joins consecutive articles into news-length texts.
- :class:`FillerTexts` makes any number of distinct, deterministic news-length texts that are
  not near-duplicates of each other (sampled corpus sentences with a few two-character spans
  replaced by common words in each), to fill a store to a given size.
- :func:`reprint` makes a simple site reprint of a text (banner, edits, cut end).
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import random
import re
from collections.abc import Callable, Iterator
from pathlib import Path

import numpy as np

from scrapy_neardup.newsworld import transforms

REPO_ROOT = Path(__file__).resolve().parent.parent

DEFAULT_DATA = REPO_ROOT.parent / "shared" / "data"
PD199801 = "zh-pd199801/pd199801_dev.jsonl.gz"

_SENTENCE_END = re.compile(r"(?<=[。！？；!?;…])|\n")  # as every splitter of the compared methods
_CJK_WORD = re.compile(r"[\u4e00-\u9fff]+")
_TABLE = 1 << 16


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


def news_length_docs(articles: list[dict], min_chars: int = 1000, max_chars: int = 2000) -> list[str]:
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

    Each text is a run of corpus sentences (drawn until it reaches a length drawn from
    ``chars``) in which each Chinese word of one to four characters is, with probability
    ``1 - keep``, replaced by a word of the same length drawn from the corpus vocabulary with
    its corpus frequency; punctuation, digits, Latin and longer words stay. The texts keep the
    corpus's sentence lengths, punctuation, word lengths and word frequencies, so tokenizing,
    weighting and hashing cost what real news costs, with a few new tokens per text as in a
    real stream, and no two share a sentence.

    Why not the corpus sentences with a few characters changed: at a million texts every pool
    sentence would recur in thousands of them nearly whole, and an index keyed on shingles
    (bottom-k sketch keys) would meet those shared runs in every lookup. Here texts share
    short runs of kept words, the way news shares common phrases: ``keep = 0.6`` makes the
    share of a text's 5-shingles that occur in another of 300 texts about 8%, as among 300
    news-length texts of the People's Daily corpus. Measure on texts whose articles are not in
    ``pool``, or they share far more with the fillers than other news would.

    The random draws of a block of ``block`` texts are made at once with numpy (a text costs
    tens of microseconds, well below what is measured); ``cut`` is the word segmenter used
    once on the pool (default: rjieba, else jieba).
    """

    def __init__(
        self,
        pool: list[str],
        seed: int = 1998,
        chars: tuple[int, int] = (1000, 2000),
        paragraph: tuple[int, int] = (3, 6),
        block: int = 1000,
        cut: Callable[[str], list[str]] | None = None,
        keep: float = 0.6,
    ):
        pool = [s for s in pool if 12 <= len(s) <= 200]  # a few run-on "sentences" are paragraphs
        if len(pool) < 1000:
            raise ValueError(f"a sentence pool of {len(pool)} is too small for distinct fillers")
        cut = cut or default_cut()
        self.seed = seed
        self.chars = chars
        self.paragraph = paragraph
        self.block = block
        self.keep = keep
        tokens = [cut(s) for s in pool]
        if any("".join(t) != s for t, s in zip(tokens, pool)):
            raise ValueError("the segmenter must return tokens that join back into the sentence")
        flat = [w for t in tokens for w in t]
        counts: dict[str, int] = {}
        for w in flat:
            if 1 <= len(w) <= 4 and _CJK_WORD.fullmatch(w):
                counts[w] = counts.get(w, 0) + 1
        vocab = sorted(counts)
        # Source of every output character: the pool, then the vocabulary, then 3 tail marks
        # (0: nothing, line break, 1: end of text).
        pool_text, vocab_text = "".join(pool), "".join(vocab)
        self._source = np.frombuffer((pool_text + vocab_text + "\x00\n\x01").encode("utf-32-le"), dtype=np.uint32)
        self._tail = len(pool_text) + len(vocab_text)
        self._tok_len = np.array([len(w) for w in flat], dtype=np.int64)
        self._tok_start = np.concatenate([[0], self._tok_len.cumsum()[:-1]])
        self._tok_word = np.array([w in counts for w in flat], dtype=bool)
        ntok = np.array([len(t) for t in tokens], dtype=np.int64)
        self._sent_ntok = ntok
        self._sent_tok0 = np.concatenate([[0], ntok.cumsum()[:-1]])
        self._lengths = np.array([len(s) for s in pool], dtype=np.int64)
        self._slots = int(chars[1] / self._lengths.mean() * 1.5) + 8  # sentences drawn per text
        vocab_len = np.array([len(w) for w in vocab], dtype=np.int64)
        vocab_start = len(pool_text) + np.concatenate([[0], vocab_len.cumsum()[:-1]])
        freq = np.array([counts[w] for w in vocab], dtype=np.float64)
        # Per word length, a table of 2**16 source offsets in which each word appears in
        # proportion to its frequency: a draw is one random index (inverse-CDF sampling).
        # Row 0 and rows of absent lengths are never drawn from: only tokens of a present length are replaced.
        self._words = np.zeros((5, _TABLE), dtype=np.int64)
        for length in range(1, 5):
            mask = vocab_len == length
            if mask.any():
                cum = freq[mask].cumsum()
                picks = np.searchsorted(cum / cum[-1], (np.arange(_TABLE) + 0.5) / _TABLE)
                self._words[length] = vocab_start[mask][np.minimum(picks, mask.sum() - 1)]
        self._tok_word &= np.isin(self._tok_len, [n for n in range(1, 5) if (vocab_len == n).any()])
        self._cache: tuple[int, list[str]] | None = None

    def _make_block(self, number: int) -> list[str]:
        rng = np.random.default_rng([self.seed, number])
        n, slots = self.block, self._slots
        picks = rng.integers(0, len(self._lengths), size=(n, slots))
        targets = rng.integers(self.chars[0], self.chars[1] + 1, size=n)
        counts = np.minimum((self._lengths[picks].cumsum(axis=1) < targets[:, None]).sum(axis=1) + 1, slots)
        used = np.arange(slots)[None, :] < counts[:, None]  # (n, slots): slots that go in a text
        # a paragraph break after a sentence with probability 1 / mean paragraph length
        breaks = rng.random((n, slots)) < 2.0 / (self.paragraph[0] + self.paragraph[1])
        last = np.zeros_like(used)
        last[np.arange(n), counts - 1] = True
        sel = picks[used]  # the sentences used, in output order
        tail = self._tail + np.where(last[used], 2, np.where(breaks[used], 1, 0))
        # Output tokens: each sentence's tokens, then one tail mark.
        per = self._sent_ntok[sel] + 1
        total_tokens = int(per.sum())
        group = np.concatenate([[0], per.cumsum()[:-1]])
        within = np.arange(total_tokens) - np.repeat(group, per)
        is_tail = within == np.repeat(per - 1, per)
        token = np.where(is_tail, 0, np.repeat(self._sent_tok0[sel], per) + within)
        lengths = np.where(is_tail, 1, self._tok_len[token])
        source = np.where(is_tail, np.repeat(tail, per), self._tok_start[token])
        replace = ~is_tail & self._tok_word[token]
        if self.keep:
            replace &= rng.random(total_tokens) >= self.keep
        draws = rng.integers(0, _TABLE, size=total_tokens)
        source = np.where(replace, self._words[np.minimum(lengths, 4), draws], source)
        out_start = np.concatenate([[0], lengths.cumsum()[:-1]])
        gather = np.repeat(source - out_start, lengths) + np.arange(int(lengths.sum()))
        codes = self._source[gather]
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


def default_cut() -> Callable[[str], list[str]]:
    """A Chinese word segmenter: rjieba when installed, else jieba."""
    try:
        import rjieba

        return lambda text: rjieba.cut(text, hmm=True)
    except ImportError:
        import jieba

        jieba.setLogLevel(60)
        return lambda text: jieba.lcut(text, HMM=True)


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
    paragraphs = transforms.keep_first(text.split("\n"), rng)
    body = transforms.random_substitutions(paragraphs, rng, "的一是在不了有和人这中大为上个国", rng.randint(1, 4))
    banner = rng.choice(BANNERS).format(title=text.split("\n")[0][:20])
    body_text = "\n".join(body).replace("，", ",", rng.randint(0, 3))
    return f"{banner}\n{body_text}\n（责任编辑：李{rng.choice('明华军芳')}）"
