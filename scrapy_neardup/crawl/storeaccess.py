"""The pipeline's one way to its store: check, commit, release, related stories and first
copies, each awaited the same way whichever store runs underneath.

**Shared by the spiders of a process.** Two spiders on one LevelDB must use one store object,
since document ids come from it; and a copy met by one spider waits for the first copy that
another spider holds. So the store, its calls and the copies waiting on its pending documents
are kept per (URI, namespace), counted by user, and the store closes with its last user.

**Batched on a server.** Checks made in one turn of the reactor (the items of one response, the
pages a worker hands back together) go out together at the end of that turn, and checks that
arrive while a round trip is under way go out together in the next one: one script call on
Redis (``Detector.check_many``). Items that come faster than the server answers cost one round
trip per batch instead of one each, with the verdicts of checking them one by one, in arrival
order. A local store (memory, LevelDB) answers in microseconds and is called one check at a time.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from twisted.internet.defer import Deferred

from ..engine.detector import Detector
from ..engine.verdicts import Verdict
from ..fingerprints.fingerprint import Fingerprint, Fingerprinter, Recipe
from ..fingerprints.passages import Passages
from ..stores import Store, StoreFormatError, open_store
from .compat import installed_reactor, maybe_await
from .storecalls import StoreCalls

if TYPE_CHECKING:
    from ..review.collect import Review
    from .settings import NearDupConfig

__all__ = ["NoFingerprinter", "SharedStore", "StoreAccess", "Waiting", "acquire_store", "release_store"]

# Pending document id -> Deferreds of the copies waiting for its outcome. One per store,
# shared by every spider of the process that uses it: a copy met by one spider waits for
# the first copy held by another.
Waiting = dict[int, list[Deferred]]

# Checks sent to a server store in one round trip at most.
BATCH_LIMIT = 100


class SharedStore:
    """One open store, its calls, and the copies waiting on its pending documents."""

    def __init__(self, key: tuple[str, str], store: Store, threaded: bool = False, down_timeout: float = 60.0):
        self.key = key
        self.store = store
        self.users = 0
        self.waiting: Waiting = {}
        self.calls = StoreCalls(store.describe(), threaded, down_timeout)


_SHARED: dict[tuple[str, str], SharedStore] = {}


def acquire_store(uri: str, namespace: str, recipe: Recipe, config: NearDupConfig) -> SharedStore:
    """The store open under (``uri``, ``namespace``), opened now if it is not; refused when it
    is open with another fingerprint recipe, whose fingerprints would not compare."""
    key = (uri, namespace)
    shared = _SHARED.get(key)
    if shared is None:
        store = open_store(uri, namespace, recipe, stores=config.stores, **config.store_options())
        shared = SharedStore(key, store, config.store_thread, config.store_down_timeout)
        _SHARED[key] = shared
    elif shared.store.recipe != recipe:
        raise StoreFormatError(
            f"store {shared.store.describe()} is already open in this process with fingerprint "
            f"recipe {shared.store.recipe.as_dict()}, this spider asks for {recipe.as_dict()}; "
            "spiders sharing a namespace must use the same NEARDUP_TOKENIZER, NEARDUP_NSHASH_N "
            "and NEARDUP_SIMHASH_DISTANCE"
        )
    shared.users += 1
    return shared


def release_store(shared: SharedStore) -> Any:
    """The store closes with its last user (after every call made before); a Deferred when
    its calls run on a thread."""
    shared.users -= 1
    if shared.users > 0:
        return None
    _SHARED.pop(shared.key, None)
    return shared.calls.close(shared.store.close)


class StoreAccess:
    """What one pipeline asks of its store, through the store's calls (inline, or on the
    store's thread): each method's result is a value or a Deferred, and the ``async`` ones
    await it. Failures are raised as they come; :class:`~.failures.Outages` decides what
    they mean for the item and the crawl."""

    def __init__(self, shared: SharedStore, detector: Detector):
        self.shared = shared
        self.store = shared.store
        self.calls = shared.calls
        self.waiting = shared.waiting
        self.detector = detector
        self._batcher = None if shared.store.local else _CheckBatcher(self._check_many)

    @property
    def round_trips(self) -> int | None:
        """Batches sent to a server store so far; None for a local store."""
        return self._batcher.batches if self._batcher is not None else None

    async def check(self, key: str, fingerprint: Fingerprint, source: str = "", text: str | None = None) -> Verdict:
        """Check-and-add, the new story reserved (pending until :meth:`commit`); stored with
        ``text`` under NEARDUP_KEEP_TEXT; ``source`` names the site for a ``source`` policy."""
        if self._batcher is not None:
            return await self._batcher.check(key, fingerprint, source, text)
        return await maybe_await(self.calls.run(self.detector.check_fingerprint, key, fingerprint, True, source, text))

    def commit(self, verdict: Verdict) -> Any:
        """Make a reserved document permanent (its item was stored)."""
        return self.calls.run(self.detector.commit, verdict)

    def release(self, verdict: Verdict) -> Any:
        """Take a reserved document out again (its item was dropped or failed)."""
        return self.calls.run(self.detector.release, verdict)

    async def add_related(self, verdict: Verdict, passages: Passages) -> None:
        """Set the verdict's related stories (read only)."""
        await maybe_await(self.calls.run(self.detector.add_related, [verdict], [passages]))

    async def first_copy(self, review: Review, verdict: Verdict) -> str | None:
        """The text of a duplicate's first copy, as the review page shows it: seen in this run,
        else kept by the store."""
        return await maybe_await(self.calls.run(review.first_copy, verdict))

    def purge(self, background: bool = False) -> int:
        """Remove the documents older than the time window: at open before any check, or in
        a thread of its own beside the checks (``background``, on a store that can)."""
        return self.detector.purge(background)

    def _check_many(self, checks: list[tuple[str, Fingerprint, str, str | None]]) -> Any:
        documents = [(key, fingerprint) for key, fingerprint, _, _ in checks]
        sources = [source for _, _, source, _ in checks]
        texts = [text for *_, text in checks]
        return self.calls.run(self.detector.check_many, documents, True, sources, texts)


