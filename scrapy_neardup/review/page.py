"""The review page: what dedup decided, each duplicate beside its first copy, shared text marked.

One self-contained HTML file (inline CSS; no script, font or image fetched, so it opens offline
and shows the same everywhere). Every text and key is HTML-escaped: both come from crawled pages.
Markup that tests and users' tooling rely on::

    <section class="pair" data-key="K" data-duplicate-of="F">
      ... <div class="text" data-key="F">first copy</div> <div class="text" data-key="K">copy</div>
    </section>

with the shared passages inside ``<mark>`` (:mod:`.marking`).
"""

from __future__ import annotations

import errno
import html
import os
import tempfile
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass

from ..stores.record import pack_text, unpack_text
from .files import GENERATOR, PREAMBLE, is_own_page, listed_pages, manifest, may_replace
from .marking import MAX_ALIGN_CHARS, Alignment, align, marked_html

# Shared passages on a light red: the dedup literature's "shared text in red", readable in print.
MARK_COLOUR = "#ffb8b8"

CSS = f"""
body {{ font-family: "Noto Sans CJK SC", "Noto Sans SC", "Source Han Sans SC", "PingFang SC",
       "Microsoft YaHei", sans-serif; margin: 1.5em; color: #1a1a1a; background: #fff; }}
h1 {{ font-size: 1.4em; margin: 0 0 .5em; }}
h2 {{ font-size: 1.05em; margin: 0 0 .4em; word-break: break-all; }}
h3 {{ font-size: .9em; margin: 0 0 .4em; color: #444; word-break: break-all; }}
table.counts {{ border-collapse: collapse; margin: .5em 0 1em; }}
table.counts td, table.counts th {{ border: 1px solid #ccc; padding: .2em .6em; text-align: right; }}
table.counts th {{ text-align: left; background: #f3f3f3; }}
.histogram {{ display: flex; align-items: flex-end; gap: 3px; height: 120px; margin: .5em 0 .2em;
              border-bottom: 1px solid #888; max-width: 640px; }}
.histogram .bar {{ flex: 1; background: #4a78b5; min-height: 1px; position: relative; }}
.histogram .bar span {{ position: absolute; top: -1.3em; width: 100%; text-align: center; font-size: .7em; }}
.axis {{ display: flex; gap: 3px; max-width: 640px; font-size: .7em; color: #555; }}
.axis span {{ flex: 1; text-align: center; }}
nav {{ margin: 1em 0; }}
nav a {{ margin-right: 1em; }}
section.pair {{ border-top: 2px solid #999; padding: 1em 0; }}
.signals {{ font-size: .85em; color: #333; margin: 0 0 .6em; }}
.texts {{ display: grid; grid-template-columns: 1fr 1fr; gap: 1.2em; }}
.text {{ white-space: pre-wrap; line-height: 1.6; overflow-wrap: anywhere; }}
.text.missing {{ color: #777; font-style: italic; }}
.cut {{ color: #777; font-style: italic; }}
mark {{ background: {MARK_COLOUR}; color: inherit; }}
"""


def page(title: str, body: str, nav: str = "", head: str = "") -> str:
    """A whole HTML document around ``body`` (already escaped markup); ``head`` adds lines to
    its head. It begins as every page neardup writes does (:func:`.files.is_own_page`)."""
    return (
        f"{PREAMBLE}{GENERATOR}{head}"
        f"<title>{html.escape(title)}</title>\n<style>{CSS}</style>\n</head>\n<body>\n"
        f"<h1>{html.escape(title)}</h1>\n{nav}{body}{nav}</body>\n</html>\n"
    )


@dataclass
class Pair:
    """One duplicate to show: its key and text, its first copy's key and text (None: not
    kept), and the verdict's figures."""

    key: str
    text: str
    first_key: str
    first_text: str | None
    method: str | None = None
    containment: float | None = None
    jaccard: float | None = None
    distance: int | None = None


