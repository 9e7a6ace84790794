"""The item's fields as the pipeline reads and writes them.

Read: the text (or else the HTML) to judge, the key, and the site for a ``source`` policy.
Written: the tags of a duplicate, the key of the copy a preferred copy replaces, the related
stories, and the extracted body handed on to the storage pipeline. An item class that does
not declare a field to write passes without it, counted, and said once per class with the
field to declare: silently skipping it (``suppress(KeyError)``) would hide a lost tag.
"""

from __future__ import annotations

import logging
from collections import Counter
from typing import Any

from itemadapter import ItemAdapter

from ..engine.verdicts import Verdict
from .runlog import RunLog
from .settings import NearDupConfig

__all__ = ["ItemFields"]

# An extra field's setting, its stat when the item class lacks it, and what its items pass
# without: by whether the field is the related stories'.
_EXTRAS = {
    False: ("NEARDUP_REPLACES_FIELD", "replaces_field_missing", "without the key of the copy they replace"),
    True: ("NEARDUP_RELATED_FIELD", "related_field_missing", "without related stories"),
}


class ItemFields:
    """The NEARDUP_*_FIELD settings applied to items; ``by_source``: a ``source`` policy is set,
    so the item's site is read from NEARDUP_SOURCE_FIELD."""

    def __init__(self, config: NearDupConfig, log: RunLog, by_source: bool = False):
        self.config = config
        self.log = log
        self.source_field = config.source_field if by_source else ""
        self.outputs = config.output_fields()
        self.watch = TextWatch(config, log)

    # -- read ---------------------------------------------------------------------------

    def source(self, adapter: ItemAdapter) -> tuple[Any, bool]:
        """(text, False) from the text field, else (html, True) from the HTML field, else (None, _)."""
        found = self._source(adapter)
        self.watch.note(adapter, found[0] is not None)
        return found

    def _source(self, adapter: ItemAdapter) -> tuple[Any, bool]:
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
        self.log.once(
            (setting, type(value)),
            logging.WARNING,
            "Field %r (%s) of item %s holds %s, not text; such items are checked by their other "
            "field or passed unchecked",
            field,
            setting,
            self.describe(adapter),
            type(value).__name__,
        )

    def source_name(self, item: Any) -> str:
        """The item's site for a ``source`` policy: NEARDUP_SOURCE_FIELD when the item has it
        as text, else "" (the engine takes the key's host)."""
        field = self.source_field
        if not field or not ItemAdapter.is_item(item):
            return ""
        value = ItemAdapter(item).get(field)
        return value.strip() if isinstance(value, str) else ""

    def key(self, adapter: ItemAdapter) -> str:
        """The key field, else a key derived from the whole item, but the fields the pipeline
        writes (see :func:`.record.content_key`)."""
        value = adapter.get(self.config.key_field)
        if value is None or value == "":
            from ..stores.record import content_key  # numpy: loaded by the store by now

            return content_key(adapter, self.outputs.names())
        return value if isinstance(value, str) else str(value)

    def title(self, adapter: ItemAdapter) -> str | None:
        """The item's headline (NEARDUP_TITLE_FIELD) as text, for the review page; None without one."""
        value = adapter.get(self.config.title_field) if self.config.title_field else None
        return value.strip() if isinstance(value, str) and value.strip() else None

    def describe(self, adapter: ItemAdapter) -> str:
        """The item as a log line names it: its key, else its type."""
        value = adapter.get(self.config.key_field)
        return repr(value) if value is not None else f"of type {type(adapter.item).__name__}"

    # -- write --------------------------------------------------------------------------

    def write(
        self, item: Any, adapter: ItemAdapter, field: str, value: Any, setting: str, stat: str, missing: str
    ) -> None:
        """Write ``value`` to ``field``; an item class without the field passes without it,
        counted under ``stat`` and said once."""
        if not isinstance(item, dict) and field not in adapter.field_names():
            self._lacks(
                item,
                stat,
                "Item class %s has no field %r (%s): its items pass %s. Declare the field in the item class",
                field,
                setting,
                missing,
            )
            return
        adapter[field] = value

    def write_extras(self, item: Any, adapter: ItemAdapter, verdict: Verdict) -> None:
        """What the verdict carries besides the tags (:meth:`.OutputFields.extras`): the key of
        the copy a preferred copy replaces (the storage pipeline replaces its row), the other
        stored stories sharing a long passage with the item (NEARDUP_RELATED)."""
        for field, value in self.outputs.extras(verdict).items():
            setting, stat, missing = _EXTRAS[field == self.outputs.related]
            self.write(item, adapter, field, value, setting, stat, missing)

    def hand_on(self, adapter: ItemAdapter, text: str) -> None:
        """Give the storage pipeline the body extracted here, so a crawl extracts it once; a
        value the item already has is kept."""
        field = self.config.text_out_field
        if adapter.get(field) not in (None, ""):
            return
        if not isinstance(adapter.item, dict) and field not in adapter.field_names():
            self._lacks(
                adapter.item,
                "text_out_field_missing",
                "Item class %s has no field %r (NEARDUP_TEXT_OUT_FIELD): the extracted body is not "
                "handed on. Declare the field in the item class",
                field,
            )
            return
        adapter[field] = text

    def tag(self, item: Any, adapter: ItemAdapter, verdict: Verdict) -> bool:
        """Write the duplicate's tags (NEARDUP_ACTION = 'tag'); False when its class lacks a tag field."""
        fields = (self.config.duplicate_of_field, self.config.similar_id_field)
        if not isinstance(item, dict):
            declared = set(adapter.field_names())
            missing = [name for name in fields if name not in declared]
            if missing:
                self._lacks(
                    item,
                    "tag_field_missing",
                    "Item class %s has no field %s: its items pass untagged (NEARDUP_ACTION = 'tag'). "
                    "Declare the field(s) in the item class, or set NEARDUP_DUPLICATE_OF_FIELD / "
                    "NEARDUP_SIMILAR_ID_FIELD to fields it has",
                    " and ".join(map(repr, missing)),
                )
                return False
        for field, value in self.outputs.tags(verdict).items():
            adapter[field] = value
        return True

    def _lacks(self, item: Any, stat: str, message: str, *args: Any) -> None:
        """An item passes without a field its class does not declare: counted under ``stat``,
        said once per class (``message`` takes the class name first)."""
        self.log.inc(stat)
        self.log.once(
            (stat, type(item)), logging.WARNING, message, f"{type(item).__module__}.{type(item).__qualname__}", *args
        )