class _CheckBatcher:
    """Queues checks and sends them through ``send``, which takes ``(key, fingerprint, source,
    text)`` tuples and returns their verdicts, or a Deferred of them.

    A failed batch fails each of its checks with the same error, as checking them one by one
    against a store that went away would.
    """

    def __init__(self, send: Callable[[list[tuple[str, Fingerprint, str, str | None]]], Any]):
        reactor = installed_reactor()

        self._send = send
        self._call_later = reactor.callLater
        self._waiting: list[tuple[tuple[str, Fingerprint, str, str | None], Deferred]] = []
        self._busy = False
        self._due = False  # a send is scheduled for the end of this reactor turn
        self.batches = 0  # round trips made, counted in neardup/check_round_trips

    async def check(self, key: str, fingerprint: Fingerprint, source: str, text: str | None) -> Verdict:
        answer: Deferred = Deferred()
        self._waiting.append(((key, fingerprint, source, text), answer))
        if not self._busy and not self._due:
            self._due = True
            self._call_later(0, self._next)
        return await maybe_await(answer)

    def _next(self) -> None:
        self._due = False
        while self._waiting and not self._busy:
            batch, self._waiting = self._waiting[:BATCH_LIMIT], self._waiting[BATCH_LIMIT:]
            self._busy = True
            self.batches += 1
            try:
                result = self._send([check for check, _ in batch])
            except Exception as exc:  # an inline call that failed
                self._answer(batch, None, exc)
                continue
            if isinstance(result, Deferred):
                result.addCallbacks(
                    lambda verdicts, batch=batch: self._answered(batch, verdicts, None),
                    lambda failure, batch=batch: self._answered(batch, None, failure.value),
                )
            else:
                self._answer(batch, result, None)

    def _answered(self, batch: list, verdicts: list | None, error: BaseException | None) -> None:
        self._answer(batch, verdicts, error)
        self._next()

    def _answer(self, batch: list, verdicts: list | None, error: BaseException | None) -> None:
        self._busy = False
        for index, (_, answer) in enumerate(batch):
            if error is not None:
                answer.errback(error)
            else:
                answer.callback(verdicts[index])  # type: ignore[index]


class NoFingerprinter(Fingerprinter):
    """The detector's fingerprinter in a crawler whose workers fingerprint: the crawler
    fingerprints nothing (and need not load the IDF tables or the tokenizer)."""

    def __init__(self, recipe: Recipe):
        self.recipe = recipe

    def fingerprint(self, text: str, title: str | None = None) -> Fingerprint:
        raise RuntimeError("fingerprints are computed by the worker processes")
