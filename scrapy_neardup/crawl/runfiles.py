"""The files a crawl names besides Scrapy's: the review page (``NEARDUP_REPORT``) and a LevelDB
store's folder, checked at open against the feeds (``FEEDS``), Scrapy's job folder (``JOBDIR``)
and each other, before anything is opened (:func:`~scrapy_neardup.review.files.check_distinct` is the rule, shared with the
command line).

A feed's path may hold placeholders (``%(name)s``, ``%(time)s``): those a spider's attributes
give are filled in; the others (a time, a batch number) may take any value, so a page whose path
the feed's pattern matches is refused as well. Two spiders of one process writing one page would
overwrite each other's: the page's path is held by the first spider that opens it until its
page is written.
"""

from __future__ import annotations

import os
import re
from typing import TYPE_CHECKING, Any
from urllib.parse import unquote, urlsplit

from ..review.files import check_distinct, check_page, same_file, within
from ..stores import store_folder

if TYPE_CHECKING:
    from scrapy import Spider
    from scrapy.settings import BaseSettings

    from .settings import NearDupConfig

__all__ = ["claim_page", "crawl_files", "release_page"]

PAGE = "the review page"
STORE_FOLDER = "the store's folder"
# What Scrapy writes in JOBDIR: the seen requests and the spider's state (files), the request queue (a folder).
_JOB_FILES = ("requests.seen", "spider.state")
_JOB_QUEUE = "requests.queue"
# A feed URI's placeholder, as Scrapy fills it with %-formatting.
_PLACEHOLDER = re.compile(r"%\((\w+)\)[-#0 +]*\d*(?:\.\d+)?[a-zA-Z]")
# Placeholders Scrapy fills at export time, whatever the spider's attributes are.
_AT_EXPORT = frozenset({"time", "batch_time", "batch_id"})

_HELD: dict[str, str] = {}  # a review page's real path -> the spider that writes it, in this process


def page_path(template: str, spider: Spider | None) -> str:
    """NEARDUP_REPORT with ``%(name)s`` replaced by the spider's name."""
    return template.replace("%(name)s", getattr(spider, "name", "") or "")


def local_feeds(settings: BaseSettings) -> list[str]:
    """The FEEDS written to files here, as paths (placeholders left in)."""
    found = []
    for uri in settings.getdict("FEEDS"):
        uri = str(uri)  # a pathlib.Path is a key too
        if uri.lower().startswith("file://"):
            found.append(unquote(urlsplit(uri).path))
        elif "://" not in uri and not uri.lower().startswith("stdout:"):
            found.append(uri)
    return found


def _pattern(template: str, spider: Spider | None) -> re.Pattern | None:
    """A feed path with placeholders as a pattern of the paths it may name; None without any."""
    template = os.path.abspath(template)
    if not _PLACEHOLDER.search(template):
        return None
    parts, last = [], 0
    for found in _PLACEHOLDER.finditer(template):
        parts.append(re.escape(template[last : found.start()]))
        name = found.group(1)
        value = getattr(spider, name, None) if name not in _AT_EXPORT else None
        known = isinstance(value, (str, int)) and found.group(0).endswith("s")
        parts.append(re.escape(str(value)) if known else ".+")
        last = found.end()
    parts.append(re.escape(template[last:]))
    return re.compile("".join(parts))


def _job_paths(settings: BaseSettings) -> tuple[list[tuple[str, str]], list[tuple[str, str]]]:
    """The files and folders Scrapy keeps in JOBDIR, each with what names it; none without JOBDIR."""
    jobdir = settings.get("JOBDIR")
    if not jobdir:
        return [], []
    files = [(f"the job's {name} (JOBDIR)", os.path.join(jobdir, name)) for name in _JOB_FILES]
    return files, [(f"the job's {_JOB_QUEUE} (JOBDIR)", os.path.join(jobdir, _JOB_QUEUE))]


def crawl_files(config: NearDupConfig, settings: BaseSettings, spider: Spider | None, store_uri: str) -> str:
    """Check the crawl's files before anything is opened; the review page's path ("" for none).
    ValueError, naming the setting, when one is another or cannot be written."""
    feeds = local_feeds(settings)
    folder = store_folder(store_uri, config.stores)
    job_files, job_folders = _job_paths(settings)
    try:
        for feed in feeds:
            check_distinct([("the feed", feed)], [(STORE_FOLDER, folder)])
        if folder:
            jobdir = settings.get("JOBDIR")
            if jobdir and within(jobdir, folder):
                where = STORE_FOLDER if same_file(jobdir, folder) else f"inside {STORE_FOLDER} ({folder})"
                raise ValueError(f"the job folder {jobdir} (JOBDIR) is {where}: name another folder")
            check_distinct([(STORE_FOLDER, folder), *job_files], job_folders)
    except ValueError as exc:
        raise ValueError(f"NEARDUP_STORE: {exc}") from None
    if not config.report:
        return ""
    path = page_path(config.report, spider)
    try:
        for feed in feeds:
            pattern = _pattern(feed, spider)
            named = pattern is not None and any(
                pattern.fullmatch(form) for form in (os.path.abspath(path), os.path.realpath(path))
            )
            if named or (pattern is None and same_file(path, feed)):
                raise ValueError(f"{PAGE} {path} is a file the feed {feed} (FEEDS) writes: name another file")
        check_distinct([(PAGE, path), *job_files], [(STORE_FOLDER, folder), *job_folders])
        check_page(path, PAGE)
    except ValueError as exc:
        raise ValueError(f"NEARDUP_REPORT: {exc}") from None
    return path


def claim_page(path: str, spider: Any) -> None:
    """Hold ``path`` for ``spider``'s page; ValueError when another spider of this process holds it."""
    real = os.path.realpath(path)
    name = getattr(spider, "name", "") or "?"
    if real in _HELD:
        raise ValueError(
            f"NEARDUP_REPORT: {PAGE} {path} is written by spider {_HELD[real]!r} of this process too: "
            "give each spider its own (custom_settings, or %(name)s in the path)"
        )
    _HELD[real] = name


def release_page(path: str) -> None:
    _HELD.pop(os.path.realpath(path), None)