class TextWatch:
    """Loud and early: when most of the first items carry neither text nor HTML in the fields the
    pipeline reads, deduplication is silently off (a spider yielding ``body`` for ``text``, an
    empty text field). One WARNING after the first ``AFTER`` items (or at close, for a shorter
    crawl) names the fields read and the fields the items have, with the one holding the longest
    strings as the likely text field."""

    AFTER = 20

    def __init__(self, config: NearDupConfig, log: RunLog):
        self.config = config
        self.log = log
        self.seen = 0
        self.without = 0  # of the items seen, those with neither text nor HTML
        self.fields: Counter[str] = Counter()  # field -> items without text that have it
        self.lengths: Counter[str] = Counter()  # field -> characters of string values held there
        self.done = False

    def note(self, adapter: ItemAdapter, has_text: bool) -> None:
        if self.done:
            return
        self.seen += 1
        if not has_text:
            self.without += 1
            for name, value in adapter.items():
                if value is None or value == "":
                    continue
                self.fields[str(name)] += 1
                if isinstance(value, (str, bytes)):
                    self.lengths[str(name)] += len(value)
        if self.seen >= self.AFTER:
            self.finish()

    def finish(self) -> None:
        """Judge what was seen (at ``AFTER`` items, or at close): warn once when most items had no text."""
        if self.done:
            return
        self.done = True
        if not self.seen or 2 * self.without <= self.seen:
            return
        text, html = self.config.text_field, self.config.html_field
        have = ", ".join(repr(name) for name in sorted(self.fields)) or "none"
        longest = max(self.lengths, key=lambda name: self.lengths[name], default=None)
        hint = (
            f"; {longest!r} holds the longest strings: NEARDUP_TEXT_FIELD = {longest!r} (or "
            f"NEARDUP_HTML_FIELD = {longest!r} for a page's HTML)?"
            if longest
            else ""
        )
        self.log.log(
            logging.WARNING,
            "scrapy-neardup: %d of the first %d items have no text in field %r (NEARDUP_TEXT_FIELD) "
            "and no HTML in field %r (NEARDUP_HTML_FIELD): they pass unchecked, so reprints are not "
            "caught. The fields these items have: %s%s",
            self.without,
            self.seen,
            text,
            html,
            have,
            hint,
        )
