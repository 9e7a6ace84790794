"""Check-and-add calls to a server store, batched while a round trip is under way.

Checks made in one turn of the reactor (the items of one response, the pages a worker hands
back together) go out together at the end of that turn, and checks that arrive while a round
trip is under way (a store called on its thread) go out together in the next one: one script
call on Redis (``Detector.check_many``). An item that comes alone waits one reactor turn, and
items that come faster than the server answers cost one round trip per batch instead of one
each. The verdicts are those of checking one by one, in arrival order.
"""

from __future__ import annotations

from typing import Any, Callable

from twisted.internet.defer import Deferred

from ..fingerprints.fingerprint import Fingerprint

__all__ = ["CheckBatcher"]

# (key, fingerprint, source) triples, and the text to keep with each (None: none) -> verdicts
Send = Callable[[list[tuple[str, Fingerprint, str]], list[str | None]], Any]


class CheckBatcher:
    """Queues checks and sends them through ``send``: a function taking ``(key, fingerprint,
    source)`` triples and the texts to keep with them (NEARDUP_KEEP_TEXT) and returning their verdicts, or a Deferred of them (a store called on
    its thread).

    A failed batch fails each of its checks with the same error, as checking them one by one
    against a store that went away would.
    """

    def __init__(self, send: Send, limit: int = 100, call_later: Callable[..., Any] | None = None):
        if call_later is None:
            from twisted.internet import reactor

            call_later = reactor.callLater  # type: ignore[attr-defined]
        self._send = send
        self.limit = limit
        self._call_later = call_later
        self._waiting: list[tuple[str, Fingerprint, str, str | None, Deferred]] = []
        self._busy = False
        self._due = False  # a send is scheduled for the end of this reactor turn
        self.batches = 0  # round trips made, for stats and tests
        self.largest = 0

    def check(self, key: str, fingerprint: Fingerprint, source: str = "", text: str | None = None) -> Deferred:
        """A Deferred firing with the verdict of ``(key, fingerprint)``; ``source`` names its
        site for a NEARDUP_PREFER policy; a new story is stored with ``text``."""
        answer: Deferred = Deferred()
        self._waiting.append((key, fingerprint, source, text, answer))
        if not self._busy and not self._due:
            self._due = True
            self._call_later(0, self._next)
        return answer

    def _next(self) -> None:
        self._due = False
        while self._waiting and not self._busy:
            batch, self._waiting = self._waiting[: self.limit], self._waiting[self.limit :]
            self._busy = True
            self.batches += 1
            self.largest = max(self.largest, len(batch))
            try:
                documents = [(key, fingerprint, source) for key, fingerprint, source, _, _ in batch]
                result = self._send(documents, [text for *_, text, _ in batch])
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
        for index, (*_, answer) in enumerate(batch):
            if error is not None:
                answer.errback(error)
            else:
                answer.callback(verdicts[index])  # type: ignore[index]
