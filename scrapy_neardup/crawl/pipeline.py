"""NearDupPipeline: the Scrapy wiring around the engine's
:class:`~scrapy_neardup.engine.detector.Detector`.

One item's path: its text (or HTML) is read from its fields (:class:`.items.ItemFields`),
prepared (extracted and fingerprinted, here or in a worker process: :mod:`.workers`), checked
against the store (:class:`.storeaccess.StoreAccess`), and dropped or tagged. A unique item
holds a reservation (:class:`.reservations.Reservations`) that Scrapy's signals commit
(``item_scraped``) or release (``item_dropped``, ``item_error``); a copy of a pending first
copy waits for that outcome. A store failing on the way is :class:`.failures.Outages`'s to
handle; the review page is :class:`.review.CrawlReview`'s; stats and log lines go through
:class:`.runlog.RunLog`.
"""

from __future__ import annotations

import dataclasses
import logging
from typing import TYPE_CHECKING, Any

from itemadapter import ItemAdapter
from scrapy import signals
from scrapy.exceptions import DropItem, NotConfigured

from ..engine.verdicts import DUPLICATE, REVISIT, SHORT, UNIQUE, Verdict
from ..fingerprints.article import site_of
from ..fingerprints.prepare import ERROR, NO_TEXT, NOT_ARTICLE, TIMEOUT, Prepared, Preparer
from ..stores import redact
from . import gcfreeze
from .compat import closing_result
from .failures import BAD_SETTING, CrawlStopper, Outages, open_failure, stop_at_open
from .items import ItemFields
from .purges import Purges
from .reservations import Reservations
from .runfiles import crawl_files
from .runlog import RunLog
from .settings import NearDupConfig, typos
from .workers import WorkerPool, can_pickle_extractor
from .workerstart import start_pool

if TYPE_CHECKING:
    from scrapy import Spider
    from scrapy.crawler import Crawler

    from .review import CrawlReview
    from .storeaccess import SharedStore, StoreAccess

# The engine, the stores' modules, numpy and the tables are imported by open_spider, not with
# this module: Scrapy imports it just before from_crawler, which starts the worker processes,
# so a worker's start (its own imports and tables) runs beside the crawler's imports of them.

logger = logging.getLogger(__name__)

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


# -- the pipeline -----------------------------------------------------------------------