def pair_section(pair: Pair, alignment: Alignment | None = None) -> str:
    """The section of one duplicate: the first copy on the left, the copy on the right, their
    shared passages marked (aligned here unless ``alignment`` is given)."""
    key, first = html.escape(pair.key, quote=True), html.escape(pair.first_key, quote=True)
    figures = [
        f"{name} {value}"
        for name, value in (
            ("method", pair.method),
            ("containment", pair.containment),
            ("jaccard", pair.jaccard),
            ("SimHash distance", pair.distance),
        )
        if value is not None
    ]
    text, cut = _shown(pair.text)
    if pair.first_text is None:
        figures.append("first copy's text not kept")
        left = (
            f'<div class="text missing" data-key="{first}"><h3>first copy: {first}</h3>'
            "The first copy's text was not kept (NEARDUP_KEEP_TEXT, or give the first copy in the "
            "same input): the copy is shown alone.</div>"
        )
        right = f'<div class="text" data-key="{key}"><h3>copy: {key}</h3>{html.escape(text)}{cut}</div>'
    else:
        first_text, first_cut = _shown(pair.first_text)
        alignment = alignment or align(first_text, text)
        share = alignment.shared / max(1, alignment.b_chars)
        figures.append(f"shared {alignment.shared} of {alignment.b_chars} characters ({share:.0%})")
        if not alignment.complete:
            figures.append("long texts: only their beginnings are marked")
        left = (
            f'<div class="text" data-key="{first}"><h3>first copy: {first}</h3>'
            f"{marked_html(first_text, alignment.a_spans)}{first_cut}</div>"
        )
        right = (
            f'<div class="text" data-key="{key}"><h3>copy: {key}</h3>{marked_html(text, alignment.b_spans)}{cut}</div>'
        )
    return (
        f'<section class="pair" data-key="{key}" data-duplicate-of="{first}">\n'
        f"<h2>{key} <small>duplicate of {first}</small></h2>\n"
        f'<p class="signals">{html.escape(" · ".join(figures))}</p>\n'
        f'<div class="texts">\n{left}\n{right}\n</div>\n</section>\n'
    )


def _shown(text: str) -> tuple[str, str]:
    """The part of a text a section shows (what the alignment reads), and a note on the rest."""
    if len(text) <= MAX_ALIGN_CHARS:
        return text, ""
    return text[:MAX_ALIGN_CHARS], f'<p class="cut">({len(text) - MAX_ALIGN_CHARS:,} more characters not shown)</p>'


# A page of sections stops growing past this many bytes: a browser opens it at once.
PAGE_BYTES = 2_000_000
# Texts of this run's first copies held for the report, compressed, at most (the rest are read
# from the store when it keeps texts, or shown as not kept).
REMEMBERED_BYTES = 256 * 1024 * 1024
HISTOGRAM_FROM = 0.5  # similarity bins from here to 1 (lower values go in the first)
HISTOGRAM_BINS = 10


class FirstCopies:
    """The texts of first copies, by document id: those of this run (held compressed, up to
    ``limit`` bytes), else those the store kept (``read``: ids -> texts)."""

    def __init__(self, read: Callable[[list[int]], dict[int, str]] | None = None, limit: int = REMEMBERED_BYTES):
        self.read = read
        self.limit = limit
        self.held = 0
        self._texts: dict[int, bytes] = {}

    def remember(self, doc_id: int | None, text: str) -> None:
        if doc_id is None or doc_id in self._texts or self.held >= self.limit:
            return
        packed = pack_text(text)
        self._texts[doc_id] = packed
        self.held += len(packed)

    def text(self, doc_id: int | None) -> str | None:
        if doc_id is None:
            return None
        if doc_id in self._texts:
            return unpack_text(self._texts[doc_id])
        return self.read([doc_id]).get(doc_id) if self.read is not None else None


