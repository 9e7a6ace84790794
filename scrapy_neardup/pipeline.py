"""NearDupPipeline: the Scrapy wiring around :class:`~scrapy_neardup.detector.Detector`.

Each item is judged as it arrives; a unique one holds a reservation
(:class:`~scrapy_neardup.reservations.Reservations`) that Scrapy's signals commit
(``item_scraped``) or release (``item_dropped``, ``item_error``). With worker processes,
the :class:`~scrapy_neardup.workers.WorkerPool` prepares pages and keeps them in arrival order.
"""

from __future__ import annotations

import dataclasses
import logging
from typing import Any

from itemadapter import ItemAdapter
from scrapy import signals
from scrapy.exceptions import DropItem, NotConfigured
from scrapy.utils.defer import maybe_deferred_to_future

from .checkbatch import CheckBatcher
from .config import NearDupConfig, typos
from .detector import DUPLICATE, REVISIT, SHORT, UNIQUE, Detector, Verdict
from .fingerprint import Recipe
from .passages import passages_of
from .deferreds import maybe_await
from .record import content_key
from .report import FirstCopies, Pair, Report
from .reservations import Reservations, Waiting
from .storecalls import StoreCalls, is_local
from .stop import BAD_SETTING, STORE_DOWN, STORE_FORMAT, STORE_UNAVAILABLE, CrawlStopper, stop_at_open
from .stores import Store, StoreError, StoreFormatError, StoreUnavailable, open_store, redact
from .stores.base import StoreLost
from .text import get_tokenizer
from .workers import ERROR, NO_TEXT, TIMEOUT, Prepared, Preparer, WorkerPool, can_pickle_extractor

logger = logging.getLogger(__name__)

try:  # Scrapy versions with ensure_awaitable await what close_spider returns (and deprecate a Deferred)
    from scrapy.utils.defer import ensure_awaitable as _  # noqa: F401

    _CLOSE_AWAITS_COROUTINES = True
except ImportError:  # pragma: no cover
    _CLOSE_AWAITS_COROUTINES = False

__all__ = ["NearDupPipeline", "NearDuplicateItem"]


class NearDuplicateItem(DropItem):
    """Raised for a reprint in drop mode; CoreStats counts it under its own name.

    ``log_level`` is set as an attribute, which Scrapy >= 2.13 reads; older versions take
    no such argument and log every drop at WARNING.
    """

    def __init__(self, message: str, log_level: str | None = "DEBUG", verdict: Verdict | None = None):
        super().__init__(message)
        self.log_level = log_level
        self.verdict = verdict


class RevisitedItem(NearDuplicateItem):
    """Raised for a revisit (a key seen again with the text stored under it) when
    ``NEARDUP_REVISIT = "drop"``; CoreStats counts it under its own name."""


# -- stores shared by the spiders of one process ---------------------------------------


class _SharedStore:
    """One open store per (URI, namespace) in a process, with the copies waiting on its
    pending documents.

    Two spiders on one LevelDB must use one store object: document ids come from it.
    """

    def __init__(self, key: tuple[str, str], store: Store, threaded: bool | None = None, down_timeout: float = 60.0):
        self.key = key
        self.store = store
        self.users = 0
        self.waiting: Waiting = {}
        self.calls = StoreCalls(store.describe(), bool(threaded), down_timeout)


_SHARED: dict[tuple[str, str], _SharedStore] = {}


def _acquire_store(uri: str, namespace: str, recipe: Recipe, config: NearDupConfig) -> _SharedStore:
    key = (uri, namespace)
    shared = _SHARED.get(key)
    if shared is None:
        store = open_store(uri, namespace, recipe, stores=config.stores, **config.store_options())
        shared = _SharedStore(key, store, config.store_thread, config.store_down_timeout)
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


def _release_store(shared: _SharedStore) -> Any:
    """The store closes with its last user (after every call made before); a Deferred when
    its calls run on a thread."""
    shared.users -= 1
    if shared.users > 0:
        return None
    _SHARED.pop(shared.key, None)
    return shared.calls.close(shared.store.close)


# -- the pipeline -----------------------------------------------------------------------


