"""One item's text, ready to check: HTML extracted to its article body, then fingerprinted.

The same :class:`Preparer` runs in the crawler (``NEARDUP_WORKERS = 0``), in each worker
process of the crawl, and in the ``neardup`` command, so every path gives the same
fingerprints and the same reasons for a text that cannot be judged. It never raises for bad
input: a binary page, a broken extractor or a text the engine cannot handle becomes an
``ERROR`` with the reason, so one bad item cannot stop a crawl or a run.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..dotted import load_dotted
from .article import SiteText, not_article
from .extract import ExtractionError, decode_html, looks_binary

if TYPE_CHECKING:  # numpy and the tables: loaded by a Preparer, not by the statuses' users
    from .fingerprint import Fingerprint, Recipe

OK = "ok"
NO_TEXT = "no_text"
NOT_ARTICLE = "not_article"  # the extracted text is a menu or the site's own text (article.py)
ERROR = "error"
TIMEOUT = "timeout"  # extraction overran its time bound; the worker was replaced


# Written for warming up: long enough for readability to take it for an article.
WARM_UP_PAGE = (
    "<html><head><title>河边的早晨</title></head><body><article><h1>河边的早晨</h1>"
    + "".join(
        f"<p>{line}</p>"
        for line in (
            "清晨六点，河边的步道上已经有不少晨练的居民，有人慢跑，有人打太极拳。",
            "一位老人说，他在这里散步已经二十年了，看着两岸的树一年比一年高。",
            "去年秋天，区里修整了堤岸，新添了路灯和长椅，晚上来散步的人也多了。",
            "附近小学的学生每周来河边捡一次垃圾，老师说这是孩子们最喜欢的一堂课。",
        )
    )
    + "</article></body></html>"
)


@dataclass
class Prepared:
    """The outcome of preparing one item's text; picklable, so it can come back from a worker."""

    status: str  # OK, NO_TEXT, NOT_ARTICLE, ERROR or TIMEOUT
    fingerprint: Fingerprint | None = None
    error: str | None = None  # "ExceptionName: message" for ERROR; why, for NOT_ARTICLE
    extract_seconds: float | None = None  # None when the text field was used
    fingerprint_seconds: float = 0.0
    text: str | None = None  # the body extracted from HTML, for NEARDUP_TEXT_OUT_FIELD


class Preparer:
    """Text or HTML in, :class:`Prepared` out; never raises for bad input.

    Text extracted from HTML goes through the article rules (:mod:`.article`): the lines
    its site's other pages gave are taken out, and a menu is not judged.
    """

    def __init__(self, recipe: Recipe, extractor: Callable[[str], str] | str):
        from .fingerprint import Fingerprinter

        self.extractor: Callable[[str], str] = load_dotted(extractor) if isinstance(extractor, str) else extractor
        self.fingerprinter = Fingerprinter(recipe)
        self.site_text = SiteText()

    def warm_up(self) -> None:
        """Prepare a small page of no site once: the extractor and the tokenizer load modules
        and dictionaries on their first call, which a worker does before the crawl's first page
        reaches it. No site, so no line is remembered as a site's own text."""
        self(WARM_UP_PAGE, True)

    def __call__(
        self, source: str | bytes, is_html: bool, key: str = "", site: str = "", title: str | None = None
    ) -> Prepared:
        """``key`` names the page and ``site`` its site (:func:`.article.site_of`), for
        the site's own text; ``title`` is its headline, hashed into the fingerprint here (in
        the worker, off the crawler's thread)."""
        extract_seconds = None
        if is_html:
            started = time.perf_counter()
            try:
                if isinstance(source, bytes):
                    if looks_binary(source):
                        raise ExtractionError(f"binary content, not HTML ({len(source)} bytes)")
                    source = decode_html(source)
                text = self.extractor(source)
                if text is not None and not isinstance(text, str):
                    raise TypeError(f"extractor returned {type(text).__name__}, not str")
            except Exception as exc:  # a bad page or a broken extractor must not stop the crawl
                return Prepared(ERROR, error=f"{type(exc).__name__}: {exc}")
            extract_seconds = time.perf_counter() - started
            if text and text.strip():
                text = self.site_text.strip(site, key, text)
                reason = not_article(text) if text.strip() else "site_text"
                if reason:
                    return Prepared(NOT_ARTICLE, error=reason, extract_seconds=extract_seconds)
        else:
            text = source  # type: ignore[assignment]
        if not text or not text.strip():
            return Prepared(NO_TEXT, extract_seconds=extract_seconds)
        started = time.perf_counter()
        try:
            fingerprint = self.fingerprinter.fingerprint(text, title)
        except Exception as exc:
            return Prepared(ERROR, error=f"{type(exc).__name__}: {exc}", extract_seconds=extract_seconds)
        extracted = text if is_html else None
        return Prepared(OK, fingerprint, None, extract_seconds, time.perf_counter() - started, extracted)
