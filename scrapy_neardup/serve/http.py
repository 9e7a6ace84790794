"""The HTTP front end of ``neardup serve``: a Twisted protocol whose requests are read by
httptools (llhttp, the parser of Node.js), with its answers framed by Content-Length.

One site answers every path: the editors' page at ``/``, ``/health``, and the JSON API
(``/check``, ``/entries``, ``/entries/{key}``, ``/stats``). Requests are answered one at a
time in the reactor thread, so a check-and-add never interleaves with another in this process
(and the Redis store's script makes it atomic between processes). They are answered in the
order they came, one a turn of the reactor, so that each answer is sent as soon as it is ready:
answered as they are read, the answers to every request read in one turn would wait for the
last of them, and under load some requests would wait two rounds of the others. A check of a
text is put in that order once its fingerprint is made, by a worker process when the service
has them (:mod:`.fingerprinting`). A connection's requests are answered in the order it sent
them, one after another. Every error is a JSON object ``{"error": message}`` with its status; a
failure inside is logged here and never shown to the client. The site counts the requests in
flight, so that a shutdown can wait for them.
"""

from __future__ import annotations

import hmac
import json
import logging
import time
import weakref
from collections import deque
from collections.abc import Callable
from http import HTTPStatus
from typing import Any
from urllib.parse import unquote_to_bytes

import httptools
from twisted.internet import defer
from twisted.internet import reactor as installed_reactor
from twisted.internet.protocol import Factory, Protocol
from twisted.protocols.policies import TimeoutMixin

from ..fingerprints.fingerprint import Fingerprint
from . import jsonbody
from .entries import Entries, EntryError
from .fingerprinting import FingerprintWorkers
from .page import Page

reactor: Any = installed_reactor  # the reactor's interfaces do not type its methods

logger = logging.getLogger(__name__)

JSON = b"application/json; charset=utf-8"
ENTRY_PREFIX = b"/entries/"
MAX_HEAD = 64 * 1024  # bytes of request line and headers; more is refused (431)
MAX_PIPELINED = 8  # requests read ahead on one connection before it is read no further
UNREAD = object()  # a request body not parsed as JSON yet


class _HeadTooLarge(Exception):
    pass


class Request:
    """One request as the parser read it (its body kept up to ``limit`` bytes; past that it
    is counted and dropped, so an oversized upload costs no memory and gets its 413), and the
    state of its answer."""

    def __init__(self, limit: int, late: bool):
        self.started = time.perf_counter()
        self.method = b""
        self.uri = b""
        self.path = b""
        self.headers: dict[bytes, bytes] = {}
        self.head_size = 0
        self.body = bytearray()
        self.size = 0
        self.limit = limit
        self.late = late  # arrived after the stop began: 503
        self.lost = False  # the client went away before its answer: none is written
        self.counted = True  # in the site's requests in flight until answered or lost
        self.keep_alive = True
        self.code = 0
        self.sent = 0
        self.fingerprint: Fingerprint | None = None  # made before the check, by a worker
        self.json_body: Any = UNREAD

    @property
    def too_large(self) -> bool:
        return self.size > self.limit

    def add_body(self, data: bytes) -> None:
        self.size += len(data)
        if self.too_large:
            self.body = bytearray()
        else:
            self.body += data

    def header(self, name: bytes) -> bytes | None:
        """The header ``name`` (lower case), its values joined by commas when sent several times."""
        return self.headers.get(name)


