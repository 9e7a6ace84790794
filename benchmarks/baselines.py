"""Peer methods that scrapy_neardup is compared with, each behind one small interface.

Every method sees the documents in arrival order and answers, for each one, whether it is a
duplicate of something seen before and, when it can tell, the key of that earlier document.
Only first-seen documents are indexed by the MinHash and SimHash peers, as a dedup pipeline
that keeps the first copy would do; published nshash files every document under its
story id, as its author's code does.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field

from scrapy_neardup.fingerprints.text import content_chars, normalize


@dataclass
class Outcome:
    duplicate: bool
    match: str | None = None  # key of the earlier document it was matched to, when known
    info: dict = field(default_factory=dict)


class Method:
    """A near-duplicate detector fed one document at a time."""

    name = "method"

    def check(self, key: str, text: str) -> Outcome:
        raise NotImplementedError

    def warm_up(self) -> None:
        """Load dictionaries and the like before the timed run."""


class PublishedNshash(Method):
    """nshash as published (veelion/nshash), written here from its description.

    The text is split into sentences on Chinese sentence punctuation and line breaks; the
    ``top_n`` longest sentences longer than ``min_chars`` are hashed with md5; a dict maps each
    hash to a similar_id. A document whose top-n hashes include a known one takes that
    similar_id and is a duplicate; its hashes are then filed under the same similar_id. No
    normalisation and no verification: that is the method being compared.
    """

    name = "nshash (published)"
    _split = re.compile(r"[。！？；…\n]")

    def __init__(self, top_n: int = 5, min_chars: int = 6):
        self.top_n = top_n
        self.min_chars = min_chars
        self.hashes: dict[str, int] = {}
        self.first_key: dict[int, str] = {}

    def top_hashes(self, text: str) -> list[str]:
        sentences = [s.strip() for s in self._split.split(text)]
        sentences = [s for s in sentences if len(s) > self.min_chars]
        sentences.sort(key=len, reverse=True)
        return [hashlib.md5(s.encode("utf-8")).hexdigest() for s in sentences[: self.top_n]]

    def check(self, key: str, text: str) -> Outcome:
        hashes = self.top_hashes(text)
        similar_id = next((self.hashes[h] for h in hashes if h in self.hashes), None)
        duplicate = similar_id is not None
        if similar_id is None:
            similar_id = len(self.first_key) + 1
            self.first_key[similar_id] = key
        for h in hashes:
            self.hashes.setdefault(h, similar_id)
        return Outcome(duplicate, self.first_key[similar_id] if duplicate else None, {"similar_id": similar_id})


def _shingles(text: str, width: int = 5) -> set[str]:
    chars = content_chars(normalize(text))
    if len(chars) < width:
        return {chars} if chars else set()
    return {chars[i : i + width] for i in range(len(chars) - width + 1)}


class MinHashLSHMethod(Method):
    """datasketch MinHashLSH over character 5-gram shingles of the normalised text.

    Query, then insert the document when nothing was found. The LSH answer is taken as the
    verdict, as users of MinHashLSH for dedup do; its bands make the threshold approximate.
    """

    def __init__(self, threshold: float = 0.5, num_perm: int = 128, width: int = 5):
        from datasketch import MinHash, MinHashLSH

        self._minhash = MinHash
        self.name = f"MinHashLSH t={threshold:g}"
        self.lsh = MinHashLSH(threshold=threshold, num_perm=num_perm)
        self.num_perm = num_perm
        self.width = width
        self.order: dict[str, int] = {}

    def check(self, key: str, text: str) -> Outcome:
        m = self._minhash(num_perm=self.num_perm, seed=1)
        m.update_batch(s.encode("utf-8") for s in _shingles(text, self.width))
        found = self.lsh.query(m)
        if found:
            first = min(found, key=self.order.__getitem__)
            return Outcome(True, first, {"candidates": len(found)})
        self.order[key] = len(self.order)
        self.lsh.insert(key, m)
        return Outcome(False)


class SimhashPackage(Method):
    """The PyPI ``simhash`` package as its README uses it: Simhash(text), SimhashIndex(k).

    Its own features (lower-cased word characters, sliding 4-character windows) on the
    normalised text; 64 bits; a document within Hamming distance ``k`` of an indexed one is a
    duplicate. No verification.
    """

    def __init__(self, k: int = 3):
        from simhash import Simhash, SimhashIndex

        self._simhash = Simhash
        self.name = f"simhash (PyPI) k={k}"
        self.index = SimhashIndex([], k=k)
        self.order: dict[str, int] = {}
        self.values: dict[str, object] = {}

    def check(self, key: str, text: str) -> Outcome:
        value = self._simhash(normalize(text))
        found = self.index.get_near_dups(value)
        if found:
            first = min(found, key=self.order.__getitem__)
            return Outcome(True, first, {"distance": value.distance(self.values[first])})
        self.order[key] = len(self.order)
        self.values[key] = value
        self.index.add(key, value)
        return Outcome(False)


def _words(text: str) -> list[str]:
    """Word tokens of the normalised text (jieba's cut), punctuation and spaces left out."""
    from scrapy_neardup.fingerprints.text import get_tokenizer

    return [w for w in get_tokenizer().cut(normalize(text)) if content_chars(w)]


class IMatch(Method):
    """I-Match (Chowdhury, Frieder, Grossman, McCabe 2002), written here from its description.

    A lexicon keeps the words of middling collection frequency (here: jieba's IDF table, the
    band between two percentiles of its idf values, so that the most common words and the
    rarest fall out); a document's fingerprint is a hash of the sorted set of its words that
    are in the lexicon. Documents with equal fingerprints are duplicates: one hash per
    document, no similarity measure.
    """

    name = "I-Match"

    def __init__(self, low: float = 0.1, high: float = 0.9):
        self.band = (low, high)
        self.seen: dict[str, str] = {}
        self.lexicon: set[str] = set()

    def warm_up(self) -> None:
        import jieba.analyse

        idf = jieba.analyse.default_tfidf.idf_freq
        values = sorted(idf.values())
        lo, hi = (values[int(q * (len(values) - 1))] for q in self.band)
        self.lexicon = {word for word, value in idf.items() if lo <= value <= hi}

    def check(self, key: str, text: str) -> Outcome:
        if not self.lexicon:
            self.warm_up()
        terms = sorted({w for w in _words(text) if w in self.lexicon})
        digest = hashlib.sha1("\x1f".join(terms).encode("utf-8")).hexdigest()
        first = self.seen.get(digest)
        if first is not None and terms:
            return Outcome(True, first, {"terms": len(terms)})
        self.seen.setdefault(digest, key)
        return Outcome(False)


class SpotSigs(Method):
    """SpotSigs (Theobald, Siddharth, Paepcke 2008), written here from its description.

    A spot signature is an antecedent (a stopword) chained with the next ``chain`` words that
    are not stopwords; a page's boilerplate is poor in such chains, its running text rich.
    Two documents are duplicates when the Jaccard similarity of their signature sets reaches
    ``threshold``. Candidates come from an inverted index of signatures (the paper partitions
    by set size; the index gives the same answers). For Chinese the antecedents are common
    function words.
    """

    ANTECEDENTS = frozenset(
        [
            "的",
            "了",
            "在",
            "是",
            "和",
            "与",
            "对",
            "将",
            "为",
            "等",
            "也",
            "都",
            "而",
            "及",
            "从",
            "被",
            "把",
            "向",
            "这",
            "该",
        ]
    )

    def __init__(self, threshold: float = 0.4, chain: int = 2):
        self.name = f"SpotSigs t={threshold:g}"
        self.threshold = threshold
        self.chain = chain
        self.signatures: dict[str, frozenset[str]] = {}
        self.order: dict[str, int] = {}
        self.index: dict[str, list[str]] = {}

    def spots(self, text: str) -> frozenset[str]:
        words = _words(text)
        found = set()
        for i, word in enumerate(words):
            if word not in self.ANTECEDENTS:
                continue
            following = [w for w in words[i + 1 : i + 1 + 4 * self.chain] if w not in self.ANTECEDENTS]
            if len(following) >= self.chain:
                found.add(word + ":" + "|".join(following[: self.chain]))
        return frozenset(found)

    def check(self, key: str, text: str) -> Outcome:
        mine = self.spots(text)
        candidates = {other for sig in mine for other in self.index.get(sig, ())}
        for other in sorted(candidates, key=self.order.__getitem__):
            theirs = self.signatures[other]
            jaccard = len(mine & theirs) / len(mine | theirs)
            if jaccard >= self.threshold:
                return Outcome(True, other, {"jaccard": round(jaccard, 3)})
        self.signatures[key] = mine
        self.order[key] = len(self.order)
        for sig in mine:
            self.index.setdefault(sig, []).append(key)
        return Outcome(False)


def simhash_package_available() -> bool:
    try:
        import simhash  # noqa: F401
    except ImportError:
        return False
    return True
