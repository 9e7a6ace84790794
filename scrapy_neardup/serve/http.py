"""The HTTP front end of ``neardup serve``, on twisted.web (the Twisted that Scrapy brings).

One resource answers every path: the editors' page at ``/``, ``/health``, and the JSON API
(``/check``, ``/entries``, ``/entries/{key}``, ``/stats``). Requests are answered one at a
time in the reactor thread, so a check-and-add never interleaves with another in this process
(and the Redis store's script makes it atomic between processes). They are answered in the
order they came, one a turn of the reactor, so that each answer is sent as soon as it is ready:
answered as they are read, the answers to every request read in one turn would wait for the
last of them, and under load some requests would wait two rounds of the others. A check of a
text is put in that order once its fingerprint is made, by a worker process when the service
has them (:mod:`.fingerprinting`). Every error is a JSON object
``{"error": message}`` with its status; a failure inside is logged here and never shown to the
client. The site counts the requests in flight, so that a shutdown can wait for them.
"""

from __future__ import annotations

import hmac
import io
import json
import logging
import time
import weakref
from collections import deque
from collections.abc import Callable
from typing import Any
from urllib.parse import unquote_to_bytes

from twisted.internet import defer
from twisted.internet import reactor as installed_reactor
from twisted.web import resource, server

from ..fingerprints.fingerprint import Fingerprint
from . import jsonbody
from .entries import Entries, EntryError
from .fingerprinting import FingerprintWorkers
from .page import Page

reactor: Any = installed_reactor  # the reactor's interfaces do not type its methods

logger = logging.getLogger(__name__)

JSON = b"application/json; charset=utf-8"
ENTRY_PREFIX = b"/entries/"


class _BoundedBody(io.BytesIO):
    """A request body kept up to ``limit`` bytes; past that it is counted and dropped, so an
    oversized upload costs no memory and gets its 413."""

    def __init__(self, limit: int):
        super().__init__()
        self.limit = limit
        self.size = 0

    @property
    def too_large(self) -> bool:
        return self.size > self.limit

    def write(self, data: bytes) -> int:  # type: ignore[override]
        self.size += len(data)
        if self.too_large:
            self.truncate(0)
            return len(data)
        return super().write(data)


class _Request(server.Request):
    """A request whose body is bounded, timed, and counted in flight until it is answered."""

    def __init__(self, channel: Any, *args: Any, **kwargs: Any):
        super().__init__(channel, *args, **kwargs)
        self.started = time.perf_counter()
        site = channel.site
        self.late = site.closing  # arrived after the stop began: 503
        self.lost = False  # the client went away before its answer: none is written
        site.request_started(channel)
        self.notifyFinish().addBoth(lambda _: site.request_finished())
        self.notifyFinish().addErrback(self._connection_lost)

    def _connection_lost(self, _: Any) -> None:
        self.lost = True

    def gotLength(self, length: int | None) -> None:
        self.started = time.perf_counter()
        channel: Any = self.channel
        self.content: Any = _BoundedBody(channel.site.max_bytes)


