"""Reservations: the documents of unique items that are still passing the later pipelines.

A unique item's document is filed as *pending* at once, so that a copy arriving a moment
later is already caught. When the item has passed every pipeline (``item_scraped``) the
document is committed; when a later pipeline drops it or fails, it is released (taken out
again), so its reprints are not lost. A copy of a pending document waits for that outcome
before it is called a duplicate: if the first copy is released, the copy is checked again
and may become the story's first copy.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from itemadapter import ItemAdapter
from twisted.internet.defer import Deferred

from ..engine.verdicts import DUPLICATE, Verdict
from .compat import wait

if TYPE_CHECKING:
    from .storeaccess import Waiting

__all__ = ["Reservations"]


class Reservations:
    """The pending documents of one pipeline's items, by item (and by key, for an item that a
    later pipeline replaced with a new object).

    ``commit`` and ``release`` take the item as Scrapy's signals give it;
    :meth:`first_copy_outcome` lets a copy of a pending document wait for its outcome. Store failures go to ``on_error``
    (``"committing"`` or ``"releasing"``, the verdict, the exception) and never raise.
    """

    def __init__(
        self,
        commit: Callable[[Verdict], Any],
        release: Callable[[Verdict], Any],
        key_field: str,
        waiting: Waiting | None = None,
        on_error: Callable[[str, Verdict, Exception], None] | None = None,
    ):
        self._commit = commit
        self._release = release
        self.key_field = key_field
        self.waiting: Waiting = {} if waiting is None else waiting
        self.on_error = on_error or (lambda action, verdict, exc: None)
        self._by_item: dict[int, tuple[Any, Verdict]] = {}  # id(item) -> (item, verdict)
        self._by_key: dict[str, int] = {}  # key -> id(item)

    def __len__(self) -> int:
        return len(self._by_item)

    def entries(self) -> list[tuple[Any, Verdict]]:
        """(item, verdict) of every reservation held, oldest first."""
        return list(self._by_item.values())

    def waiters(self, doc_id: int) -> int:
        """How many copies wait for the outcome of pending document ``doc_id``."""
        return len(self.waiting.get(doc_id, []))

    def reserve(self, item: Any, verdict: Verdict) -> None:
        """Hold the document that checking ``item`` filed as pending."""
        self._by_item[id(item)] = (item, verdict)
        self._by_key[verdict.key] = id(item)
        if verdict.doc_id is not None:  # a stored verdict has its document's id
            self.waiting.setdefault(verdict.doc_id, [])

    def take(self, item: Any) -> tuple[Any, Verdict] | None:
        """Forget the reservation of ``item`` (found by identity, else by its key) and return it."""
        entry = self._by_item.pop(id(item), None)
        if entry is None:
            key = ItemAdapter(item).get(self.key_field) if ItemAdapter.is_item(item) else None
            ident = self._by_key.get(str(key)) if key not in (None, "") else None
            entry = self._by_item.pop(ident, None) if ident is not None else None
        if entry is not None and self._by_key.get(entry[1].key) == id(entry[0]):
            del self._by_key[entry[1].key]
        return entry

    def commit(self, item: Any) -> Any:
        """Make the document of ``item`` permanent; None when it holds no reservation."""
        entry = self.take(item)
        if entry is None:
            return None
        return self._settle_store(self._commit, "committing", entry[1], committed=True)

    def release(self, item: Any) -> Any:
        """Take the document of ``item`` out again; None when it holds no reservation."""
        entry = self.take(item)
        if entry is None:
            return None
        return self._settle_store(self._release, "releasing", entry[1], committed=False)

    def release_all(self) -> list[Verdict]:
        """Release every reservation still held (the spider closes); their verdicts."""
        left = [verdict for _, verdict in self._by_item.values()]
        for item, _ in list(self._by_item.values()):
            self.release(item)
        return left

    def retry(self, action: str, verdict: Verdict) -> None:
        """Commit or release again a document whose call failed (``action`` as ``on_error``
        got it): the store was down, and answers again."""
        self._call_store(self._commit if action == "committing" else self._release, action, verdict)

    def _settle_store(self, call: Callable[[Verdict], Any], action: str, verdict: Verdict, committed: bool) -> Verdict:
        self._call_store(call, action, verdict)
        self._resolve(verdict.doc_id, committed)
        return verdict

    def _call_store(self, call: Callable[[Verdict], Any], action: str, verdict: Verdict) -> None:
        try:
            done = call(verdict)
        except Exception as exc:
            self.on_error(action, verdict, exc)
        else:
            if isinstance(done, Deferred):  # a store called on its own thread
                done.addErrback(lambda failure: self.on_error(action, verdict, failure.value))

    def _resolve(self, doc_id: int | None, committed: bool) -> None:
        for waiter in self.waiting.pop(doc_id, []):  # type: ignore[arg-type]
            if not waiter.called:
                waiter.callback(committed)

    async def first_copy_outcome(self, verdict: Verdict) -> bool | None:
        """For a copy of a pending document, wait for that document's outcome: True when it
        was committed (stored), False when it was released; None when it is not pending
        (nothing to wait for).

        The caller decides what follows: a copy of a committed first copy is its duplicate,
        unless its verdict asks to be checked again (with a NEARDUP_PREFER policy the copy
        may win, or the pending copy replaced the one it names); a copy of a released one is
        checked again (it may now be the first copy of its story).
        """
        if verdict.status != DUPLICATE:
            return None
        pending = verdict.waits_for if verdict.waits_for is not None else verdict.similar_id
        if pending not in self.waiting:
            return None
        waiter: Deferred = Deferred()
        self.waiting[pending].append(waiter)
        return bool(await wait(waiter))
