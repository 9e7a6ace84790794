"""``memory://``: the reference store, in dicts. For tests and one-off batch runs."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

from .base import LocalStore
from .record import DocRecord, pack_text, unpack_text

# ``memory://NAME`` stores live as long as the process, so that two pipelines opening the
# same URI and namespace share one; plain ``memory://`` is private to its opener.
_SHARED: dict[tuple[str, str], dict] = {}


class MemoryStore(LocalStore):
    lasting = False

    @classmethod
    def from_uri(cls, uri: str, namespace: str = "default", **options: Any) -> MemoryStore:
        """``memory://`` is private to the store object; ``memory://NAME`` is shared by every
        store of that name in the process (spiders of one crawl)."""
        return cls(uri, namespace, shared=bool(uri.partition("://")[2]))

    def __init__(self, uri: str = "memory://", namespace: str = "default", shared: bool = False):
        self.uri = uri
        self.namespace = namespace
        space = _SHARED.setdefault((uri, namespace), {}) if shared else {}
        self._docs: dict[int, DocRecord] = space.setdefault("docs", {})
        self._buckets: dict[bytes, dict[int, None]] = space.setdefault("buckets", {})
        self._meta: dict = space.setdefault("meta", {})
        self._counter: list[int] = space.setdefault("counter", [0])
        self._texts: dict[int, bytes] = space.setdefault("texts", {})
        self._claimed: dict[int, int] = space.setdefault("claims", {})

    def _claims(self) -> dict[int, int]:
        return self._claimed

    def read_meta(self) -> dict | None:
        return self._meta.get("meta")

    def write_meta(self, meta: dict) -> None:
        self._meta["meta"] = meta

    def _members(self, bucket: bytes, limit: int) -> list[int]:
        members = self._buckets.get(bucket)
        if not members:
            return []
        out = []
        for doc_id in members:
            out.append(doc_id)
            if len(out) == limit:
                break
        return out

    def _records(self, doc_ids: Iterable[int]) -> list[DocRecord]:
        return [self._docs[i] for i in doc_ids if i in self._docs]

    def _next_id(self) -> int:
        self._counter[0] += 1
        return self._counter[0]

    def _save(self, record: DocRecord, buckets: list[bytes]) -> None:
        self._docs[record.doc_id] = record
        if record.text is not None:
            self._texts[record.doc_id] = pack_text(record.text)
            record.text = None  # kept compressed, as the other stores keep it
        for bucket in buckets:
            self._buckets.setdefault(bucket, {})[record.doc_id] = None

    def _delete(self, record: DocRecord, buckets: list[bytes]) -> None:
        self._docs.pop(record.doc_id, None)
        self._texts.pop(record.doc_id, None)
        for bucket in buckets:
            members = self._buckets.get(bucket)
            if members is not None:
                members.pop(record.doc_id, None)
                if not members:
                    del self._buckets[bucket]

    def purge(self, older_than: float) -> int:
        old = [r for r in self._docs.values() if r.time < older_than]
        for record in old:
            self._delete(record, self.buckets_of(record))
        return len(old)

    def texts(self, doc_ids: list[int]) -> dict[int, str]:
        return {i: unpack_text(self._texts[i]) for i in doc_ids if i in self._texts}

    def records(self) -> Iterator[DocRecord]:
        yield from [self._docs[doc_id] for doc_id in sorted(self._docs)]

    def count(self) -> int:
        return len(self._docs)
