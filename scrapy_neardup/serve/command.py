"""``neardup serve``: open the store, listen, answer until SIGTERM or Ctrl-C, then stop cleanly.

A stop first stops listening, answers the requests in flight (for up to ``--shutdown-timeout``
seconds), then closes the store, so a LevelDB store's lock is released and a Redis store's
connections are closed; the exit code is 0. Without a token the service listens on a loopback
address only: anyone who can reach it could add and delete entries.
"""

from __future__ import annotations

import argparse
import ipaddress
import logging
import os

from ..cli.common import CommandError, recipe_and_thresholds
from ..engine.detector import Detector
from ..stores import open_store, redact

logger = logging.getLogger(__name__)

TOKEN_ENV = "NEARDUP_SERVE_TOKEN"


def is_loopback(host: str) -> bool:
    """``localhost``, 127.0.0.0/8 and ``::1``."""
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def token_of(args: argparse.Namespace) -> str | None:
    """``--token``, else the environment's ``NEARDUP_SERVE_TOKEN``; None when neither is set."""
    token = args.token if args.token is not None else os.environ.get(TOKEN_ENV)
    if token is not None and not token.strip():
        raise CommandError(f"the token is empty: give a non-empty --token or {TOKEN_ENV}")
    return token.strip() if token is not None else None


def serve(args: argparse.Namespace) -> int:
    """Run the service until it is told to stop; 0 after a clean stop."""
    logging.basicConfig(level=args.log_level, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    token = token_of(args)
    if token is None and not is_loopback(args.host):
        raise CommandError(
            f"refusing to listen on {args.host} without a token: anyone reaching it could add and delete "
            f"entries; set {TOKEN_ENV} (or --token), or listen on 127.0.0.1 behind a reverse proxy"
        )
    if not 0 <= args.port <= 65535:
        raise CommandError(f"--port must be between 0 and 65535, got {args.port}")
    if args.max_bytes < 1:
        raise CommandError(f"--max-bytes must be at least 1, got {args.max_bytes}")
    recipe, thresholds = recipe_and_thresholds(args)
    store = open_store(args.store, args.namespace, recipe, redis_allow_eviction=args.allow_eviction)
    try:
        return _run(args, Detector(store, thresholds), token)
    finally:
        store.close()


def _run(args: argparse.Namespace, detector: Detector, token: str | None) -> int:
    from twisted.internet import reactor
    from twisted.internet.error import CannotListenError
    from twisted.logger import STDLibLogObserver, globalLogBeginner

    from .entries import Entries
    from .http import ServeSite

    globalLogBeginner.beginLoggingTo([STDLibLogObserver()], redirectStandardIO=False)
    entries = Entries(detector)
    detector.fingerprint("载入分词词典，让第一个请求不必等待。" * 3)  # load the tokenizer before the first request
    site = ServeSite(entries, token=token, max_bytes=args.max_bytes)
    try:
        port = reactor.listenTCP(args.port, site, interface=args.host)
    except CannotListenError as exc:
        raise CommandError(f"cannot listen on {args.host}:{args.port}: {exc.socketError}") from None
    address = port.getHost()
    host = f"[{address.host}]" if ":" in address.host else address.host
    if detector.store.uri.startswith("memory://"):
        logger.warning("the memory:// store keeps entries only while the service runs")
    logger.info(
        "neardup serve: http://%s:%d/ (store %s, namespace %r, %d entries%s)",
        host,
        address.port,
        redact(detector.store.uri),
        detector.store.namespace,
        detector.store.count(),
        ", token required" if token else "",
    )

    def drain():
        logger.info("stopping: no new connections; answering the %d requests in flight", site.in_flight)
        site.closing = True
        stopped = port.stopListening()
        stopped.addCallback(lambda _: site.idle(args.shutdown_timeout))
        stopped.addCallback(lambda _: site.close_connections(args.shutdown_timeout))

        def close(_):
            if site.in_flight:
                logger.warning("%d requests were still in flight after %s s", site.in_flight, args.shutdown_timeout)
            entries.close()
            logger.info("stopped; store %s closed", redact(detector.store.uri))

        return stopped.addCallback(close)

    reactor.addSystemEventTrigger("before", "shutdown", drain)
    reactor.run()
    return 0
