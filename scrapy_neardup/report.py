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

import html
from dataclasses import dataclass

from .marking import Alignment, align, marked_html

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
mark {{ background: {MARK_COLOUR}; color: inherit; }}
"""


def page(title: str, body: str, nav: str = "") -> str:
    """A whole HTML document around ``body`` (already escaped markup)."""
    return (
        "<!DOCTYPE html>\n<html lang=\"zh\">\n<head>\n<meta charset=\"utf-8\">\n"
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
            ("method", pair.method), ("containment", pair.containment),
            ("jaccard", pair.jaccard), ("SimHash distance", pair.distance),
        )
        if value is not None
    ]
    if pair.first_text is None:
        figures.append("first copy's text not kept")
        left = (
            f'<div class="text missing" data-key="{first}"><h3>first copy: {first}</h3>'
            "The first copy's text was not kept (NEARDUP_KEEP_TEXT, or give the first copy in the "
            "same input): the copy is shown alone.</div>"
        )
        right = f'<div class="text" data-key="{key}"><h3>copy: {key}</h3>{html.escape(pair.text)}</div>'
    else:
        alignment = alignment or align(pair.first_text, pair.text)
        share = alignment.shared / max(1, alignment.b_chars)
        figures.append(f"shared {alignment.shared} of {alignment.b_chars} characters ({share:.0%})")
        if not alignment.complete:
            figures.append("long texts: only their beginnings are marked")
        left = (
            f'<div class="text" data-key="{first}"><h3>first copy: {first}</h3>'
            f"{marked_html(pair.first_text, alignment.a_spans)}</div>"
        )
        right = (
            f'<div class="text" data-key="{key}"><h3>copy: {key}</h3>'
            f"{marked_html(pair.text, alignment.b_spans)}</div>"
        )
    return (
        f'<section class="pair" data-key="{key}" data-duplicate-of="{first}">\n'
        f"<h2>{key} <small>duplicate of {first}</small></h2>\n"
        f'<p class="signals">{html.escape(" · ".join(figures))}</p>\n'
        f'<div class="texts">\n{left}\n{right}\n</div>\n</section>\n'
    )