class NearDupPipeline:
    """Drops or tags items whose text is a near-duplicate of an item seen before."""

    def __init__(self, crawler: Any, config: NearDupConfig):
        self.crawler = crawler
        self.config = config
        self.stats = crawler.stats
        self.detector: Detector | None = None
        self.preparer: Preparer | None = None
        self.pool: WorkerPool | None = None
        self.reservations: Reservations | None = None
        self._checks: CheckBatcher | None = None  # with a server store
        self._shared: _SharedStore | None = None
        self._store_uri = ""
        self._told: set[Any] = set()
        self._stopping = False  # _stop_crawl was called
        self._closing = False  # close_spider was called
        self._unsettled: list[tuple[str, Verdict]] = []  # commits and releases that met an outage
        self.report: Report | None = None  # NEARDUP_REPORT
        self.first_copies: FirstCopies | None = None

    @classmethod
    def from_crawler(cls, crawler: Any) -> "NearDupPipeline | CrawlStopper":
        """The pipeline; on a bad setting, one ERROR line and a stand-in that stops the crawl."""
        spider = getattr(crawler, "spider", None)
        for warning in typos(crawler.settings, spider):
            logger.warning("%s", warning, extra={"spider": spider})
        try:
            config = NearDupConfig.from_settings(crawler.settings, spider)
        except ValueError as exc:
            logger.error("scrapy-neardup: %s; the crawl stops", exc, extra={"spider": spider})
            return CrawlStopper(crawler, BAD_SETTING)
        if not config.enabled:
            raise NotConfigured("NEARDUP_ENABLED is False")
        pipeline = cls(crawler, config)
        crawler.signals.connect(pipeline.item_scraped, signal=signals.item_scraped)
        crawler.signals.connect(pipeline.item_dropped, signal=signals.item_dropped)
        crawler.signals.connect(pipeline.item_error, signal=signals.item_error)
        return pipeline

    # -- opening and closing ------------------------------------------------------------

    def open_spider(self, spider: Any = None) -> None:
        config = self.config
        if config.workers and not can_pickle_extractor(config.extractor):
            logger.warning(
                "scrapy-neardup: NEARDUP_WORKERS=%d needs an extractor that worker processes can "
                "import (a dotted path, or a function of an importable module; %r is defined in "
                "the crawl script); extracting in the reactor thread instead",
                config.workers,
                config.extractor,
                extra={"spider": self.crawler.spider},
            )
            self._inc("workers_disabled")
            self.config = config = dataclasses.replace(config, workers=0)
        uri = config.store_uri()
        self._store_uri = redact(uri)
        recipe = config.recipe().resolved()
        try:
            self._shared = _acquire_store(uri, config.namespace, recipe, config)
        except StoreError as exc:
            reason = STORE_FORMAT if isinstance(exc, StoreFormatError) else STORE_UNAVAILABLE
            return self._fail(f"cannot open its store: {exc}", reason)
        try:
            get_tokenizer(recipe.tokenizer)
            if not config.workers:  # with workers, pages are fingerprinted there only
                self.preparer = Preparer(recipe, config.extractor)
        except ValueError as exc:
            _release_store(self._shared)
            self._shared = None
            return self._fail(f"NEARDUP_TOKENIZER: {exc}", BAD_SETTING)
        self.detector = Detector(
            self._shared.store,
            thresholds=config.thresholds(),
            ttl=config.ttl or None,
            methods=config.methods,
            fingerprinter=self.preparer.fingerprinter if self.preparer else _NoFingerprinter(),
            prefer=config.policy(),
        )
        if config.ttl:
            try:
                self._inc("purged", self.detector.purge())
            except StoreError as exc:
                self._once("purge", logging.WARNING, "Could not purge old documents: %s", exc)
        calls = self._shared.calls
        if not is_local(self._shared.store):  # a server store: one round trip per batch of checks
            self._checks = CheckBatcher(
                lambda checks, texts: calls.run(
                    self.detector.check_many, [(key, fp) for key, fp, _ in checks], True, [s for *_, s in checks], texts
                )
            )
        self.reservations = Reservations(
            lambda verdict: calls.run(self.detector.commit, verdict),
            lambda verdict: calls.run(self.detector.release, verdict),
            config.key_field,
            self._shared.waiting,
            self._store_failed,
        )
        if config.report:
            self.report = Report(config.report, f"neardup review: {getattr(self.crawler.spider, 'name', '')}")
            self.first_copies = FirstCopies(self._shared.store.texts)
        if config.workers:
            needs_text = bool(config.text_out_field or config.keep_text or config.related or config.report)
            self.pool = WorkerPool(
                config.workers, recipe, config.extractor, config.worker_niceness, config.extract_timeout or None,
                send_text=needs_text,
            )
        logger.info(
            "scrapy-neardup: store %s (namespace %r), action %s, nshash n=%d, SimHash distance <= %d, "
            "containment >= %.2f, min %d chars, time window %s, tokenizer %s, %s, %s",
            self._store_uri,
            config.namespace,
            config.action,
            config.nshash_n,
            config.simhash_distance,
            config.threshold,
            config.min_chars,
            f"{config.ttl:g} s" if config.ttl else "none",
            recipe.tokenizer,
            f"{config.workers} worker processes" if config.workers else "in the reactor thread",
            "store calls on a thread of their own" if calls.threaded else "store calls inline",
            extra={"spider": self.crawler.spider},
        )

    def _stop_crawl(self, reason: str) -> None:
        """Close the spider (once): going on without the store's memory keeps every reprint."""
        if self._stopping:
            return
        self._stopping = True
        engine = self._engine()
        if engine is None:  # a pipeline opened by hand: no crawl to stop
            return
        if hasattr(engine, "close_spider_async"):  # Scrapy >= 2.14
            from scrapy.utils.defer import deferred_from_coro

            deferred_from_coro(engine.close_spider_async(reason=reason))
        else:
            engine.close_spider(self.crawler.spider, reason)

    def _fail(self, message: str, reason: str) -> None:
        """One ERROR line, then the crawl stops before a page is fetched (see :mod:`.stop`)."""
        logger.error("scrapy-neardup: %s; the crawl stops", message, extra={"spider": self.crawler.spider})
        stop_at_open(self.crawler, reason)

    def close_spider(self, spider: Any = None) -> Any:
        self._closing = True
        self._retry_unsettled()  # one last try; what fails now is counted neardup/commit_error
        if self.pool is not None:
            self.pool.close()
            self.pool = None
        left = self.reservations.release_all() if self.reservations is not None else []
        if left:
            self._inc("released", len(left))
            logger.warning(
                "scrapy-neardup released %d reservations whose items were neither scraped nor dropped "
                "(did a later pipeline return a new item without the %r field?)",
                len(left),
                self.config.key_field,
                extra={"spider": self.crawler.spider},
            )
        if self._checks is not None:
            self._inc("check_round_trips", self._checks.batches)
        closing = None
        if self._shared is not None:
            closing = _release_store(self._shared)
            self._shared = None
        if self.detector is not None:
            self._log_summary()
        self._write_report()
        if closing is None:
            return None
        closing.addErrback(lambda failure: self._once("close", logging.WARNING, "Closing the store: %s", failure.value))
        # Scrapy waits for the store to close. Where it takes awaitables, a Future: closing goes on
        # when a caller does not await it (a coroutine would not run).
        return maybe_deferred_to_future(closing) if _CLOSE_AWAITS_COROUTINES else closing

    def _write_report(self) -> None:
        """The review page of the run (NEARDUP_REPORT); a failure to write it is logged."""
        if self.report is None:
            return
        try:
            pages = self.report.write()
            logger.info("scrapy-neardup: review page %s (%d pages)", pages[0], len(pages), extra={"spider": self.crawler.spider})
        except OSError as exc:
            logger.error("scrapy-neardup: cannot write the review page %s: %s", self.config.report, exc,
                         extra={"spider": self.crawler.spider})
        finally:
            self.report.close()
            self.report = None

    def _log_summary(self) -> None:
        get = self.stats.get_value
        extracted = get("neardup/extracted", 0)
        seconds = get("neardup/extract_seconds", 0.0)
        per_page = f", extraction {1000 * seconds / extracted:.1f} ms/page" if extracted else ""
        unchecked = get("neardup/unchecked", 0)
        logger.log(
            logging.WARNING if unchecked else logging.INFO,
            "scrapy-neardup: %d items: %d unique (%d updated), %d revisits, %d duplicates (%d dropped, %d tagged), "
            "%d short, %d without text, %d too large, %d errors, %d passed unchecked (store down or failing)%s",
            get("neardup/items", 0),
            get("neardup/unique", 0),
            get("neardup/updated", 0),
            get("neardup/revisit", 0),
            get("neardup/duplicate", 0),
            get("neardup/dropped", 0),
            get("neardup/tagged", 0),
            get("neardup/short", 0),
            get("neardup/no_text", 0),
            get("neardup/too_large", 0),
            get("neardup/error", 0),
            unchecked,
            per_page,
            extra={"spider": self.crawler.spider},
        )

    # -- items --------------------------------------------------------------------------

    async def process_item(self, item: Any, spider: Any = None) -> Any:
        if self.detector is None:
            return item  # the store did not open; the crawl is closing
        self._inc("items")
        adapter = ItemAdapter(item)
        source, is_html = self._source(adapter)
        if source is None:
            self._inc("no_text")
            return item
        cap = self.config.max_html_size
        if cap and len(source) > cap:
            self._inc("too_large")
            self._once(
                "too_large",
                logging.WARNING,
                "Item %s has %d %s of HTML, over NEARDUP_MAX_HTML_SIZE = %d; passed unchecked",
                self._describe(adapter),
                len(source),
                "bytes" if isinstance(source, bytes) else "characters",
                cap,
            )
            return item
        key = self._key(adapter, source)
        if self.pool is None:
            prepared = self.preparer(source, is_html)
            verdict = await self._judge(adapter, key, prepared, source)
        else:

            async def judge(prepared: Prepared) -> tuple[Prepared, Verdict | None]:
                return prepared, await self._judge(adapter, key, prepared, source)

            prepared, verdict = await self.pool.in_order(source, is_html, judge)
        if verdict is not None and verdict.status == DUPLICATE:
            verdict = await self.reservations.settle(verdict, lambda: self._lookup(item, key, prepared, source))
        if verdict is None or verdict.status == SHORT:
            return item
        text = _text_of(prepared, source)
        if self.config.related:
            await self._add_related(verdict, text)
        if self.report is not None:
            await self._note(verdict, text)
        return self._act(item, adapter, verdict)

    async def _note(self, verdict: Verdict, text: str | None) -> None:
        """Count the verdict in the review page; a duplicate's section shows its first copy's
        text when this run saw it or the store kept it."""
        if verdict.status != DUPLICATE:
            self.report.count(verdict.status)
            if text is not None and verdict.doc_id == verdict.similar_id:
                self.first_copies.remember(verdict.similar_id, text)
            return
        try:
            first = await maybe_await(self._shared.calls.run(self.first_copies.text, verdict.similar_id))
        except Exception as exc:  # shown without it; the verdict stands
            self._once("report_text", logging.WARNING, "Could not read the first copy of %s: %s", verdict.key, exc)
            first = None
        self.report.add(Pair(
            verdict.key, text or "", verdict.duplicate_of or "", first,
            verdict.method, verdict.containment, verdict.jaccard, verdict.distance,
        ))

    async def _add_related(self, verdict: Verdict, text: Any) -> None:
        """List the other stored stories sharing a long passage with the item (read-only)."""
        if not isinstance(text, str):
            return
        try:
            passages = passages_of(text)
            await maybe_await(self._shared.calls.run(self.detector.add_related, [verdict], [passages]))
        except Exception as exc:  # the verdict stands; only the list is missing
            self._inc("related_error")
            self._once("related_error", logging.WARNING, "Related stories of %s not listed: %s", verdict.key, exc)

    async def _judge(self, adapter: ItemAdapter, key: str, prepared: Prepared, body: Any) -> Verdict | None:
        """Count what preparing gave, then check the fingerprint against the store."""
        if prepared.extract_seconds is not None:
            self._inc("extracted")
            self._inc("extract_seconds", prepared.extract_seconds)
        if prepared.text is not None and self.config.text_out_field:
            self._hand_on(adapter, prepared.text)
        if prepared.status == NO_TEXT:
            self._inc("no_text")
            return None
        if prepared.status == TIMEOUT:
            self._inc("extract_timeout")
            self._once(
                "extract_timeout",
                logging.WARNING,
                "Extracting item %s took over NEARDUP_EXTRACT_TIMEOUT = %g s: its worker was replaced "
                "and the item passed unchecked",
                self._describe(adapter),
                self.config.extract_timeout,
            )
            return None
        if prepared.status == ERROR:
            self._inc("error")
            self._once(
                "error",
                logging.WARNING,
                "Could not get text of item %s, passed unchecked: %s",
                self._describe(adapter),
                prepared.error,
            )
            return None
        return await self._lookup(adapter.item, key, prepared, body)

    async def _lookup(self, item: Any, key: str, prepared: Prepared, body: Any) -> Verdict | None:
        """Check-and-add; a new story is reserved at once, so its copies are caught (with its
        text, under NEARDUP_KEEP_TEXT).

        While the store is down the item waits and tries again (see :meth:`StoreCalls.wait_to_retry`):
        a short outage (a restart, a failover) costs time, not reprints. Past
        ``NEARDUP_STORE_DOWN_TIMEOUT`` the crawl stops, and the item passes unchecked, counted;
        it is never dropped unseen.
        """
        calls = self._shared.calls
        source = self._source_name(item)
        text = _text_of(prepared, body) if self.config.keep_text else None
        waited = False
        while True:
            try:
                if self._checks is not None:
                    check = self._checks.check(key, prepared.fingerprint, source, text)
                else:
                    check = calls.run(self.detector.check_fingerprint, key, prepared.fingerprint, True, source, text)
                verdict = await maybe_await(check)
                break
            except StoreUnavailable as exc:
                if not isinstance(exc, StoreLost):
                    if await calls.wait_to_retry(self._crawl_closing):
                        waited = True
                        continue
                    return self._store_down(key, exc)
                return self._store_error(key, exc)
            except Exception as exc:
                return self._store_error(key, exc)
        if waited:
            self._inc("store_waited")
        if self._unsettled:
            self._retry_unsettled()
        if verdict.status == SHORT:
            self._inc("short")
        elif verdict.stored:
            self.reservations.reserve(item, verdict)
        return verdict

    def _store_error(self, key: str, exc: Exception) -> None:
        """A store that failed on the item's check: it passes unchecked, counted."""
        self._inc("unchecked")
        self._inc("store_error")
        self._once("store_error", logging.ERROR, "Store error, item %s passed unchecked: %s", key, exc)
        if isinstance(exc, StoreLost):
            self._stop_crawl("neardup_store_lost")

    def _store_down(self, key: str, exc: Exception) -> None:
        """The store stayed down past the bound (or the crawl is closing): the item passes
        unchecked, counted, and the crawl stops."""
        self._inc("unchecked")
        self._inc("store_down")
        calls = self._shared.calls
        if calls.given_up and not self._stopping:
            logger.error(
                "scrapy-neardup: store %s has been down for %.1f s, NEARDUP_STORE_DOWN_TIMEOUT = %g s; the "
                "crawl stops (%s). Items still in flight pass unchecked, counted neardup/unchecked: %s",
                calls.describe,
                calls.down_for(),
                calls.down_timeout,
                STORE_DOWN,
                exc,
                extra={"spider": self.crawler.spider},
            )
            self._stop_crawl(STORE_DOWN)
        return None

    def _crawl_closing(self) -> bool:
        """The crawl is closing (stopped by this pipeline, Scrapy's shutdown, or the engine
        closing the spider): items stop waiting for the store."""
        if self._stopping or self._closing:
            return True
        engine = self._engine()
        if engine is None:  # a pipeline opened by hand: nothing closes it but close_spider
            return False
        if not engine.running:  # Scrapy's shutdown (SIGTERM, Ctrl-C)
            return True
        slot = getattr(engine, "_slot", None) or getattr(engine, "slot", None)  # Scrapy >= 2.13, older
        return getattr(slot, "closing", None) is not None

    def _engine(self) -> Any:
        """The crawl's engine; None for a pipeline opened by hand, outside a crawl."""
        try:
            return self.crawler.engine
        except RuntimeError:  # Scrapy >= 2.19 before the crawl starts
            return None

    def _retry_unsettled(self) -> None:
        """Commit or release again the documents whose call met an outage."""
        unsettled, self._unsettled = self._unsettled, []
        for action, verdict in unsettled:
            self.reservations.retry(action, verdict)

    def _act(self, item: Any, adapter: ItemAdapter, verdict: Verdict) -> Any:
        if verdict.status == REVISIT:
            self._inc("revisit")
            if self.config.revisit == "drop":
                self._inc("dropped")
                raise RevisitedItem(
                    f"{verdict.key} was seen before with the same text (similar_id {verdict.similar_id})",
                    self.config.drop_log_level,
                    verdict,
                )
        elif verdict.status == UNIQUE:
            self._inc("unique")
            if verdict.updated:
                self._inc("updated")
            if verdict.replaces is not None:  # in both modes: the storage pipeline replaces its row
                self._inc("replaced")
                self._set(item, adapter, self.config.replaces_field, verdict.replaces, "NEARDUP_REPLACES_FIELD",
                          "replaces_field_missing", "without the key of the copy they replace")
        else:
            self._inc("duplicate")
            for method in (verdict.method or "").split("+"):
                if method:
                    self._inc(f"match/{method}")
        if self.config.debug:
            logger.debug("scrapy-neardup verdict: %s", verdict.as_dict(), extra={"spider": self.crawler.spider})
        if self.config.action == "drop":
            if verdict.status == DUPLICATE:
                self._inc("dropped")
                raise NearDuplicateItem(self._reason(verdict), self.config.drop_log_level, verdict)
            self._write_related(item, adapter, verdict)
            return item
        self._write_related(item, adapter, verdict)
        if self._tag(item, adapter, verdict):
            self._inc("tagged")
        return item

    def _write_related(self, item: Any, adapter: ItemAdapter, verdict: Verdict) -> None:
        if verdict.related is not None:
            self._set(item, adapter, self.config.related_field, verdict.related, "NEARDUP_RELATED_FIELD",
                      "related_field_missing", "without related stories")

    def _set(self, item: Any, adapter: ItemAdapter, field: str, value: Any, setting: str, stat: str, missing: str) -> None:
        """Write ``value`` to ``field``; an item class without the field passes without it,
        counted under ``stat`` and said once."""
        if not isinstance(item, dict) and field not in adapter.field_names():
            self._inc(stat)
            self._once(
                (stat, type(item)),
                logging.WARNING,
                "Item class %s has no field %r (%s): its items pass %s. Declare the field in the item class",
                f"{type(item).__module__}.{type(item).__qualname__}",
                field,
                setting,
                missing,
            )
            return
        adapter[field] = value

    def _reason(self, verdict: Verdict) -> str:
        return (
            f"{verdict.key} is a near-duplicate of {verdict.duplicate_of} "
            f"(similar_id {verdict.similar_id}, {verdict.method}, containment {verdict.containment:.2f}, "
            f"jaccard {verdict.jaccard:.2f}, SimHash distance {verdict.distance})"
        )

    def _hand_on(self, adapter: ItemAdapter, text: str) -> None:
        """Give the storage pipeline the body extracted here, so a crawl extracts it once; a
        value the item already has is kept."""
        field = self.config.text_out_field
        if adapter.get(field) not in (None, ""):
            return
        if not isinstance(adapter.item, dict) and field not in adapter.field_names():
            self._inc("text_out_field_missing")
            self._once(
                ("text_out_field_missing", type(adapter.item)),
                logging.WARNING,
                "Item class %s has no field %r (NEARDUP_TEXT_OUT_FIELD): the extracted body is not "
                "handed on. Declare the field in the item class",
                f"{type(adapter.item).__module__}.{type(adapter.item).__qualname__}",
                field,
            )
            return
        adapter[field] = text

    def _tag(self, item: Any, adapter: ItemAdapter, verdict: Verdict) -> bool:
        fields = (self.config.duplicate_of_field, self.config.similar_id_field)
        if not isinstance(item, dict):
            declared = set(adapter.field_names())
            missing = [name for name in fields if name not in declared]
            if missing:
                self._inc("tag_field_missing")
                self._once(
                    ("tag_field_missing", type(item)),
                    logging.WARNING,
                    "Item class %s has no field %s: its items pass untagged (NEARDUP_ACTION = 'tag'). "
                    "Declare the field(s) in the item class, or set NEARDUP_DUPLICATE_OF_FIELD / "
                    "NEARDUP_SIMILAR_ID_FIELD to fields it has",
                    f"{type(item).__module__}.{type(item).__qualname__}",
                    " and ".join(map(repr, missing)),
                )
                return False
        adapter[self.config.duplicate_of_field] = verdict.duplicate_of
        adapter[self.config.similar_id_field] = verdict.similar_id
        return True

    # -- signals: the item's fate settles its reservation ---------------------------------

    def item_scraped(self, item: Any, spider: Any = None, **kwargs: Any) -> None:
        if self.reservations is not None:
            self.reservations.commit(item)

    def item_dropped(self, item: Any, exception: BaseException | None = None, **kwargs: Any) -> None:
        if isinstance(exception, NearDuplicateItem):
            return  # our own drop: a duplicate holds no reservation
        self.item_error(item)

    def item_error(self, item: Any, **kwargs: Any) -> None:
        if self.reservations is not None and self.reservations.release(item) is not None:
            self._inc("released")

    def _store_failed(self, action: str, verdict: Verdict, exc: Exception) -> None:
        """A commit or release that failed: one that met an outage is tried again once the store
        answers (or at close); any other failure is counted."""
        if isinstance(exc, StoreLost):
            self._stop_crawl("neardup_store_lost")
        elif isinstance(exc, StoreUnavailable) and not self._closing:
            self._unsettled.append((action, verdict))
            return
        self._inc("commit_error")
        self._once("commit_error", logging.ERROR, "Store error %s %s: %s", action, verdict.key, exc)

    # -- helpers ------------------------------------------------------------------------

    def _source(self, adapter: ItemAdapter) -> tuple[Any, bool]:
        """(text, False) from the text field, else (html, True) from the HTML field, else (None, _)."""
        text = adapter.get(self.config.text_field)
        if isinstance(text, str) and text.strip():
            return text, False
        if text is not None and not isinstance(text, str):
            self._wrong_type(adapter, self.config.text_field, text, "NEARDUP_TEXT_FIELD")
        html = adapter.get(self.config.html_field)
        if isinstance(html, (str, bytes)) and html.strip():
            return html, True
        if html is not None and not isinstance(html, (str, bytes)):
            self._wrong_type(adapter, self.config.html_field, html, "NEARDUP_HTML_FIELD")
        return None, False

    def _wrong_type(self, adapter: ItemAdapter, field: str, value: Any, setting: str) -> None:
        self._once(
            (setting, type(value)),
            logging.WARNING,
            "Field %r (%s) of item %s holds %s, not text; such items are checked by their other "
            "field or passed unchecked",
            field,
            setting,
            self._describe(adapter),
            type(value).__name__,
        )

    def _source_name(self, item: Any) -> str:
        """The item's site for a ``source`` policy: NEARDUP_SOURCE_FIELD when the item has it
        as text, else "" (the engine takes the key's host)."""
        field = self.config.source_field
        if not field or self.detector is None or self.detector.prefer is None or not ItemAdapter.is_item(item):
            return ""
        value = ItemAdapter(item).get(field)
        return value.strip() if isinstance(value, str) else ""

    def _key(self, adapter: ItemAdapter, source: str | bytes) -> str:
        """The key field, else a key derived from the content (see :func:`.record.content_key`)."""
        value = adapter.get(self.config.key_field)
        if value is None or value == "":
            return content_key(source)
        return value if isinstance(value, str) else str(value)

    def _describe(self, adapter: ItemAdapter) -> str:
        value = adapter.get(self.config.key_field)
        return repr(value) if value is not None else f"of type {type(adapter.item).__name__}"

    def _inc(self, name: str, count: float = 1) -> None:
        self.stats.inc_value(f"neardup/{name}", count)

    def _once(self, kind: Any, level: int, message: str, *args: Any) -> None:
        """Log a problem once at ``level``; repeats only at DEBUG with NEARDUP_DEBUG."""
        extra = {"spider": self.crawler.spider}
        if kind not in self._told:
            self._told.add(kind)
            if not self.config.debug:
                message += " (no more of these will be shown; set NEARDUP_DEBUG to see all)"
            logger.log(level, message, *args, extra=extra)
        elif self.config.debug:
            logger.debug(message, *args, extra=extra)


class _NoFingerprinter:
    """The crawler process does not fingerprint when workers do (and need not load IDF tables)."""

    def fingerprint(self, text: str) -> Any:
        raise RuntimeError("fingerprints are computed by the worker processes")


def _text_of(prepared: Prepared, body: Any) -> str | None:
    """The text an item was judged on: the body extracted from its HTML (None where a worker
    did not send it back), or its text field; never the HTML itself."""
    if prepared.text is not None or prepared.extract_seconds is not None:
        return prepared.text
    return body if isinstance(body, str) else None
