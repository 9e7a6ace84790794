"""NearDupPipeline: the Scrapy wiring around :class:`~scrapy_neardup.detector.Detector`.

Each item is judged as it arrives: its fingerprint is filed as a *pending* reservation, so
a copy arriving a moment later is already caught. The reservation is committed only when
the item has passed every pipeline (``item_scraped``); an item that a later pipeline drops,
or that fails, is released again, so its reprints are not lost.
"""

from __future__ import annotations

import dataclasses
import logging
from typing import Any

from itemadapter import ItemAdapter
from scrapy import signals
from scrapy.exceptions import CloseSpider, DropItem, NotConfigured

from .config import NearDupConfig, unknown_settings
from .detector import DUPLICATE, SHORT, UNIQUE, Detector, Verdict
from .fingerprint import Recipe
from .record import content_key
from .stores import Store, StoreError, StoreFormatError, open_store, redact
from .text import get_tokenizer
from .workers import ERROR, NO_TEXT, Prepared, Preparer, WorkerDied, WorkerPool, can_pickle_extractor

logger = logging.getLogger(__name__)

try:
    from scrapy import version_info as _SCRAPY_VERSION
except ImportError:  # pragma: no cover
    _SCRAPY_VERSION = (2, 0, 0)

# open_spider() may raise CloseSpider to stop the crawl cleanly since Scrapy 2.18.
_CLOSE_SPIDER_AT_OPEN = tuple(_SCRAPY_VERSION[:2]) >= (2, 18)

__all__ = ["NearDupPipeline", "NearDuplicateItem", "NearDupStoreError"]


class NearDuplicateItem(DropItem):
    """Raised for a reprint in drop mode; CoreStats counts it under its own name.

    ``log_level`` is set as an attribute, which Scrapy >= 2.13 reads; older versions take
    no such argument and log every drop at WARNING.
    """

    def __init__(self, message: str, log_level: str | None = "DEBUG", verdict: Verdict | None = None):
        super().__init__(message)
        self.log_level = log_level
        self.verdict = verdict


class NearDupStoreError(RuntimeError):
    """The store cannot be opened (Scrapy < 2.18, where open_spider cannot close the spider)."""


# -- stores shared by the spiders of one process ---------------------------------------


class _SharedStore:
    """One open store per (URI, namespace) in a process, with its pending reservations.

    Two spiders on one LevelDB must use one store object: document ids come from it.
    """

    def __init__(self, key: tuple[str, str], store: Store):
        self.key = key
        self.store = store
        self.users = 0
        self.waiters: dict[int, list[Any]] = {}  # pending doc id -> Deferreds of items waiting on it

    def resolve(self, doc_id: int, committed: bool) -> None:
        for waiter in self.waiters.pop(doc_id, []):
            if not waiter.called:
                waiter.callback(committed)


_SHARED: dict[tuple[str, str], _SharedStore] = {}


def _acquire_store(uri: str, namespace: str, recipe: Recipe, options: dict) -> _SharedStore:
    key = (uri, namespace)
    shared = _SHARED.get(key)
    if shared is None:
        shared = _SharedStore(key, open_store(uri, namespace=namespace, recipe=recipe, **options))
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


