"""Verdicts of stores compared with each other: ids renamed, a corpus checked in batches."""

from __future__ import annotations

from scrapy_neardup import Detector
from scrapy_neardup.stores import Store
from support import news_corpus


def renamed(verdicts: list[dict]) -> list[dict]:
    """Verdicts with ids renamed by first appearance: ids are each store's own (Redis files a
    duplicate before verifying it, and so uses up ids that the others never hand out)."""
    names: dict[int, int] = {}
    out = []
    for verdict in verdicts:
        verdict = dict(verdict)
        for field in ("doc_id", "similar_id"):
            if verdict[field] is not None:
                verdict[field] = names.setdefault(verdict[field], len(names) + 1)
        out.append(verdict)
    return out


def checked_in_batches(store: Store, size: int) -> list[dict]:
    """The news corpus's verdicts, checked ``size`` documents at a time."""
    detector = Detector(store)
    documents = [(key, detector.fingerprint(body)) for key, _, body in news_corpus.corpus()]
    verdicts = []
    for start in range(0, len(documents), size):
        verdicts += [v.as_dict() for v in detector.check_many(documents[start : start + size])]
    return verdicts