class ServeSite(server.Site):
    """The site: the entries behind one resource, the token, the body limit, the requests in flight."""

    def __init__(
        self,
        entries: Entries,
        token: str | None = None,
        max_bytes: int = 1 << 20,
        timeout: float = 60,
        workers: FingerprintWorkers | None = None,
    ):
        try:  # bodies are JSON: twisted.web need not parse them as forms (Twisted >= 24.7)
            super().__init__(_Api(self), timeout=timeout, parsePOSTFormSubmission=False)
        except TypeError:
            super().__init__(_Api(self), timeout=timeout)
        self.requestFactory = _Request
        self.displayTracebacks = False
        self.entries = entries
        self.token = token
        self.max_bytes = max_bytes
        self.workers = workers
        self.page = Page(auth=token is not None)
        self.in_flight = 0
        self.closing = False  # shutting down: new requests get 503
        self._waiting: deque[tuple[Any, Callable[[], None]]] = deque()  # requests read, not yet answered
        self._idle: list[defer.Deferred] = []
        self._channels: weakref.WeakSet[Any] = weakref.WeakSet()  # a closed connection drops out

    def close_connections(self, timeout: float) -> defer.Deferred:
        """Close every connection once what was written to it is sent (answers already given
        would be lost if the reactor dropped the connections), within ``timeout`` seconds."""
        for channel in list(self._channels):
            if channel.transport is not None:
                channel.transport.loseConnection()
        deadline = time.monotonic() + timeout
        done: defer.Deferred = defer.Deferred()

        def poll() -> None:
            open_ = [c for c in self._channels if c.transport is not None and not c.transport.disconnected]
            if not open_ or time.monotonic() > deadline:
                done.callback(None)
            else:
                reactor.callLater(0.02, poll)

        poll()
        return done

    def answer_in_turn(self, request: Any, answer: Callable[[], None]) -> None:
        """Call ``answer`` after the requests read before this one, one a reactor turn."""
        self._waiting.append((request, answer))
        if len(self._waiting) == 1:
            reactor.callLater(0, self._answer_next)

    def _answer_next(self) -> None:
        request, answer = self._waiting[0]
        try:
            if not request.lost:
                answer()
        except Exception:
            logger.exception("%r failed", request)
        finally:
            self._waiting.popleft()
            if self._waiting:
                reactor.callLater(0, self._answer_next)

    def request_started(self, channel: Any) -> None:
        self.in_flight += 1
        self._channels.add(channel)  # the connections that carried a request, closed at a stop

    def request_finished(self) -> None:
        self.in_flight -= 1
        if not self.in_flight:
            waiting, self._idle = self._idle, []
            for waiter in waiting:
                if not waiter.called:  # its timeout may have fired it already
                    waiter.callback(None)

    def idle(self, timeout: float) -> defer.Deferred:
        """Fires when no request is in flight, or after ``timeout`` seconds."""
        if not self.in_flight:
            return defer.succeed(None)
        waiter: defer.Deferred = defer.Deferred()
        self._idle.append(waiter)

        def give_up() -> None:
            if not waiter.called:
                waiter.callback(None)

        timer = reactor.callLater(timeout, give_up)

        def stop_timer(result: Any) -> Any:
            if timer.active():
                timer.cancel()
            return result

        return waiter.addBoth(stop_timer)

    def log(self, request: Any) -> None:
        """One line per request, at DEBUG (twisted's access log is not written)."""
        if logger.isEnabledFor(logging.DEBUG):
            elapsed = (time.perf_counter() - getattr(request, "started", time.perf_counter())) * 1000
            logger.debug(
                "%s %s %d %.1f ms %d bytes",
                request.method.decode("ascii", "replace"),
                request.uri.decode("ascii", "replace")[:200],
                request.code,
                elapsed,
                request.sentLength,
            )