def _release_store(shared: _SharedStore) -> None:
    shared.users -= 1
    if shared.users <= 0:
        _SHARED.pop(shared.key, None)
        shared.store.close()


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
        self._shared: _SharedStore | None = None
        self._store_uri = ""
        self._reserved: dict[int, tuple[Any, Verdict]] = {}  # id(item) -> (item, verdict)
        self._reserved_keys: dict[str, int] = {}  # key -> id(item), when a pipeline swaps the item
        self._tail: Any = None  # Deferred fired when the last check in arrival order is done
        self._retry_lock: Any = None  # one page at a time after a worker died
        self._told: set[Any] = set()

    @classmethod
    def from_crawler(cls, crawler: Any) -> "NearDupPipeline":
        spider = getattr(crawler, "spider", None)
        try:
            config = NearDupConfig.from_settings(crawler.settings, spider)
        except ValueError as exc:
            raise ValueError(f"scrapy-neardup: {exc}") from None
        if not config.enabled:
            raise NotConfigured("NEARDUP_ENABLED is False")
        for name in unknown_settings(crawler.settings):
            logger.warning("Unknown setting %s (not a scrapy-neardup setting; a typo?)", name)
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
            self._shared = _acquire_store(uri, config.namespace, recipe, self._store_options(uri))
        except StoreError as exc:
            self._fail(exc)
        try:
            get_tokenizer(recipe.tokenizer)
            if not config.workers:  # with workers, pages are fingerprinted there only
                self.preparer = Preparer(recipe, config.extractor)
        except ValueError as exc:
            _release_store(self._shared)
            self._shared = None
            raise ValueError(f"scrapy-neardup: NEARDUP_TOKENIZER: {exc}") from None
        self.detector = Detector(
            self._shared.store,
            thresholds=config.thresholds(),
            ttl=config.ttl or None,
            fingerprinter=self.preparer.fingerprinter if self.preparer else _NoFingerprinter(),
        )
        if config.ttl:
            try:
                self._inc("purged", self.detector.purge())
            except StoreError as exc:
                self._once("purge", logging.WARNING, "Could not purge old documents: %s", exc)
        if config.workers:
            from twisted.internet.defer import DeferredLock

            self.pool = WorkerPool(config.workers, recipe, config.extractor, config.worker_niceness)
            self._retry_lock = DeferredLock()
        logger.info(
            "scrapy-neardup: store %s (namespace %r), action %s, nshash n=%d, SimHash distance <= %d, "
            "containment >= %.2f, min %d chars, time window %s, tokenizer %s, %s",
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
            extra={"spider": self.crawler.spider},
        )

    def _store_options(self, uri: str) -> dict:
        """Redis stores take client parameters and expire keys after the time window."""
        if uri.split("://", 1)[0].lower() not in ("redis", "rediss", "unix"):
            return {}
        return {"redis_params": dict(self.config.redis_params), "ttl": self.config.ttl or None}

    def _fail(self, exc: StoreError) -> None:
        reason = "neardup_store_format" if isinstance(exc, StoreFormatError) else "neardup_store_unavailable"
        logger.error("scrapy-neardup cannot open its store: %s", exc, extra={"spider": self.crawler.spider})
        if _CLOSE_SPIDER_AT_OPEN:
            raise CloseSpider(reason)
        raise NearDupStoreError(str(exc)) from None

    def close_spider(self, spider: Any = None) -> None:
        if self.pool is not None:
            self.pool.close()
            self.pool = None
        left = list(self._reserved.values())
        for item, verdict in left:
            self._release(item, verdict)
        if left:
            logger.warning(
                "scrapy-neardup released %d reservations whose items were neither scraped nor dropped "
                "(did a later pipeline return a new item without the %r field?)",
                len(left),
                self.config.key_field,
                extra={"spider": self.crawler.spider},
            )
        if self._shared is not None:
            _release_store(self._shared)
            self._shared = None
        if self.detector is not None:
            self._log_summary()

    def _log_summary(self) -> None:
        get = self.stats.get_value
        extracted = get("neardup/extracted", 0)
        seconds = get("neardup/extract_seconds", 0.0)
        per_page = f", extraction {1000 * seconds / extracted:.1f} ms/page" if extracted else ""
        logger.info(
            "scrapy-neardup: %d items: %d unique, %d duplicates (%d dropped, %d tagged), %d short, "
            "%d without text, %d too large, %d errors%s",
            get("neardup/items", 0),
            get("neardup/unique", 0),
            get("neardup/duplicate", 0),
            get("neardup/dropped", 0),
            get("neardup/tagged", 0),
            get("neardup/short", 0),
            get("neardup/no_text", 0),
            get("neardup/too_large", 0),
            get("neardup/error", 0) + get("neardup/store_error", 0),
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
            verdict = self._judge(adapter, key, prepared)
        else:
            prepared, verdict = await self._judge_in_order(adapter, key, source, is_html)
        if verdict is not None and verdict.status == DUPLICATE:
            verdict = await self._settle(adapter, key, prepared, verdict)
        if verdict is None or verdict.status == SHORT:
            return item
        return self._act(item, adapter, verdict)

    async def _judge_in_order(
        self, adapter: ItemAdapter, key: str, source: Any, is_html: bool
    ) -> tuple[Prepared, Verdict | None]:
        """Fingerprint in a worker; check in this thread, in the order items arrived."""
        from twisted.internet.defer import Deferred

        before, mine = self._tail, Deferred()
        self._tail = mine
        try:
            try:
                prepared = await self._from_pool(source, is_html)
            except Exception as exc:  # the pool itself failed (a worker was killed)
                prepared = Prepared(ERROR, error=f"{type(exc).__name__}: {exc}")
            if before is not None and not before.called:
                await _wait(before)
            return prepared, self._judge(adapter, key, prepared)
        finally:
            if self._tail is mine:
                self._tail = None
            mine.callback(None)

    async def _from_pool(self, source: Any, is_html: bool) -> Prepared:
        try:
            return await _wait(self.pool.submit(source, is_html))
        except WorkerDied as exc:
            # A worker died (killed, out of memory, a crashing extractor) and failed every page
            # it had been given. Each page is tried once more, alone, on a new worker, so that
            # one bad page costs one item.
            self._once("pool_broken", logging.WARNING, "A worker process died (%s); retrying its pages one at a time", exc)
            await _wait(self._retry_lock.acquire())
            try:
                return await _wait(self.pool.submit(source, is_html))
            finally:
                self._retry_lock.release()

    def _judge(self, adapter: ItemAdapter, key: str, prepared: Prepared) -> Verdict | None:
        """Count what preparing gave, then check the fingerprint against the store."""
        if prepared.extract_seconds is not None:
            self._inc("extracted")
            self._inc("extract_seconds", prepared.extract_seconds)
        if prepared.status == NO_TEXT:
            self._inc("no_text")
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
        return self._lookup(adapter.item, key, prepared)

    def _lookup(self, item: Any, key: str, prepared: Prepared) -> Verdict | None:
        """Check-and-add; a new story is reserved at once, so its copies are caught."""
        try:
            verdict = self.detector.check_fingerprint(key, prepared.fingerprint, reserve=True)
        except Exception as exc:  # a store that failed mid-crawl: the item passes, never unseen-dropped
            self._inc("store_error")
            self._once("store_error", logging.ERROR, "Store error, item %s passed unchecked: %s", key, exc)
            return None
        if verdict.status == SHORT:
            self._inc("short")
        elif verdict.stored:
            self._reserve(item, key, verdict)
        return verdict

    async def _settle(self, adapter: ItemAdapter, key: str, prepared: Prepared, verdict: Verdict) -> Verdict | None:
        """A copy of an item still in the pipelines waits to see whether that item is kept.

        If a later pipeline drops the first copy, this one is checked again and may become
        the story's first copy, instead of being dropped as a copy of nothing.
        """
        from twisted.internet.defer import Deferred

        for _ in range(3):
            if verdict is None or verdict.status != DUPLICATE or verdict.similar_id not in self._shared.waiters:
                break
            waiter: Deferred = Deferred()
            self._shared.waiters[verdict.similar_id].append(waiter)
            if await _wait(waiter):
                break  # the first copy was stored: this one is its duplicate
            verdict = self._lookup(adapter.item, key, prepared)
        return verdict

    def _act(self, item: Any, adapter: ItemAdapter, verdict: Verdict) -> Any:
        if verdict.status == UNIQUE:
            self._inc("unique")
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
            return item
        if self._tag(item, adapter, verdict):
            self._inc("tagged")
        return item

    def _reason(self, verdict: Verdict) -> str:
        return (
            f"{verdict.key} is a near-duplicate of {verdict.duplicate_of} "
            f"(similar_id {verdict.similar_id}, {verdict.method}, containment {verdict.containment:.2f}, "
            f"jaccard {verdict.jaccard:.2f}, SimHash distance {verdict.distance})"
        )

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

    # -- reservations -------------------------------------------------------------------

    def _reserve(self, item: Any, key: str, verdict: Verdict) -> None:
        self._reserved[id(item)] = (item, verdict)
        self._reserved_keys[key] = id(item)
        self._shared.waiters.setdefault(verdict.doc_id, [])

    def _pop(self, item: Any) -> tuple[Any, Verdict] | None:
        entry = self._reserved.pop(id(item), None)
        if entry is None:
            key = ItemAdapter(item).get(self.config.key_field) if ItemAdapter.is_item(item) else None
            ident = self._reserved_keys.get(str(key)) if key not in (None, "") else None
            entry = self._reserved.pop(ident, None) if ident is not None else None
        if entry is not None:
            key = entry[1].key
            if self._reserved_keys.get(key) == id(entry[0]):
                del self._reserved_keys[key]
        return entry

    def item_scraped(self, item: Any, spider: Any = None, **kwargs: Any) -> None:
        entry = self._pop(item)
        if entry is None:
            return
        _, verdict = entry
        try:
            self.detector.commit(verdict)
        except Exception as exc:
            self._inc("store_error")
            self._once("store_error", logging.ERROR, "Store error committing %s: %s", verdict.key, exc)
        self._shared.resolve(verdict.doc_id, committed=True)

    def item_dropped(self, item: Any, exception: BaseException | None = None, **kwargs: Any) -> None:
        if isinstance(exception, NearDuplicateItem):
            return  # our own drop: a duplicate holds no reservation
        entry = self._pop(item)
        if entry is not None:
            self._release(*entry)

    def item_error(self, item: Any, **kwargs: Any) -> None:
        entry = self._pop(item)
        if entry is not None:
            self._release(*entry)

    def _release(self, item: Any, verdict: Verdict) -> None:
        self._reserved.pop(id(item), None)
        try:
            self.detector.release(verdict)
        except Exception as exc:
            self._inc("store_error")
            self._once("store_error", logging.ERROR, "Store error releasing %s: %s", verdict.key, exc)
        self._inc("released")
        self._shared.resolve(verdict.doc_id, committed=False)

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


async def _wait(deferred: Any) -> Any:
    """Await a Deferred under the asyncio reactor and the others alike."""
    from scrapy.utils.defer import maybe_deferred_to_future

    return await maybe_deferred_to_future(deferred)
