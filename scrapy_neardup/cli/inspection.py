"""The commands that look at a store without judging texts: ``info``, ``export``, ``list``,
``lookup``, and ``purge``, which removes old documents.

The ones that only read open a store with the recipe it was written with, so a store of
another recipe can still be shown.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
import time

from ..engine.batching import chunks
from ..fingerprints.fingerprint import Recipe
from ..review.files import check_distinct
from ..stores import Store, StoreFormatError, open_store, read_meta, redact, store_folder
from ..stores.record import PENDING, DocRecord, clip_key
from .common import CommandError, json_line, shown, store_flags, warn
from .files import Output


def purge(args: argparse.Namespace) -> int:
    """Remove the documents stored more than --older-than seconds ago, whatever recipe wrote
    them: age needs no fingerprint compared. ``--paced`` rests between batches, for crawlers
    that share the store meanwhile."""
    with _readable_store(args) as store:
        if args.paced and not store.paces_purges:
            raise CommandError(f"store {store.describe()} cannot pace a purge: leave out --paced")
        older_than = time.time() - args.older_than
        removed = store.purge(older_than, background=True) if args.paced else store.purge(older_than)  # type: ignore[call-arg]
    print(f"removed {removed} documents older than {args.older_than:g} s", file=sys.stderr)
    return 0


def _open_as_stored(args: argparse.Namespace) -> tuple[Store | None, dict, str | None]:
    """A store opened with the recipe it was written with, whatever this version's is: the
    commands that only look at a store show a store of another recipe instead of refusing it.
    Returns the store (None when it cannot be opened), its stored meta and why not."""
    options = store_flags(args)
    try:  # the usual case, and every other refusal (no store, an evicting server) as it is
        store = open_store(args.store, args.namespace, Recipe(tokenizer=args.tokenizer), create=False, **options)
        return store, {"format": store.format_version, "recipe": store.recipe.as_dict()}, None
    except StoreFormatError as exc:
        refused = str(exc)
    meta = read_meta(args.store, args.namespace, **options) or {}
    try:
        recipe = Recipe(tokenizer=args.tokenizer, **meta.get("recipe", {}))
    except (TypeError, ValueError) as exc:  # fields of another scrapy-neardup version
        return None, meta, f"{refused}; its recipe is not one this version can read ({exc})"
    try:
        return open_store(args.store, args.namespace, recipe, create=False, **options), meta, None
    except StoreFormatError as exc:
        return None, meta, str(exc)


def _readable_store(args: argparse.Namespace) -> Store:
    store, _, problem = _open_as_stored(args)
    if store is None:
        raise StoreFormatError(f"cannot read {redact(args.store)}: {problem}")
    return store


def info(args: argparse.Namespace) -> int:
    """The store's format, recipe and size, as JSON, and how its recipe differs from this version's."""
    store, meta, problem = _open_as_stored(args)
    configured = Recipe(tokenizer=args.tokenizer).resolved().as_dict()
    shown = {
        "store": redact(args.store),
        "namespace": args.namespace,
        "format": meta.get("format"),
        "recipe": meta.get("recipe"),
        "documents": None,
    }
    stored = meta.get("recipe") or {}
    differs = {
        name: {"stored": stored.get(name), "this version": configured.get(name)}
        for name in sorted(set(stored) | set(configured))
        if stored.get(name) != configured.get(name)
    }
    if differs:
        shown["differs"] = differs  # checking against it with these defaults would be refused
    if store is None:
        shown["problem"] = problem
    else:
        with store:
            shown["documents"] = store.count()
    print(json.dumps(shown, indent=2, ensure_ascii=False))
    return 0


def _record_fields(record: DocRecord) -> dict:
    return {
        "key": record.key,
        "similar_id": record.story_id,
        "time": record.time,
        "length": record.chars,
        "pending": record.state == PENDING,
    }


def export(args: argparse.Namespace) -> int:
    """Every record as a JSON line, oldest first, with its text when the store kept it."""
    try:
        check_distinct([("the output (-o)", args.output)], [("the store's folder (--store)", store_folder(args.store))])
    except ValueError as exc:
        raise CommandError(str(exc)) from None
    with contextlib.ExitStack() as stack:
        output = Output(args.output, "", args.overwrite)
        stack.callback(output.discard)
        store = stack.enter_context(_readable_store(args))
        written = 0
        for records in chunks(store.records(), 500):
            texts = store.texts([record.doc_id for record in records])
            for record in records:
                fields = _record_fields(record)
                if record.doc_id in texts:  # kept (NEARDUP_KEEP_TEXT, dedup --keep-text)
                    fields["text"] = texts[record.doc_id]
                output.stream.write(json_line(fields).encode("utf-8") + b"\n")
                written += 1
        output.finish()
    print(f"{written} records", file=sys.stderr)
    return 0


def list_records(args: argparse.Namespace) -> int:
    """One line a record, oldest first: id, time (UTC), content characters, key (control
    characters and the like as escapes: keys come from crawled pages)."""
    with _readable_store(args) as store:
        for record in store.records():
            when = time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(record.time))
            pending = " pending" if record.state == PENDING else ""
            print(f"{record.doc_id}\t{when}\t{record.chars}\t{shown(record.key)}{pending}")
    return 0


def lookup(args: argparse.Namespace) -> int:
    """The records stored under KEY, as JSON lines, oldest first; exit code 1 when there is
    none. After a key collision the key holds several stories, each a line with its own
    ``similar_id``, and a note says so."""
    key = clip_key(args.key)
    with _readable_store(args) as store:
        records = store.stored_under(key)
    for record in records:
        print(json_line(_record_fields(record)))
    if not records:
        warn(f"no record with key {args.key!r} in {redact(args.store)} (namespace {args.namespace!r})")
    stories = len({record.story_id for record in records})
    if stories > 1:
        warn(
            f"key {args.key!r} holds {stories} stories (a key collision: texts of different stories came under "
            "one key, and each was kept as a story of its own); listed oldest first"
        )
    return 0 if records else 1
