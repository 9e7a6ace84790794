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

import dataclasses
import errno
import html
import json
import os
import tempfile
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

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
.urls, .url {{ font-size: .8em; color: #555; word-break: break-all; font-weight: normal; }}
nav.toc ol, section.stories ol {{ padding-left: 2.5em; line-height: 1.5; }}
nav.toc small, section.stories small {{ color: #555; word-break: break-all; }}
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
    kept), the verdict's figures, the two headlines (None: the record has no title) and the
    story's id (``similar_id``)."""

    key: str
    text: str
    first_key: str
    first_text: str | None
    method: str | None = None
    containment: float | None = None
    jaccard: float | None = None
    distance: int | None = None
    title: str | None = None
    first_title: str | None = None
    story: int | None = None


def headline(title: str | None, key: str) -> str:
    """What names a copy on the page: its headline, else its key (escaped)."""
    return html.escape(title.strip() if title and title.strip() else key)


def linked(key: str) -> str:
    """A key as the page shows it: a link when it is a web address (escaped either way)."""
    shown = html.escape(key, quote=True)
    return f'<a href="{shown}">{shown}</a>' if key.startswith(("http://", "https://")) else shown


def pair_section(pair: Pair, alignment: Alignment | None = None, anchor: str = "") -> str:
    """The section of one duplicate: the first copy on the left, the copy on the right, their
    shared passages marked (aligned here unless ``alignment`` is given); each headed by its
    headline and URL. ``anchor``: the id a table of contents links to."""
    key, first = html.escape(pair.key, quote=True), html.escape(pair.first_key, quote=True)
    copy_head = f'{headline(pair.title, pair.key)}<br><span class="url">{linked(pair.key)}</span>'
    first_head = f'{headline(pair.first_title, pair.first_key)}<br><span class="url">{linked(pair.first_key)}</span>'
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
            f'<div class="text missing" data-key="{first}"><h3>first copy: {first_head}</h3>'
            "The first copy's text was not kept (NEARDUP_KEEP_TEXT, or give the first copy in the "
            "same input): the copy is shown alone.</div>"
        )
        right = f'<div class="text" data-key="{key}"><h3>copy: {copy_head}</h3>{html.escape(text)}{cut}</div>'
    else:
        first_text, first_cut = _shown(pair.first_text)
        alignment = alignment or align(first_text, text)
        share = alignment.shared / max(1, alignment.b_chars)
        figures.append(f"shared {alignment.shared} of {alignment.b_chars} characters ({share:.0%})")
        if not alignment.complete:
            figures.append("long texts: only their beginnings are marked")
        left = (
            f'<div class="text" data-key="{first}"><h3>first copy: {first_head}</h3>'
            f"{marked_html(first_text, alignment.a_spans)}{first_cut}</div>"
        )
        right = (
            f'<div class="text" data-key="{key}"><h3>copy: {copy_head}</h3>'
            f"{marked_html(text, alignment.b_spans)}{cut}</div>"
        )
    anchored = f' id="{html.escape(anchor, quote=True)}"' if anchor else ""
    return (
        f'<section class="pair" data-key="{key}" data-duplicate-of="{first}">\n'
        f"<h2{anchored}>{headline(pair.title, pair.key)} <small>duplicate of "
        f"{headline(pair.first_title, pair.first_key)}</small></h2>\n"
        f'<p class="urls">copy: {linked(pair.key)} · first copy: {linked(pair.first_key)}</p>\n'
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
    """The texts and headlines of first copies, by story id (``similar_id``): those of this run
    (held compressed, up to ``limit`` bytes), else the texts the store kept (``read``: ids ->
    texts)."""

    def __init__(self, read: Callable[[list[int]], dict[int, str]] | None = None, limit: int = REMEMBERED_BYTES):
        self.read = read
        self.limit = limit
        self.held = 0
        self._texts: dict[int, bytes] = {}
        self._titles: dict[int, str] = {}

    def remember(self, doc_id: int | None, text: str, title: str | None = None, replace: bool = False) -> None:
        """Hold a story's first copy; ``replace``: a copy that took the story's place (or an
        updated page), held instead of the one before."""
        if doc_id is None or (doc_id in self._texts and not replace):
            return
        if title:
            self._titles[doc_id] = title
        else:
            self._titles.pop(doc_id, None)
        if self.held >= self.limit:
            self._texts.pop(doc_id, None)  # not the text of another copy under this one's name
            return
        packed = pack_text(text)
        self.held += len(packed) - len(self._texts.get(doc_id, b""))
        self._texts[doc_id] = packed

    def text(self, doc_id: int | None, stored_as: int | None = None) -> str | None:
        """Story ``doc_id``'s first copy as this run holds it, else the store's kept text of
        document ``stored_as`` (the copy holding the story; by default the story's first)."""
        if doc_id is None:
            return None
        if doc_id in self._texts:
            return unpack_text(self._texts[doc_id])
        wanted = doc_id if stored_as is None else stored_as
        return self.read([wanted]).get(wanted) if self.read is not None else None

    def title(self, doc_id: int | None) -> str | None:
        return self._titles.get(doc_id) if doc_id is not None else None

    def held_copy(self, doc_id: int | None) -> tuple[str | None, str | None]:
        """(text, headline) of a story's first copy as this run holds it, without reading the store."""
        if doc_id is None or doc_id not in self._texts:
            return None, self.title(doc_id)
        return unpack_text(self._texts[doc_id]), self.title(doc_id)


# Pairs on one page from which it gets a table of contents; stories listed per section.
TOC_FROM = 4
STORIES_PER_SECTION = 500


class Report:
    """A run's review pages: counts as verdicts come, each duplicate (and each story kept) spooled
    to a file at once (a run's texts are not held), and the pages written by :meth:`write`:
    ``PATH``, then ``PATH-2``, ... (same extension), a few MB each, linked in order; a page of
    several duplicates begins with a table of contents, and the stories kept are listed last.
    The first page lists the others, so that a later run replaces or removes only pages it wrote
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
        self.kept = 0  # stories kept (counted when the pages are written)
        self._later: Counter[int] = Counter()  # stories whose copy was replaced in this run: how often
        self._spool = tempfile.TemporaryFile(prefix="neardup-report-")  # noqa: SIM115 - closed by close()
        self._stories = tempfile.TemporaryFile(prefix="neardup-report-")  # noqa: SIM115 - closed by close()
        self._sizes: list[int] = []

    def count(self, status: str) -> None:
        """One verdict that gets no section (unique, not judged)."""
        self.verdicts[status] += 1

    def add(self, pair: Pair) -> None:
        """A duplicate: counted, and spooled to be shown beside its first copy."""
        self.verdicts["duplicate"] += 1
        self.methods[pair.method or "?"] += 1
        if pair.containment is not None:
            step = (1 - HISTOGRAM_FROM) / HISTOGRAM_BINS
            self.histogram[min(HISTOGRAM_BINS - 1, max(0, int((pair.containment - HISTOGRAM_FROM) / step)))] += 1
        self._spool.write(_spooled(dataclasses.asdict(pair)))

    def story(
        self, key: str, title: str | None = None, note: str = "", story: int | None = None, took_place: bool = False
    ) -> None:
        """A story kept by this run, listed at the end with its headline and URL (``note`` says
        what it is): a new story, or a copy that took the place of the story's stored copy (a
        preferred copy, an updated page: ``took_place``), listed instead of the copy it replaced
        when that copy came earlier in this run. ``story``: the story's id."""
        if took_place and story is not None:
            self._later[story] += 1
        self._stories.write(_spooled({"key": key, "title": title, "note": note, "story": story}))

    def _kept_stories(self) -> Iterator[dict]:
        """The stories kept, each once: where copies took a story's place in this run, the last."""
        total: Counter[int] = Counter()
        for entry in self._read(self._stories, dict):
            if entry["story"] in self._later:
                total[entry["story"]] += 1
        seen: Counter[int] = Counter()
        for entry in self._read(self._stories, dict):
            story = entry["story"]
            if story in self._later:
                seen[story] += 1
                if seen[story] < total[story]:
                    continue
            yield entry

    def write(self, held: Callable[[int | None], tuple[str | None, str | None]] | None = None) -> list[str]:
        """Write the pages (at least one, with the summary) and return their paths. ``held``
        gives a story's first copy (text, headline) as the run holds it by now: a first copy
        seen after its duplicate (re-crawled later in the same run) is shown too. Raises OSError
        when a file that neardup did not write took the first page's place."""
        if not may_replace(self.path):
            raise FileExistsError(errno.EEXIST, "it exists and is not a page neardup wrote", self.path)
        rendered = tempfile.TemporaryFile(prefix="neardup-report-")  # noqa: SIM115 - closed below
        try:
            contents: list[str] = []  # each section's entry in a table of contents ("" for none)
            self.missing = 0
            for number, pair in enumerate(self._read(self._spool, Pair), start=1):
                if pair.first_text is None and held is not None:
                    pair.first_text, found = held(pair.story)
                    pair.first_title = pair.first_title or found
                self.missing += pair.first_text is None
                self._sizes.append(rendered.write(_section(pair_section(pair, anchor=f"pair-{number}"))))
                contents.append(_toc_entry(pair, number))
            self.kept = sum(1 for _ in self._kept_stories())
            for start, chunk in enumerate(_chunks(self._kept_stories(), STORIES_PER_SECTION)):
                section = _stories_section(chunk, start * STORIES_PER_SECTION, self.kept)
                self._sizes.append(rendered.write(_section(section)))
                contents.append("")
            return self._write_pages(rendered, contents)
        finally:
            rendered.close()
            self._sizes = []

    def _write_pages(self, rendered: Any, contents: list[str]) -> list[str]:
        groups: list[list[int]] = [[]]
        size = 0
        for number, length in enumerate(self._sizes):
            if groups[-1] and size + length > self.page_bytes:
                groups.append([])
                size = 0
            groups[-1].append(number)
            size += length
        earlier = listed_pages(self.path)
        paths = [self.path, *self._further_paths(len(groups) - 1, earlier)]
        first_story = sum(1 for entry in contents if entry)  # the stories follow the pairs
        listed = next((n for n, group in enumerate(groups) if first_story in group), None) if self.kept else None
        stories_at = f"{os.path.basename(paths[listed])}#stories" if listed is not None else ""
        offsets = [0]
        for length in self._sizes:
            offsets.append(offsets[-1] + length)
        for number in [*range(2, len(groups) + 1), 1]:  # the first page, which lists the others, last
            group = groups[number - 1]
            body = self._summary(stories_at) if number == 1 else ""
            entries = [contents[i] for i in group if contents[i]]
            if len(entries) >= TOC_FROM:
                here = "#stories" if listed == number - 1 else ""
                more = f'<p><a href="{here}">Stories kept in this run</a></p>' if here else ""
                body += f'<nav class="toc">\n<h2>Contents</h2>\n<ol>{"".join(entries)}</ol>\n{more}</nav>\n'
            rendered.seek(offsets[group[0]] if group else 0)
            sections = rendered.read(sum(self._sizes[i] for i in group)).decode("utf-8")
            head = manifest(paths[1:]) if number == 1 else ""
            document = page(self._page_title(number, len(groups)), body + sections, self._nav(paths, number), head)
            write_file(paths[number - 1], document)
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

    @staticmethod
    def _read(spool: Any, kind: Any) -> Iterator[Any]:
        spool.seek(0)
        for line in spool:
            fields = json.loads(line)
            yield kind(**fields) if kind is Pair else fields

    def close(self) -> None:
        self._spool.close()
        self._stories.close()

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

    def _summary(self, stories_at: str = "") -> str:
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
        kept = (
            f'<p class="kept">{self.kept} {"story" if self.kept == 1 else "stories"} kept in this run (new '
            "stories, copies that took a story's place, updated pages)"
            + (f': <a href="{html.escape(stories_at, quote=True)}">the list</a>' if stories_at else "")
            + ".</p>\n"
        )
        return (
            '<div class="summary">\n<h2>Verdicts</h2>\n<table class="counts">' + rows + "</table>\n" + kept + ""
            '<h2>Duplicates by method</h2>\n<table class="counts">'
            + (methods or "<tr><td>none</td></tr>")
            + "</table>\n"
            "<h2>Similarity of duplicates to their first copy (containment)</h2>\n"
            f'<div class="histogram">{bars}</div>\n<div class="axis">{labels}</div>\n{missing}</div>\n'
        )


def _spooled(fields: dict) -> bytes:
    """One line of a spool: JSON, a lone surrogate kept as its escape."""
    return json.dumps(fields, ensure_ascii=True).encode("ascii") + b"\n"


def _section(markup: str) -> bytes:
    return markup.encode("utf-8", "replace")  # a lone surrogate as "?"


def _toc_entry(pair: Pair, number: int) -> str:
    """A duplicate's line in a page's table of contents: its headline, URL and first copy."""
    return (
        f'<li value="{number}"><a href="#pair-{number}">{headline(pair.title, pair.key)}</a> '
        f"<small>{html.escape(pair.key)} · duplicate of {headline(pair.first_title, pair.first_key)}</small></li>"
    )


def _stories_section(stories: list[dict], start: int, total: int) -> str:
    """One part of the list of stories kept: each story's headline, URL and what kind it is."""
    items = "".join(
        f'<li value="{start + offset + 1}">{headline(story["title"], story["key"])} '
        f"<small>{linked(story['key'])}{' · ' + html.escape(story['note']) if story['note'] else ''}</small></li>"
        for offset, story in enumerate(stories)
    )
    head = f'<h2 id="stories">Stories kept in this run: {total}</h2>\n' if start == 0 else ""
    return f'<section class="stories">\n{head}<ol>{items}</ol>\n</section>\n'


def _chunks(items: Iterator[dict], size: int) -> Iterator[list[dict]]:
    chunk: list[dict] = []
    for item in items:
        chunk.append(item)
        if len(chunk) == size:
            yield chunk
            chunk = []
    if chunk:
        yield chunk


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
