"""``neardup serve``: the options of the entry-time check service, its store, and its run.

The service itself is :mod:`scrapy_neardup.serve` (imported when the command runs: the other
commands need no HTTP server).
"""

from __future__ import annotations

import argparse
import logging
import os

from ..engine.detector import Detector
from ..stores import open_store
from .common import CommandError, recipe_and_thresholds, store_flags


def serve(args: argparse.Namespace) -> int:
    """Run the service until it is told to stop; 0 after a clean stop."""
    from ..serve.service import TOKEN_ENV, ServiceError, run_service

    logging.basicConfig(level=args.log_level, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    token = args.token if args.token is not None else os.environ.get(TOKEN_ENV)
    if token is not None and not token.strip():
        raise CommandError(f"the token is empty: give a non-empty --token or {TOKEN_ENV}")
    recipe, thresholds = recipe_and_thresholds(args)
    try:
        with open_store(args.store, args.namespace, recipe, **store_flags(args)) as store:
            run_service(
                Detector(store, thresholds),
                host=args.host,
                port=args.port,
                token=token.strip() if token is not None else None,
                max_bytes=args.max_bytes,
                shutdown_timeout=args.shutdown_timeout,
                workers=args.workers,
            )
    except ServiceError as exc:
        raise CommandError(str(exc)) from None
    return 0