class _Connection(Protocol, TimeoutMixin):
    """One client connection: the parser's callbacks build its requests, which are answered
    one after another, in the order they were sent."""

    def __init__(self, site: ServeSite):
        self.site = site
        self.parser = httptools.HttpRequestParser(self)
        self.reading: Request | None = None  # the request the parser is reading
        self.requests: deque[Request] = deque()  # read, waiting for their answers, oldest first
        self.busy = False  # the oldest is being answered

    # -- the connection ---------------------------------------------------------------------

    def connectionMade(self) -> None:
        self.out: Any = self.transport  # the TCP transport, its methods untyped
        self.site.connections.add(self)
        self.setTimeout(self.site.timeout)

    def dataReceived(self, data: bytes) -> None:
        self.resetTimeout()
        try:
            self.parser.feed_data(data)
        except _HeadTooLarge:
            self._refuse(431, "the request line and headers are too large")
        except httptools.HttpParserCallbackError as exc:
            if isinstance(exc.__context__, _HeadTooLarge):
                self._refuse(431, "the request line and headers are too large")
            else:
                raise
        except httptools.HttpParserUpgrade:
            self._refuse(400, "this service does not upgrade connections")
        except httptools.HttpParserError as exc:
            self._refuse(400, f"the request is not valid HTTP/1.1: {exc}")

    def connectionLost(self, reason: Any = None) -> None:
        self.setTimeout(None)
        for request in [*self.requests, *([self.reading] if self.reading else [])]:
            request.lost = True
            self.site.request_finished(request)
        self.requests.clear()
        self.reading = None

    def timeoutConnection(self) -> None:
        self.out.loseConnection()

    def _refuse(self, status: int, message: str) -> None:
        """A request the parser could not read: its error, and the connection closed."""
        if self.reading is not None:
            self.site.request_finished(self.reading)
            self.reading = None
        head = _head(status, [(b"content-type", JSON), (b"connection", b"close")], len(body := _error(message)))
        self.out.write(head + body)
        self.out.loseConnection()

    # -- the parser's callbacks -------------------------------------------------------------

    def on_message_begin(self) -> None:
        self.reading = Request(self.site.max_bytes, self.site.closing)
        self.site.request_started()

    def on_url(self, url: bytes) -> None:
        self._grow(url)
        assert self.reading is not None
        self.reading.uri += url

    def on_header(self, name: bytes, value: bytes) -> None:
        self._grow(name + value)
        assert self.reading is not None
        headers, name = self.reading.headers, name.lower()
        headers[name] = headers[name] + b", " + value if name in headers else value

    def on_headers_complete(self) -> None:
        request = self.reading
        assert request is not None
        request.started = time.perf_counter()
        request.method = self.parser.get_method()
        try:
            request.path = httptools.parse_url(request.uri).path or b""
        except httptools.HttpParserInvalidURLError:
            request.path = request.uri
        if (request.header(b"expect") or b"").lower() == b"100-continue" and self.parser.get_http_version() == "1.1":
            self.out.write(b"HTTP/1.1 100 Continue\r\n\r\n")

    def on_body(self, body: bytes) -> None:
        assert self.reading is not None
        self.reading.add_body(body)

    def on_message_complete(self) -> None:
        request, self.reading = self.reading, None
        assert request is not None
        request.keep_alive = self.parser.should_keep_alive()
        self.requests.append(request)
        if len(self.requests) >= MAX_PIPELINED:
            self.out.pauseProducing()  # until answers are written: a client cannot pile them up
        self._next()

    def _grow(self, data: bytes) -> None:
        assert self.reading is not None
        self.reading.head_size += len(data)
        if self.reading.head_size > MAX_HEAD:
            raise _HeadTooLarge

    # -- answers ----------------------------------------------------------------------------

    def _next(self) -> None:
        if not self.busy and self.requests:
            self.busy = True
            self.site.handle(self.requests[0], self)

    def respond(self, request: Request, status: int, headers: list[tuple[bytes, bytes]], body: bytes) -> None:
        """Write the answer to the oldest request, then take up the next."""
        close = not request.keep_alive or self.site.closing
        if close:
            headers.append((b"connection", b"close"))
        head = _head(status, headers, len(body))
        request.code, request.sent = status, len(body)
        if request.method == b"HEAD":
            body = b""
        self.out.write(head + body)
        self.site.log(request)
        self.site.request_finished(request)
        self.requests.popleft()
        self.busy = False
        if close:
            self.out.loseConnection()
            return
        if len(self.requests) == MAX_PIPELINED - 1:
            self.out.resumeProducing()
        self._next()


def _head(status: int, headers: list[tuple[bytes, bytes]], length: int) -> bytes:
    lines = [b"HTTP/1.1 %d %s" % (status, HTTPStatus(status).phrase.encode("ascii"))]
    lines += [name + b": " + value for name, value in headers]
    lines.append(b"content-length: %d" % length)
    return b"\r\n".join(lines) + b"\r\n\r\n"


def _error(message: str) -> bytes:
    return jsonbody.encode({"error": message})