class NearDupPipeline:
    """Drops or tags items whose text is a near-duplicate of an item seen before."""

    # Set by open_spider, once the store is open (``opened``).
    access: StoreAccess
    fields: ItemFields
    outages: Outages
    purges: Purges
    reservations: Reservations

    def __init__(self, crawler: Crawler, config: NearDupConfig):
        self.crawler = crawler
        self.config = config
        self.stats = crawler.stats
        self.log = RunLog(crawler, logger, config.debug)
        self.opened = False  # open_spider opened the store and set the parts below
        self.preparer: Preparer | None = None  # without worker processes
        self.pool: WorkerPool | None = None  # with worker processes
        self.review: CrawlReview | None = None  # NEARDUP_REPORT
        self._shared: SharedStore | None = None
        self._store_uri = ""

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> NearDupPipeline | CrawlStopper:
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
        if getattr(crawler, "crawling", False):  # the crawl is starting, not a look at the settings
            try:
                pipeline._start_workers()
            except Exception:  # open_spider tries again, and says what is wrong
                pass
        return pipeline

    # -- opening and closing ------------------------------------------------------------

    def _start_workers(self) -> None:
        """Start the worker processes, once (or take those the add-on started: .workerstart).
        Called as the crawl starts (from_crawler), so that their start (imports, tables, a
        warm-up page) runs while Scrapy builds its engine, opens the store and fetches the
        first pages: the first item waits for a ready worker."""
        if self.pool is not None:
            return
        self.pool = start_pool(self.crawler, self.config)
        if self.pool is not None:
            self.crawler.signals.connect(self._stop_workers, signal=signals.engine_stopped)

    def _stop_workers(self) -> None:
        """The crawl is over, or never opened the spider: the workers leave."""
        if self.pool is not None:
            self.pool.close()
            self.pool = None

    def open_spider(self, spider: Spider | None = None) -> None:
        config = self.config
        if config.workers and not can_pickle_extractor(config.extractor):
            self.log.log(
                logging.WARNING,
                "scrapy-neardup: NEARDUP_WORKERS=%d needs an extractor that worker processes can "
                "import (a dotted path, or a function of an importable module; %r is defined in "
                "the crawl script); extracting in the reactor thread instead",
                config.workers,
                config.extractor,
            )
            self.log.inc("workers_disabled")
            self.config = config = dataclasses.replace(config, workers=0)
        uri = config.store_uri()
        self._store_uri = redact(uri)
        try:  # before the store opens: a page or store path that is another file opens nothing
            report = crawl_files(config, self.crawler.settings, self.crawler.spider, uri)
            if report:
                from .review import CrawlReview

                self.review = CrawlReview(report, self.crawler.spider, self.log)
        except ValueError as exc:
            return self._fail(str(exc), BAD_SETTING)
        self._start_workers()  # before the store opens, where from_crawler did not start them
        from ..engine.detector import Detector
        from ..fingerprints.text import check_tokenizer, get_tokenizer
        from .storeaccess import NoFingerprinter, StoreAccess, acquire_store, release_store

        recipe = config.recipe().resolved()
        try:
            self._shared = acquire_store(uri, config.namespace, recipe, config)
        except Exception as exc:
            reason, message = open_failure(exc)
            return self._fail(f"cannot open its store: {message}", reason)
        try:
            if config.workers:  # pages are fingerprinted in the workers only: not loaded here
                check_tokenizer(recipe.tokenizer)
            else:
                get_tokenizer(recipe.tokenizer)
                self.preparer = Preparer(recipe, config.extractor)
        except ValueError as exc:
            release_store(self._shared)
            self._shared = None
            return self._fail(f"NEARDUP_TOKENIZER: {exc}", BAD_SETTING)
        detector = Detector(
            self._shared.store,
            thresholds=config.thresholds(),
            ttl=config.ttl or None,
            methods=config.methods,
            fingerprinter=self.preparer.fingerprinter if self.preparer else NoFingerprinter(recipe),
            prefer=config.policy(),
        )
        self.access = access = StoreAccess(self._shared, detector)
        self.fields = ItemFields(config, self.log, by_source=detector.prefer is not None)
        self.purges = Purges(access, self.log)
        self.purges.start()
        self.outages = Outages(self.crawler, access.calls, self.log)
        self.reservations = Reservations(
            access.commit, access.release, config.key_field, access.waiting, self.outages.store_failed
        )
        if self.review is not None:
            self.review.attach(access)
        self.opened = True
        if config.freeze_gc:
            gcfreeze.freeze()
        self.log.log(
            logging.INFO,
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
            "store calls on a thread of their own" if access.calls.threaded else "store calls inline",
        )

    def _fail(self, message: str, reason: str) -> None:
        """One ERROR line, then the crawl stops before a page is fetched (see :mod:`.stop`)."""
        self.log.log(logging.ERROR, "scrapy-neardup: %s; the crawl stops", message)
        if self.review is not None:
            self.review.abandon()
            self.review = None
        stop_at_open(self.crawler, reason)

    def close_spider(self, spider: Spider | None = None) -> Any:
        if self.opened:
            if self.config.freeze_gc:
                gcfreeze.unfreeze()
            self.purges.stop()
            self.outages.close(self.reservations)
        self._stop_workers()
        left = self.reservations.release_all() if self.opened else []
        if left:
            self.log.inc("released", len(left))
            self.log.log(
                logging.WARNING,
                "scrapy-neardup released %d reservations whose items were neither scraped nor dropped "
                "(did a later pipeline return a new item without the %r field?)",
                len(left),
                self.config.key_field,
            )
        if self.opened and self.access.round_trips is not None:
            self.log.inc("check_round_trips", self.access.round_trips)
        closing = None
        if self._shared is not None:
            from .storeaccess import release_store

            closing = release_store(self._shared)
            self._shared = None
        if self.opened:
            self.fields.watch.finish()
            self._log_summary()
        if self.review is not None:
            self.review.write()
            self.review = None
        if closing is None:
            return None
        closing.addErrback(
            lambda failure: self.log.once("close", logging.WARNING, "Closing the store: %s", failure.value)
        )
        return closing_result(closing)  # Scrapy waits for the store to close

    def _log_summary(self) -> None:
        """One line that adds up: each item counted once, by what the pipeline found, then what
        became of them (docs/stats.md)."""
        get = self.stats.get_value
        count = {name: get(f"neardup/{name}", 0) for name in _OUTCOMES.values()}
        for name in ("unique", "updated", "replaced", "items", "dropped", "tag_field_missing"):
            count[name] = get(f"neardup/{name}", 0)
        count["new"] = count["unique"] - count["updated"] - count["replaced"]
        shown = [f"{count[name]} {label}" for label, name in _OUTCOMES.items() if count[name] or name in _ALWAYS]
        unfinished = count["items"] - sum(count[name] for name in _OUTCOMES.values())
        if unfinished:
            shown.append(f"{unfinished} unfinished")
        revisits_dropped = count["revisit"] if self.config.revisit == "drop" else 0
        fate = []
        if self.config.action == "drop":
            fate.append(f"{count['duplicate']} duplicates dropped")
        elif count["tag_field_missing"]:
            fate.append(
                f"duplicates tagged, but {count['tag_field_missing']} items passed untagged (their class lacks the "
                "tag fields)"
            )
        else:
            fate.append(f"{count['duplicate']} duplicates tagged")
        if revisits_dropped:
            fate.append(f"{revisits_dropped} revisits dropped")
        collisions = get("neardup/key_collision", 0)
        if collisions:
            fate.append(f"{collisions} of the new stories stored beside another story under their key (key collisions)")
        extracted = get("neardup/extracted", 0)
        seconds = get("neardup/extract_seconds", 0.0)
        per_page = f"; extraction {1000 * seconds / extracted:.1f} ms/page" if extracted else ""
        self.log.log(
            logging.WARNING if count["unchecked"] or collisions else logging.INFO,
            "scrapy-neardup: %d items = %s; %s, %d passed on%s",
            count["items"],
            " + ".join(shown),
            ", ".join(fate),
            count["items"] - count["dropped"],
            per_page,
        )

    # -- items --------------------------------------------------------------------------

    async def process_item(self, item: Any, spider: Spider | None = None) -> Any:
        if not self.opened:
            return item  # the store did not open; the crawl is closing
        self.log.inc("items")
        adapter = ItemAdapter(item)
        verdict, text = await self._judge(item, adapter)
        if verdict is None or verdict.status == SHORT:
            if self.review is not None:
                self.review.not_judged()
            return item
        if self.config.related:
            await self._add_related(verdict, text)
        if self.review is not None:
            await self.review.note(verdict.key, verdict, text, self.fields.title(adapter))
        return self._act(item, adapter, verdict)

    async def _judge(self, item: Any, adapter: ItemAdapter) -> tuple[Verdict | None, str | None]:
        """The item's verdict and the text it was judged on; no verdict for an item that
        could not be judged (counted, and passed on)."""
        source, is_html = self.fields.source(adapter)
        if source is None:
            self.log.inc("no_text")
            return None, None
        cap = self.config.max_html_size
        if cap and len(source) > cap:
            self._unchecked(
                adapter,
                "too_large",
                "Item %s has %d %s of HTML, over NEARDUP_MAX_HTML_SIZE = %d; passed unchecked",
                len(source),
                "bytes" if isinstance(source, bytes) else "characters",
                cap,
            )
            return None, None
        key = self.fields.key(adapter)
        site = site_of(key, self.fields.source_name(item))
        title = self.fields.title(adapter)  # NEARDUP_TITLE_FIELD, hashed with the fingerprint
        if self.preparer is not None:
            prepared = self.preparer(source, is_html, key, site, title)
            verdict = await self._check_prepared(adapter, key, prepared, source)
        else:
            assert self.pool is not None  # pages are prepared here or by the worker processes

            async def check(prepared: Prepared) -> tuple[Prepared, Verdict | None]:
                return prepared, await self._check_prepared(adapter, key, prepared, source)

            prepared, verdict = await self.pool.in_order(source, is_html, check, key, site, title)
        for _ in range(3):  # a copy of a pending first copy waits for its outcome
            if verdict is None:
                break
            committed = await self.reservations.first_copy_outcome(verdict)
            if committed is None or (committed and not verdict.recheck):
                break
            verdict = await self._check(item, key, prepared, source)  # released, or it may win now
        return verdict, _text_of(prepared, source)

    async def _check_prepared(self, adapter: ItemAdapter, key: str, prepared: Prepared, body: Any) -> Verdict | None:
        """Count what preparing gave, then check the fingerprint against the store."""
        if prepared.extract_seconds is not None:
            self.log.inc("extracted")
            self.log.inc("extract_seconds", prepared.extract_seconds)
        if prepared.text is not None and self.config.text_out_field:
            self.fields.hand_on(adapter, prepared.text)
        if prepared.status == NO_TEXT:
            self.log.inc("no_text")
            return None
        if prepared.status == NOT_ARTICLE:
            self.log.inc("not_article")
            self.log.inc(f"not_article/{prepared.error}")
            return None
        if prepared.status == TIMEOUT:
            self._unchecked(
                adapter,
                "extract_timeout",
                "Extracting item %s took over NEARDUP_EXTRACT_TIMEOUT = %g s: its worker was replaced "
                "and the item passed unchecked",
                self.config.extract_timeout,
            )
            return None
        if prepared.status == ERROR:
            self._unchecked(adapter, "error", "Could not get text of item %s, passed unchecked: %s", prepared.error)
            return None
        return await self._check(adapter.item, key, prepared, body)

    def _unchecked(self, adapter: ItemAdapter, stat: str, message: str, *args: Any) -> None:
        """An item that could not be judged passes on: counted under ``stat`` and said once
        (``message`` names the item first)."""
        self.log.inc(stat)
        self.log.once(stat, logging.WARNING, message, self.fields.describe(adapter), *args)

    async def _check(self, item: Any, key: str, prepared: Prepared, body: Any) -> Verdict | None:
        """Check-and-add; a new story is reserved at once, so its copies are caught (with its
        text, under NEARDUP_KEEP_TEXT).

        A failed check goes to :meth:`Outages.may_retry`: while the store is down the item
        waits and tries again; past ``NEARDUP_STORE_DOWN_TIMEOUT`` it passes unchecked,
        counted, and the crawl stops. It is never dropped unseen.
        """
        source = self.fields.source_name(item)
        text = _text_of(prepared, body) if self.config.keep_text else None
        fingerprint = prepared.fingerprint  # with its headline's hash (NEARDUP_TITLE_FIELD)
        assert fingerprint is not None  # prepared.status is OK
        waited = False
        while True:
            try:
                verdict = await self.access.check(key, fingerprint, source, text)
                break
            except Exception as exc:
                if await self.outages.may_retry(key, exc):
                    waited = True
                    continue
                return None
        if waited:
            self.log.inc("store_waited")
        if self.outages.unsettled:
            self.outages.retry_unsettled(self.reservations)
        if verdict.status == SHORT:
            self.log.inc("short")
        elif verdict.stored:
            self.reservations.reserve(item, verdict)
        return verdict

    async def _add_related(self, verdict: Verdict, text: str | None) -> None:
        """List the other stored stories sharing a long passage with the item (read-only)."""
        if not isinstance(text, str):
            return
        from ..fingerprints.passages import passages_of

        try:
            await self.access.add_related(verdict, passages_of(text))
        except Exception as exc:  # the verdict stands; only the list is missing
            self.log.inc("related_error")
            self.log.once("related_error", logging.WARNING, "Related stories of %s not listed: %s", verdict.key, exc)

    def _act(self, item: Any, adapter: ItemAdapter, verdict: Verdict) -> Any:
        if verdict.status == REVISIT:
            self.log.inc("revisit")
            if self.config.revisit == "drop":
                self.log.inc("dropped")
                raise RevisitedItem(
                    f"{verdict.key} was seen before with the same text (similar_id {verdict.similar_id})",
                    self.config.drop_log_level,
                    verdict,
                )
        elif verdict.status == UNIQUE:
            self.log.inc("unique")
            if verdict.updated:
                self.log.inc("updated")
                self.log.log(
                    logging.INFO, "scrapy-neardup: %s was updated since it was stored: %s", verdict.key, verdict.change
                )
            if verdict.replaces is not None:
                self.log.inc("replaced")
            if verdict.key_collision:
                self.log.inc("key_collision")
                self.log.once(
                    "key_collision",
                    logging.WARNING,
                    "scrapy-neardup: key collision: %s already holds another story; this item is stored beside it as "
                    "a story of its own and both are kept (NEARDUP_KEY_FIELD should tell sources apart) [%s]",
                    verdict.key,
                    verdict.change,
                )
        else:
            self.log.inc("duplicate")
            for method in (verdict.method or "").split("+"):
                if method:
                    self.log.inc(f"match/{method}")
        if self.config.debug:
            self.log.log(logging.DEBUG, "scrapy-neardup verdict: %s", verdict.as_dict())
        if self.config.action == "drop":
            if verdict.status == DUPLICATE:
                self.log.inc("dropped")
                raise NearDuplicateItem(self._reason(verdict), self.config.drop_log_level, verdict)
            self.fields.write_extras(item, adapter, verdict)
            return item
        self.fields.write_extras(item, adapter, verdict)
        if self.fields.tag(item, adapter, verdict):
            self.log.inc("tagged")
        return item

    def _reason(self, verdict: Verdict) -> str:
        return (
            f"{verdict.key} is a near-duplicate of {verdict.duplicate_of} "
            f"(similar_id {verdict.similar_id}, {verdict.method}, containment {verdict.containment:.2f}, "
            f"jaccard {verdict.jaccard:.2f}, SimHash distance {verdict.distance})"
        )

    # -- signals: the item's fate settles its reservation ---------------------------------

    def item_scraped(self, item: Any, spider: Spider | None = None, **kwargs: Any) -> None:
        if self.opened:
            self.reservations.commit(item)

    def item_dropped(self, item: Any, exception: BaseException | None = None, **kwargs: Any) -> None:
        if isinstance(exception, NearDuplicateItem):
            return  # our own drop: a duplicate holds no reservation
        self.item_error(item)

    def item_error(self, item: Any, **kwargs: Any) -> None:
        if self.opened and self.reservations.release(item) is not None:
            self.log.inc("released")


# What the pipeline found, each item counted under one of these (label: stat, "new" being the
# unique that neither replaced a copy nor updated a page); the close summary adds them up.
_OUTCOMES = {
    "new stories": "new",
    "copies replacing their story's stored copy": "replaced",
    "updated pages": "updated",
    "revisits": "revisit",
    "duplicates": "duplicate",
    "short": "short",
    "without text": "no_text",
    "not articles": "not_article",
    "too large": "too_large",
    "extraction timeouts": "extract_timeout",
    "extraction errors": "error",
    "unchecked (store down or failing)": "unchecked",
}
_ALWAYS = {"new", "duplicate"}  # shown even when 0


def _text_of(prepared: Prepared, body: Any) -> str | None:
    """The text an item was judged on: the body extracted from its HTML (None where a worker
    did not send it back), or its text field; never the HTML itself."""
    if prepared.text is not None or prepared.extract_seconds is not None:
        return prepared.text
    return body if isinstance(body, str) else None