class Report:
    """A run's review pages: counts as verdicts come, each duplicate's section written to a
    spool file at once (a run's texts are not held), and the pages written by :meth:`write`:
    ``PATH``, then ``PATH-2``, ... (same extension), a few MB each, linked in order. The first
    page lists the others, so that a later run replaces or removes only pages it wrote
    (:mod:`.files`); a name held by another file is left alone (:attr:`left_alone`)."""

    def __init__(self, path: str, title: str = "neardup review", page_bytes: int = PAGE_BYTES):
        self.path = path
        self.title = title
        self.page_bytes = page_bytes
        self.verdicts: Counter[str] = Counter()
        self.methods: Counter[str] = Counter()
        self.histogram = [0] * HISTOGRAM_BINS
        self.missing = 0  # duplicates shown without their first copy
        self.left_alone: list[str] = []  # names of further pages held by files neardup did not write
        self._spool = tempfile.TemporaryFile(prefix="neardup-report-")  # noqa: SIM115 - closed by close()
        self._sizes: list[int] = []

    def count(self, status: str) -> None:
        """One verdict that gets no section (unique, not judged)."""
        self.verdicts[status] += 1

    def add(self, pair: Pair) -> None:
        """A duplicate: counted, and its section spooled."""
        self.verdicts["duplicate"] += 1
        self.methods[pair.method or "?"] += 1
        if pair.containment is not None:
            step = (1 - HISTOGRAM_FROM) / HISTOGRAM_BINS
            self.histogram[min(HISTOGRAM_BINS - 1, max(0, int((pair.containment - HISTOGRAM_FROM) / step)))] += 1
        self.missing += pair.first_text is None
        section = pair_section(pair).encode("utf-8", "replace")  # a lone surrogate as "?"
        self._spool.write(section)
        self._sizes.append(len(section))

    def write(self) -> list[str]:
        """Write the pages (at least one, with the summary) and return their paths, the first
        one first; raises OSError when a file that neardup did not write took its place."""
        if not may_replace(self.path):
            raise FileExistsError(errno.EEXIST, "it exists and is not a page neardup wrote", self.path)
        groups = [[0, 0]]  # each page's sections: where they start in the spool, their bytes
        for length in self._sizes:
            if groups[-1][1] and groups[-1][1] + length > self.page_bytes:
                groups.append([groups[-1][0] + groups[-1][1], 0])
            groups[-1][1] += length
        earlier = listed_pages(self.path)
        paths = [self.path, *self._further_paths(len(groups) - 1, earlier)]
        for number in [*range(2, len(groups) + 1), 1]:  # the first page, which lists the others, last
            start, length = groups[number - 1]
            self._spool.seek(start)
            sections = self._spool.read(length).decode("utf-8")
            body = self._summary() if number == 1 else ""
            head = manifest(paths[1:]) if number == 1 else ""
            title = self._page_title(number, len(groups))
            write_file(paths[number - 1], page(title, body + sections, self._nav(paths, number), head))
        written = {os.path.abspath(path) for path in paths}
        for stale in earlier:  # an earlier run's pages past this run's last one
            if stale not in written and is_own_page(stale):
                os.unlink(stale)
        return paths

    def _further_paths(self, count: int, earlier: list[str]) -> list[str]:
        """Names for the pages after the first: free ones, or pages the earlier report listed."""
        found: list[str] = []
        number = 2
        while len(found) < count:
            path = self._page_path(number)
            if not os.path.lexists(path) or (os.path.abspath(path) in earlier and is_own_page(path)):
                found.append(path)
            elif path not in self.left_alone:
                self.left_alone.append(path)
            number += 1
        return found

    def close(self) -> None:
        self._spool.close()

    def _page_path(self, number: int) -> str:
        if number == 1:
            return self.path
        stem, extension = os.path.splitext(self.path)
        return f"{stem}-{number}{extension or '.html'}"

    def _page_title(self, number: int, pages: int) -> str:
        return self.title if pages == 1 else f"{self.title} (page {number} of {pages})"

    @staticmethod
    def _nav(paths: list[str], number: int) -> str:
        if len(paths) == 1:
            return ""
        links = [f"page {number} of {len(paths)}"]
        if number > 1:
            links.append(
                f'<a rel="prev" href="{html.escape(os.path.basename(paths[number - 2]), quote=True)}">previous</a>'
            )
        if number < len(paths):
            links.append(f'<a rel="next" href="{html.escape(os.path.basename(paths[number]), quote=True)}">next</a>')
        return f'<nav class="pages">{" ".join(links)}</nav>\n'

    def _summary(self) -> str:
        rows = "".join(
            f"<tr><th>{html.escape(name)}</th><td>{count}</td></tr>" for name, count in sorted(self.verdicts.items())
        )
        methods = "".join(
            f"<tr><th>{html.escape(name)}</th><td>{count}</td></tr>" for name, count in self.methods.most_common()
        )
        tallest = max(self.histogram) or 1
        bars = "".join(
            f'<div class="bar" style="height:{100 * n / tallest:.1f}%" title="{n}"><span>{n}</span></div>'
            for n in self.histogram
        )
        step = (1 - HISTOGRAM_FROM) / HISTOGRAM_BINS
        labels = "".join(f"<span>{HISTOGRAM_FROM + i * step:.2f}</span>" for i in range(HISTOGRAM_BINS))
        missing = (
            f"<p>{self.missing} duplicates are shown without their first copy, whose text was not kept.</p>"
            if self.missing
            else ""
        )
        return (
            '<div class="summary">\n<h2>Verdicts</h2>\n<table class="counts">' + rows + "</table>\n"
            '<h2>Duplicates by method</h2>\n<table class="counts">'
            + (methods or "<tr><td>none</td></tr>")
            + "</table>\n"
            "<h2>Similarity of duplicates to their first copy (containment)</h2>\n"
            f'<div class="histogram">{bars}</div>\n<div class="axis">{labels}</div>\n{missing}</div>\n'
        )


def write_file(path: str, document: str) -> None:
    """Written under a temporary name and renamed: a reader never sees half a page."""
    folder = os.path.dirname(os.path.abspath(path))
    handle, temporary = tempfile.mkstemp(dir=folder, prefix=".neardup-report-", suffix=".partial")
    try:
        with os.fdopen(handle, "wb") as stream:
            stream.write(document.encode("utf-8", "replace"))
        os.chmod(temporary, 0o644)
        os.replace(temporary, path)
    except BaseException:
        if os.path.exists(temporary):
            os.unlink(temporary)
        raise
