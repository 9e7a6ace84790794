"""Why two texts are, or are not, one story: the verdict and the signals behind it.

The verdict is the engine's own: text A is filed in an empty memory store and text B checked
against it, as ``neardup dedup`` would check B arriving after A. The signals are what the
engine reads on the way: the nshash sentence keys the two share (with the sentences), the
SimHash distance, containment and Jaccard from the sketches, and, given a store, the shared
sentences that store holds as boilerplate (filed by ``boilerplate_limit`` stories or more:
neither key nor evidence), which are then left out of the verdict too.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from ..engine.detector import Detector
from ..engine.samestory import Judgement
from ..engine.samestory import judge as same_story
from ..engine.verdicts import Thresholds, Verdict
from ..fingerprints.fingerprint import Fingerprint, Fingerprinter, Recipe
from ..fingerprints.simhash import hamming
from ..fingerprints.sketch import resemblance
from ..fingerprints.text import content_bytes, fold_codes, sentences_of, span_key
from ..stores import Probe, Store, open_store
from ..stores.base import sentence_bucket
from .marking import Alignment, align


@dataclass
class Explanation:
    verdict: Verdict  # B's, checked after A
    shared_sentences: list[str]  # the longest sentences both have (nshash keys), longest first
    boilerplate: list[str]  # shared sentences the given store holds as boilerplate: left out
    distance: int  # SimHash Hamming distance
    simhash_k: int  # SimHash candidates are within this distance
    jaccard: float
    containment: float  # of the smaller text in the larger
    a_chars: int  # content characters
    b_chars: int
    alignment: Alignment
    judgement: Judgement  # the engine's rule for the pair: which case it is and why

    def signals(self) -> dict:
        """The figures as JSON-ready values."""
        return {
            "verdict": self.verdict.status,
            "method": self.verdict.method,
            "rule": self.judgement.rule,
            "reason": self.judgement.reason("A", "B"),
            "containment": round(self.containment, 4),
            "jaccard": round(self.jaccard, 4),
            "simhash_distance": self.distance,
            "shared_sentences": self.shared_sentences,
            "boilerplate_left_out": self.boilerplate,
            "a_chars": self.a_chars,
            "b_chars": self.b_chars,
            "shared_chars": self.alignment.shared,
        }


def sentence_texts(text: str) -> dict[int, str]:
    """Sentence hash -> the sentence (content characters), for every sentence of ``text``;
    the hash is the one fingerprints use as an nshash key."""
    found = sentences_of(fold_codes(text))
    content = content_bytes(found.content)
    shown: dict[int, str] = {}
    for index, (start, length) in enumerate(zip(found.starts.tolist(), found.lengths.tolist())):
        shown.setdefault(span_key(content, start, start + length), found.text(index))
    return shown


def boilerplate_keys(store: Store, keys: list[int], limit: int) -> set[int]:
    """The keys among ``keys`` that ``store`` has filed for ``limit`` stories or more. Each
    sentence bucket is read as a plain bucket (capped at ``limit`` members), so a crowded
    one is counted instead of skipped."""
    probes = [Probe([], [sentence_bucket(key)], bucket_read_limit=limit) for key in keys]
    found = store.find_candidates(probes) if probes else []
    return {key for key, members in zip(keys, found) if len(members) >= limit}


def explain(
    a: str,
    b: str,
    recipe: Recipe | None = None,
    thresholds: Thresholds | None = None,
    store: Store | None = None,
    boilerplate_limit: int = 5,
    titles: tuple[str | None, str | None] = (None, None),
) -> Explanation:
    """Judge ``b`` against ``a`` (A first) and gather the signals; ``store`` (read only)
    supplies the boilerplate counts of a real run; ``titles`` are their headlines, if known."""
    fingerprinter = Fingerprinter(store.recipe if store is not None else recipe)
    one, other = fingerprinter.fingerprint(a, titles[0]), fingerprinter.fingerprint(b, titles[1])
    noise = set()
    if store is not None:
        asked = sorted(set(one.sentence_keys + one.sketch_keys) | set(other.sentence_keys + other.sketch_keys))
        noise = boilerplate_keys(store, asked, boilerplate_limit)
    checker = Detector(
        open_store("memory://", recipe=fingerprinter.recipe),
        thresholds,
        boilerplate_limit=boilerplate_limit,
        fingerprinter=fingerprinter,
    )
    checker.check_fingerprint("A", _without(one, noise))
    verdict = checker.check_fingerprint("B", _without(other, noise))
    judgement = same_story(one, other, thresholds)
    texts = {**sentence_texts(a), **sentence_texts(b)}
    shared_keys = [key for key in one.sentence_keys if key in set(other.sentence_keys)]
    jaccard, containment = resemblance(one.sketch, other.sketch)
    return Explanation(
        verdict=verdict,
        shared_sentences=[texts.get(key, "") for key in shared_keys if key not in noise],
        boilerplate=[texts.get(key, "") for key in shared_keys if key in noise],
        distance=hamming(one.simhash, other.simhash),
        simhash_k=fingerprinter.recipe.simhash_k,
        jaccard=jaccard,
        containment=containment,
        a_chars=one.chars,
        b_chars=other.chars,
        alignment=align(a, b),
        judgement=judgement,
    )


def _without(fingerprint: Fingerprint, noise: set[int]) -> Fingerprint:
    """The fingerprint with boilerplate keys taken out, as the store would skip them."""
    if not noise:
        return fingerprint
    return replace(
        fingerprint,
        sentence_keys=[k for k in fingerprint.sentence_keys if k not in noise],
        sketch_keys=[k for k in fingerprint.sketch_keys if k not in noise],
    )