class _Api(resource.Resource):
    isLeaf = True

    def __init__(self, site: ServeSite):
        super().__init__()
        self.site = site

    def render(self, request: server.Request) -> Any:
        made = self._fingerprint_first(request)
        if made is None:
            self.site.answer_in_turn(request, lambda: self._respond(request))
        else:

            def answer(fingerprint: Fingerprint | None) -> None:
                request.fingerprint = fingerprint  # type: ignore[attr-defined]
                self.site.answer_in_turn(request, lambda: self._respond(request))

            made.addCallbacks(answer, lambda _: answer(None))  # None: the check makes it itself
        return server.NOT_DONE_YET

    def _fingerprint_first(self, request: server.Request) -> defer.Deferred | None:
        """A valid ``POST /check`` of a text goes to a fingerprint worker first, when there is
        one: the reactor thread answers other requests meanwhile (:mod:`.fingerprinting`)."""
        workers, content = self.site.workers, request.content
        if (
            workers is None
            or content is None
            or request.path != b"/check"
            or request.method != b"POST"
            or getattr(request, "late", False)
        ):
            return None
        try:
            self._authorize(request)
            body = _json(request)
        except EntryError:
            content.seek(0)  # the check reads it again, and answers the error
            return None
        given = Entries.to_fingerprint(body)
        if given is None:
            content.seek(0)
            return None
        request.json_body = body
        return workers.fingerprint(*given)

    def _respond(self, request: server.Request) -> None:
        """Write the answer and finish, as twisted.web does with a body a resource returns."""
        body = self._body(request)
        if request.method == b"HEAD":
            if body:
                request.setHeader(b"content-length", b"%d" % len(body))
            request.write(b"")
        else:
            request.setHeader(b"content-length", b"%d" % len(body))
            request.write(body)
        request.finish()

    def _body(self, request: server.Request) -> bytes:
        try:
            status, answer = self._answer(request)
        except EntryError as exc:
            status, answer = exc.status, {"error": exc.message}
        except Exception:
            logger.exception("%s %r failed", request.method, request.uri)
            status, answer = 500, {"error": "the service failed on this request; the server's log says why"}
        if status == 405:
            request.setHeader(b"allow", answer.pop("allow").encode("ascii"))
        if status == 401:
            request.setHeader(b"www-authenticate", b'Bearer realm="neardup"')
        if self.site.closing:
            request.setHeader(b"connection", b"close")
        request.setResponseCode(status)
        if isinstance(answer, Page):
            request.setHeader(b"content-type", b"text/html; charset=utf-8")
            request.setHeader(b"content-security-policy", answer.policy.encode("ascii"))
            request.setHeader(b"x-content-type-options", b"nosniff")
            return answer.body if request.method != b"HEAD" else b""
        request.setHeader(b"content-type", JSON)
        request.setHeader(b"cache-control", b"no-store")
        return jsonbody.encode(answer)

    def _answer(self, request: server.Request) -> tuple[int, Any]:
        site, entries = self.site, self.site.entries
        path, method = request.path, request.method
        if getattr(request, "late", False):
            raise EntryError(503, "the service is shutting down")
        if path == b"/" and method in (b"GET", b"HEAD"):
            return 200, site.page
        if path == b"/health":
            return _only(method, b"GET") or (200, entries.health())
        routes: dict[bytes, dict[bytes, Callable[[], tuple[int, Any]]]] = {
            b"/check": {b"POST": lambda: (200, entries.check(_json(request), getattr(request, "fingerprint", None)))},
            b"/entries": {b"POST": lambda: entries.add(_json(request))},
            b"/stats": {b"GET": lambda: (200, entries.stats())},
        }
        if path.startswith(ENTRY_PREFIX):
            key = _key_of(path)
            routes[path] = {b"GET": lambda: (200, entries.get(key)), b"DELETE": lambda: (200, entries.delete(key))}
        if path not in routes:
            raise EntryError(404, f"no such path: {path.decode('utf-8', 'replace')[:200]}")
        if method not in routes[path]:
            allowed = ", ".join(m.decode() for m in routes[path])
            return 405, {
                "error": f"{method.decode('ascii', 'replace')} is not allowed here; use {allowed}",
                "allow": allowed,
            }
        self._authorize(request)
        return routes[path][method]()

    def _authorize(self, request: server.Request) -> None:
        token = self.site.token
        if token is None:
            return
        given = request.getHeader(b"authorization") or b""
        scheme, _, value = given.partition(b" ")
        if scheme.lower() != b"bearer" or not hmac.compare_digest(value.strip(), token.encode("utf-8")):
            raise EntryError(401, "this service needs its token: send the header Authorization: Bearer <token>")


def _only(method: bytes, allowed: bytes) -> tuple[int, Any] | None:
    if method == allowed or (allowed == b"GET" and method == b"HEAD"):
        return None
    name = allowed.decode()
    return 405, {"error": f"{method.decode('ascii', 'replace')} is not allowed here; use {name}", "allow": name}


def _json(request: server.Request) -> Any:
    if hasattr(request, "json_body"):  # read before its fingerprint was made
        return request.json_body
    body: Any = request.content
    if isinstance(body, _BoundedBody) and body.too_large:
        raise EntryError(
            413, f"the request body has {body.size} bytes, more than the {body.limit} this service takes (--max-bytes)"
        )
    data = body.read()
    if not data.strip():
        raise EntryError(400, 'the request has no body: send a JSON object, e.g. {"text": "..."}')
    try:
        return json.loads(data.decode("utf-8"))
    except UnicodeDecodeError:
        raise EntryError(400, "the request body is not UTF-8") from None
    except json.JSONDecodeError as exc:
        raise EntryError(400, f"the request body is not valid JSON: {exc}") from None


def _key_of(path: bytes) -> str:
    """The key of ``/entries/{key}``, percent-decoded (a key holding ``/`` is sent as ``%2F``)."""
    raw = path[len(ENTRY_PREFIX) :]
    if not raw:
        raise EntryError(404, "give the entry's key: /entries/{key}")
    try:
        return unquote_to_bytes(raw).decode("utf-8")
    except UnicodeDecodeError:
        raise EntryError(400, "the key in the path is not UTF-8 once percent-decoded") from None