class ServeSite(Factory):
    """The site: the entries behind the routes, the token, the body limit, the connections and
    the requests in flight."""

    noisy = False

    def __init__(
        self,
        entries: Entries,
        token: str | None = None,
        max_bytes: int = 1 << 20,
        timeout: float = 60,
        workers: FingerprintWorkers | None = None,
    ):
        self.entries = entries
        self.token = token
        self.max_bytes = max_bytes
        self.timeout = timeout  # seconds a connection may stay silent
        self.workers = workers
        self.page = Page(auth=token is not None)
        self.in_flight = 0
        self.closing = False  # shutting down: new requests get 503
        self._waiting: deque[tuple[Request, Callable[[], None]]] = deque()  # requests read, not yet answered
        self._idle: list[defer.Deferred] = []
        self.connections: weakref.WeakSet[_Connection] = weakref.WeakSet()  # a closed connection drops out

    def buildProtocol(self, addr: Any) -> _Connection:
        return _Connection(self)

    def close_connections(self, timeout: float) -> defer.Deferred:
        """Close every connection once what was written to it is sent (answers already given
        would be lost if the reactor dropped the connections), within ``timeout`` seconds."""
        for connection in list(self.connections):
            connection.out.loseConnection()
        deadline = time.monotonic() + timeout
        done: defer.Deferred = defer.Deferred()

        def poll() -> None:
            open_ = [c for c in self.connections if not c.out.disconnected]
            if not open_ or time.monotonic() > deadline:
                done.callback(None)
            else:
                reactor.callLater(0.02, poll)

        poll()
        return done

    def handle(self, request: Request, connection: _Connection) -> None:
        """Answer ``request`` in turn with the others, its fingerprint made first when it can be."""
        made = self._fingerprint_first(request)
        if made is None:
            self.answer_in_turn(request, lambda: self._respond(request, connection))
        else:

            def answer(fingerprint: Fingerprint | None) -> None:
                request.fingerprint = fingerprint
                self.answer_in_turn(request, lambda: self._respond(request, connection))

            made.addCallbacks(answer, lambda _: answer(None))  # None: the check makes it itself

    def answer_in_turn(self, request: Request, answer: Callable[[], None]) -> None:
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
            logger.exception("%r failed", request.uri)
        finally:
            self._waiting.popleft()
            if self._waiting:
                reactor.callLater(0, self._answer_next)

    def request_started(self) -> None:
        self.in_flight += 1

    def request_finished(self, request: Request) -> None:
        if not request.counted:
            return
        request.counted = False
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

    def log(self, request: Request) -> None:
        """One line per request, at DEBUG."""
        if logger.isEnabledFor(logging.DEBUG):
            logger.debug(
                "%s %s %d %.1f ms %d bytes",
                request.method.decode("ascii", "replace"),
                request.uri.decode("ascii", "replace")[:200],
                request.code,
                (time.perf_counter() - request.started) * 1000,
                request.sent,
            )

    # -- routes -----------------------------------------------------------------------------

    def _fingerprint_first(self, request: Request) -> defer.Deferred | None:
        """A valid ``POST /check`` of a text goes to a fingerprint worker first, when there is
        one: the reactor thread answers other requests meanwhile (:mod:`.fingerprinting`)."""
        if self.workers is None or request.path != b"/check" or request.method != b"POST" or request.late:
            return None
        try:
            self._authorize(request)
            body = _json(request)
        except EntryError:
            return None  # the check finds the error again, and answers it
        given = Entries.fingerprint_input(body)
        try:
            return None if given is None else self.workers.fingerprint(*given)
        except Exception:  # a worker could not be started (out of processes): made here
            logger.exception("the fingerprint workers failed")
            return None

    def _respond(self, request: Request, connection: _Connection) -> None:
        headers: list[tuple[bytes, bytes]] = []
        try:
            status, answer = self._answer(request)
        except EntryError as exc:
            status, answer = exc.status, {"error": exc.message}
        except Exception:
            logger.exception("%s %r failed", request.method, request.uri)
            status, answer = 500, {"error": "the service failed on this request; the server's log says why"}
        if status == 405:
            headers.append((b"allow", answer.pop("allow").encode("ascii")))
        if status == 401:
            headers.append((b"www-authenticate", b'Bearer realm="neardup"'))
        if isinstance(answer, Page):
            headers.append((b"content-type", b"text/html; charset=utf-8"))
            headers.append((b"content-security-policy", answer.policy.encode("ascii")))
            headers.append((b"x-content-type-options", b"nosniff"))
            body = answer.body
        else:
            headers.append((b"content-type", JSON))
            headers.append((b"cache-control", b"no-store"))
            body = jsonbody.encode(answer)
        connection.respond(request, status, headers, body)

    def _answer(self, request: Request) -> tuple[int, Any]:
        entries = self.entries
        path, method = request.path, request.method
        if request.late:
            raise EntryError(503, "the service is shutting down")
        if path == b"/" and method in (b"GET", b"HEAD"):
            return 200, self.page
        if path == b"/health":
            return _only(method, b"GET") or (200, entries.health())
        routes: dict[bytes, dict[bytes, Callable[[], tuple[int, Any]]]] = {
            b"/check": {b"POST": lambda: (200, _check(entries, request))},
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

    def _authorize(self, request: Request) -> None:
        token = self.token
        if token is None:
            return
        given = request.header(b"authorization") or b""
        scheme, _, value = given.partition(b" ")
        if scheme.lower() != b"bearer" or not hmac.compare_digest(value.strip(), token.encode("utf-8")):
            raise EntryError(401, "this service needs its token: send the header Authorization: Bearer <token>")


def _check(entries: Entries, request: Request) -> dict:
    return entries.check(_json(request), request.fingerprint)  # None: the check makes it


def _only(method: bytes, allowed: bytes) -> tuple[int, Any] | None:
    if method == allowed or (allowed == b"GET" and method == b"HEAD"):
        return None
    name = allowed.decode()
    return 405, {"error": f"{method.decode('ascii', 'replace')} is not allowed here; use {name}", "allow": name}


def _json(request: Request) -> Any:
    """The request's body as JSON, read once."""
    if request.json_body is UNREAD:
        request.json_body = _read_json(request)
    return request.json_body


def _read_json(request: Request) -> Any:
    if request.too_large:
        raise EntryError(
            413,
            f"the request body has {request.size} bytes, more than the {request.limit} this service takes (--max-bytes)",
        )
    data = bytes(request.body)
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
