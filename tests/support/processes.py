"""Processes forked from one server process per test worker, which has imported the package,
Scrapy and Twisted once, instead of each importing them again (``spawn``): the racers of the
store tests, and the tests' Python commands (support.warm_python)."""

from __future__ import annotations

import multiprocessing
from multiprocessing import forkserver
from multiprocessing.context import BaseContext

# Imported once by the server process; each process forks from it with these already loaded. A
# crawl's modules, except Twisted's reactor, which each crawl installs as its settings say (no
# module here installs one; a name missing from this Scrapy is skipped by the server).
PRELOAD = [
    "pytest",
    "redis",
    "scrapy_neardup",
    "scrapy_neardup.engine.prefer",
    "scrapy_neardup.stores.redis",
    "scrapy_neardup.stores.redis.cluster_store",
    "scrapy_neardup.stores.leveldb",
    "scrapy_neardup.crawl.pipeline",
    "scrapy_neardup.crawl.workers",
    "scrapy_neardup.cli",
    "scrapy_neardup.cli.dedup",
    "scrapy_neardup.cli.query",
    "scrapy_neardup.cli.inspection",
    "scrapy_neardup.cli.explain",
    "scrapy_neardup.cli.serve",
    "scrapy_neardup.cli.fingerprints",
    "scrapy_neardup.serve.service",
    "scrapy_neardup.review.page",
    "scrapy.cmdline",
    "scrapy.crawler",
    "scrapy.commands.crawl",
    "scrapy.commands.runspider",
    "scrapy.core.engine",
    "scrapy.core.scheduler",
    "scrapy.core.downloader.handlers.http11",
    "scrapy.core.downloader.contextfactory",
    "scrapy.downloadermiddlewares.retry",
    "scrapy.downloadermiddlewares.redirect",
    "scrapy.downloadermiddlewares.httpcompression",
    "scrapy.downloadermiddlewares.cookies",
    "scrapy.downloadermiddlewares.robotstxt",
    "scrapy.downloadermiddlewares.offsite",
    "scrapy.spidermiddlewares.referer",
    "scrapy.spidermiddlewares.depth",
    "scrapy.extensions.feedexport",
    "scrapy.extensions.telnet",
    "scrapy.extensions.memusage",
    "scrapy.extensions.closespider",
    "scrapy.extensions.throttle",
    "scrapy.pqueues",
    "scrapy.squeues",
    "scrapy.statscollectors",
    "scrapy.linkextractors",
    "scrapy.resolver",
    "twisted.internet.asyncioreactor",
]


def server_context() -> BaseContext:
    """The multiprocessing context of the server: ``forkserver`` with PRELOAD imported.

    Each process is one of its own, forked from a server process that holds no connection,
    thread or reactor of the test's.
    """
    context = multiprocessing.get_context("forkserver")
    context.set_forkserver_preload(PRELOAD)
    return context


def racing_processes() -> BaseContext:
    """The multiprocessing context for racers: each has its own store connection, and what
    the racers share is the store."""
    return server_context()


def stop_server() -> None:
    """Stops the server and waits for it, so that its CPU and its processes' count in this
    process's children (getrusage), as a child's do."""
    forkserver._forkserver._stop()
