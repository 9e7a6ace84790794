"""Hostile settings and stores in a crawl: each stops the crawl before a page is fetched, with
its finish reason and one ERROR line, never a traceback, and leaves nothing behind."""

from __future__ import annotations

import logging

import pytest
import pytest_twisted
from scrapy.settings import Settings
from test_crawl import run_failing_open, settings_for

from scrapy_neardup.crawl.settings import NearDupConfig
from scrapy_neardup.stores.memory import MemoryStore


def neardup_errors(caplog) -> list[str]:
    """The pipeline's ERROR lines; and no traceback was logged by anyone."""
    assert not any(r.exc_info for r in caplog.records), [r.getMessage() for r in caplog.records if r.exc_info]
    assert not any("Unhandled error" in r.getMessage() for r in caplog.records)
    return [
        r.getMessage() for r in caplog.records if r.levelno >= logging.ERROR and r.name.startswith("scrapy_neardup")
    ]


# -- seconds ----------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["NEARDUP_TTL", "NEARDUP_EXTRACT_TIMEOUT", "NEARDUP_STORE_DOWN_TIMEOUT"])
@pytest.mark.parametrize("value", ["nan", float("nan"), "inf", float("-inf"), -100, "-1e-9", True, "soon"])
def test_every_setting_in_seconds_refuses_what_is_not_finite_and_positive(name, value):
    with pytest.raises(ValueError, match=rf"^{name}: must be a number of seconds >= 0 and finite \(0: "):
        NearDupConfig.from_settings(Settings({name: value}))


@pytest_twisted.inlineCallbacks
def test_a_time_window_redis_cannot_hold_stops_the_crawl_before_anything_is_created(local_site, redis_server, caplog):
    """1e300 s passed every check once; Redis then refused each item's expiry and every item
    passed unchecked, counted as store errors, with the finish reason "finished"."""
    namespace = "huge-ttl"
    settings = settings_for(redis_server.url(), NEARDUP_TTL=1e300, NEARDUP_NAMESPACE=namespace)
    yield run_failing_open(settings, local_site.root, "neardup_bad_setting")
    errors = neardup_errors(caplog)
    assert len(errors) == 1 and "cannot keep ttl 1e+300 s" in errors[0] and "NEARDUP_TTL" in errors[0], errors
    assert list(redis_server.client().scan_iter(f"neardup:{{{namespace}}}:*")) == []


# -- store classes registered in NEARDUP_STORES -----------------------------------------------


class FailingStore(MemoryStore):
    @classmethod
    def from_uri(cls, uri, namespace="default", **options):
        raise RuntimeError("the backend's server is on fire")


class NotAStore:
    @classmethod
    def from_uri(cls, uri, namespace="default", **options):
        return cls()


def a_function(uri, namespace="default", **options):
    return MemoryStore()


class GivesNoStore(MemoryStore):
    @classmethod
    def from_uri(cls, uri, namespace="default", **options):
        return "memory://"


@pytest.mark.parametrize(
    "registered, says",
    [
        (f"{__name__}.FailingStore", "RuntimeError: the backend's server is on fire"),
        (f"{__name__}.NotAStore", "not a store class"),
        (f"{__name__}.a_function", "not a store class"),
        ("logging.DEBUG", "is 10, not a store class"),  # an int reached through a dotted path
        (FailingStore, "RuntimeError"),  # the class itself, not its path
        (int, "not a store class"),
        (f"{__name__}.GivesNoStore", "GivesNoStore.from_uri gave str, not a store"),
    ],
)
@pytest_twisted.inlineCallbacks
def test_a_registered_store_that_is_no_store_or_fails_stops_with_one_line(
    local_site, tmp_path, caplog, registered, says
):
    settings = settings_for("custom://x", NEARDUP_STORES={"custom": registered})
    yield run_failing_open(settings, local_site.root, "neardup_store_unavailable")
    errors = neardup_errors(caplog)
    assert len(errors) == 1 and errors[0].startswith("scrapy-neardup: cannot open its store: "), errors
    assert says in errors[0] and errors[0].endswith("; the crawl stops")
