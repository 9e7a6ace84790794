"""Is an extracted text an article? The rule that keeps a template's chrome from being judged.

When extraction goes wrong on a site's template (a short story on a long page, a body the
extractor cannot see), every page of that site can give the same navigation, footer, author
box or newsletter form. Judged as text, each would be a reprint of the first: unique
articles lost. Two rules stop that, for the pipeline and the CLI alike:

- :class:`SiteText`: a line of extracted text that another page of the same site gave too
  is the site's own text, not the article's; it is taken out before the page is judged.
  A site's first page cannot be told apart yet, but no later page can match it through
  lines that are taken out of every later page.
- :func:`not_article`: what is left is not an article when it is a menu: mostly short lines
  (a few characters or words, no sentence), as navigation, tag lists and calendars are.

A story told twice on one site (the same text under two URLs) loses its lines to the first
rule as well: it passes as not an article instead of being dropped; a revisit of the same
page keeps its own lines.
"""

from __future__ import annotations

import re
from collections import OrderedDict
from urllib.parse import urlsplit

__all__ = ["SiteText", "not_article", "site_of"]

MENU_SHARE = 0.6  # more of the text in menu-like lines than this: a menu, not an article
MENU_MIN_LINES = 6  # fewer lines than this are judged as text (a short story may be one line)
_MENU_CHARS = 6  # a line this short (CJK characters, or Latin words times 4) without a sentence
_SENTENCE = re.compile(r"[。！？；，.!?;,]")
_CJK = re.compile(r"[\u3400-\u9fff]")
_WORD = re.compile(r"[^\W\d_]+")
_REPEATED = -1


def _menu_line(line: str) -> bool:
    """A menu item, tag, date or number: short, and not a sentence."""
    if _SENTENCE.search(line.rstrip("。.")):
        return False
    size = len(_CJK.findall(line)) or 4 * len(_WORD.findall(line))
    return size <= _MENU_CHARS


def not_article(text: str) -> str | None:
    """Why ``text`` is not an article ("menu"), or None when it may be one."""
    lines = [line.strip() for line in text.split("\n") if line.strip()]
    if len(lines) < MENU_MIN_LINES:
        return None
    total = sum(map(len, lines))
    menu = sum(len(line) for line in lines if _menu_line(line))
    return "menu" if menu > MENU_SHARE * total else None


def site_of(key: str, source: str = "") -> str:
    """The site a page belongs to for :class:`SiteText`: ``source`` when given, else the
    host of a URL key with the first folder of its path (a site's section: sites served
    from one host, as a local test world is, stay apart); "" for other keys."""
    if source:
        return source.strip().lower()
    try:
        parts = urlsplit(key) if "://" in key else None
    except ValueError:
        parts = None
    if parts is None or not parts.hostname:
        return ""
    folder = parts.path.lstrip("/").split("/", 1)[0] if parts.path.count("/") > 1 else ""
    return f"{parts.hostname}/{folder}"


class SiteText:
    """Per site, the lines its pages gave: a line given by two pages is the site's own text.

    Bounded: ``max_sites`` sites (the least recently seen go) and ``max_lines`` lines a site
    (the oldest go when full, down to half of it): a site's own lines come back on every
    page, so a window of its last few dozen pages finds them, and the whole table stays
    within about 200 MB however many sites a crawl meets.
    """

    def __init__(self, max_sites: int = 500, max_lines: int = 5000) -> None:
        self.max_sites = max_sites
        self.max_lines = max_lines
        self._sites: OrderedDict[str, dict[int, int]] = OrderedDict()

    def strip(self, site: str, page: str, text: str) -> str:
        """``text`` without the lines another page of ``site`` gave; remembers its lines."""
        if not site:
            return text
        lines = self._lines(site)
        page_id = hash(page) if page else hash(text)
        kept = []
        for line in text.split("\n"):
            folded = " ".join(line.split())
            if not folded:
                continue
            seen = lines.get(hash(folded))
            if seen is None:
                lines[hash(folded)] = page_id
            elif seen != page_id:
                lines[hash(folded)] = _REPEATED
                continue
            kept.append(line)
        if len(lines) > self.max_lines:  # the oldest go, down to half the bound
            for old in list(lines)[: len(lines) - self.max_lines // 2]:
                del lines[old]
        return "\n".join(kept)

    def _lines(self, site: str) -> dict[int, int]:
        lines = self._sites.get(site)
        if lines is None:
            lines = self._sites[site] = {}
            if len(self._sites) > self.max_sites:
                self._sites.popitem(last=False)
        else:
            self._sites.move_to_end(site)
        return lines
