"""Running the service: listen, answer until SIGTERM or Ctrl-C, then stop cleanly.

A stop first stops listening, answers the requests in flight (for up to ``shutdown_timeout``
seconds), then lets the caller close the store, so a LevelDB store's lock is released and a
Redis store's connections are closed. Without a token the service listens on a loopback
address only: anyone who can reach it could add and delete entries.
"""

from __future__ import annotations

import gc
import ipaddress
import logging
from typing import Any

from ..engine.detector import Detector
from ..stores import redact

logger = logging.getLogger(__name__)

TOKEN_ENV = "NEARDUP_SERVE_TOKEN"


class ServiceError(Exception):
    """The service cannot start as asked (an address it may not or cannot listen on)."""


def is_loopback(host: str) -> bool:
    """``localhost``, 127.0.0.0/8 and ``::1``."""
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def run_service(
    detector: Detector,
    host: str = "127.0.0.1",
    port: int = 8000,
    token: str | None = None,
    max_bytes: int = 1 << 20,
    shutdown_timeout: float = 10.0,
    workers: int = 1,
) -> None:
    """Answer requests on ``host:port`` until the reactor is stopped (SIGTERM, Ctrl-C), with
    ``workers`` processes making the fingerprints of checks (0: the reactor thread makes them)."""
    if token is None and not is_loopback(host):
        raise ServiceError(
            f"refusing to listen on {host} without a token: anyone reaching it could add and delete "
            f"entries; set {TOKEN_ENV} (or --token), or listen on 127.0.0.1 behind a reverse proxy"
        )
    if not 0 <= port <= 65535:
        raise ServiceError(f"the port must be between 0 and 65535, got {port}")
    if workers < 0:
        raise ServiceError(f"the fingerprint workers must be 0 or more, got {workers}")
    if max_bytes < 1:
        raise ServiceError(f"the largest body must be at least 1 byte, got {max_bytes}")
    from twisted.internet import reactor as installed
    from twisted.internet.error import CannotListenError
    from twisted.logger import STDLibLogObserver, globalLogBeginner

    from .entries import Entries
    from .fingerprinting import FingerprintWorkers

    try:
        from .http import ServeSite
    except ImportError as exc:  # httptools: the extra "serve"
        raise ServiceError(
            f"neardup serve needs httptools to read requests ({exc}): install the extra serve, "
            "pip install '.[serve]' from a checkout"
        ) from None

    reactor: Any = installed  # the reactor's interfaces are not typed as its methods
    globalLogBeginner.beginLoggingTo([STDLibLogObserver()], redirectStandardIO=False)  # type: ignore[list-item]
    entries = Entries(detector)
    detector.fingerprint("载入分词词典，让第一个请求不必等待。" * 3)  # load the tokenizer before the first request
    pool = FingerprintWorkers(workers, detector.recipe) if workers else None
    site = ServeSite(entries, token=token, max_bytes=max_bytes, workers=pool)
    # What start-up made (modules, tables, the tokenizer's words) lives as long as the process:
    # a full collection would scan it all again (about 60 ms, every client waiting), so the
    # collector is told to leave it alone (after a collection, so no garbage is kept for good).
    gc.collect()
    gc.freeze()
    try:
        listening = reactor.listenTCP(port, site, interface=host)
    except CannotListenError as exc:
        if pool is not None:
            pool.close()  # end of its input: the worker leaves
        raise ServiceError(f"cannot listen on {host}:{port}: {exc.socketError}") from None
    address = listening.getHost()
    shown = f"[{address.host}]" if ":" in address.host else address.host
    if detector.store.uri.startswith("memory://"):
        logger.warning("the memory:// store keeps entries only while the service runs")
    logger.info(
        "neardup serve: http://%s:%d/ (store %s, namespace %r, %d entries%s)",
        shown,
        address.port,
        redact(detector.store.uri),
        detector.store.namespace,
        detector.store.count(),
        ", token required" if token else "",
    )

    def drain() -> Any:
        logger.info("stopping: no new connections; answering the %d requests in flight", site.in_flight)
        site.closing = True
        stopped = listening.stopListening()
        stopped.addCallback(lambda _: site.idle(shutdown_timeout))
        stopped.addCallback(lambda _: site.close_connections(shutdown_timeout))

        def close(_: Any) -> None:
            if site.in_flight:
                logger.warning("%d requests were still in flight after %s s", site.in_flight, shutdown_timeout)
            if pool is not None:
                pool.close()
            entries.close()
            logger.info("stopped; store %s closed", redact(detector.store.uri))

        return stopped.addCallback(close)

    reactor.addSystemEventTrigger("before", "shutdown", drain)
    reactor.run()
