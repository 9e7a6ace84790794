"""A store of the format version before this one: read as it is, marked with this version once
opened to write, so that an older release refuses it instead of misreading new records."""

from __future__ import annotations

import pytest
from support.corpus import ARTICLES, reprint, text

from scrapy_neardup import Detector, open_store
from scrapy_neardup.stores import STORES_BASE, StoreFormatError, scheme_of, store_class
from scrapy_neardup.stores.base import Store


def _older_release(uri: str) -> dict[str, type[Store]]:
    """The store registry of a release that knows only the version before this one."""
    current = store_class(uri)
    older = type(
        f"Older{current.__name__}", (current,), {"format_version": current.reads_formats[0], "reads_formats": ()}
    )
    return {**STORES_BASE, scheme_of(uri): older}


def test_a_store_of_the_version_before_is_read_then_marked_with_this_version(store_uri):
    names = list(ARTICLES)[:3]
    with open_store(store_uri) as store:
        current, previous = store.format_version, store.reads_formats[0]
        detector = Detector(store)
        for name in names:
            assert detector.check(name, text(name)).duplicate_of is None
        store.upgrade_meta({**store.read_meta(), "format": previous})  # as the release before left it
    with open_store(store_uri, create=False) as store:  # a command that only looks: nothing written
        assert store.read_meta()["format"] == previous
        assert [found.key for found in Detector(store).query(reprint(names[0]))] == [names[0]]
    with open_store(store_uri, stores=_older_release(store_uri)) as store:  # not yet marked: it opens
        assert store.read_meta()["format"] == previous
    with open_store(store_uri) as store:  # opened to write: marked at once
        assert store.read_meta()["format"] == current
        assert Detector(store).check(f"copy-{names[1]}", reprint(names[1])).duplicate_of == names[1]
    with pytest.raises(
        StoreFormatError, match=f"written by format version {current}, this scrapy-neardup reads version {previous}"
    ):
        open_store(store_uri, stores=_older_release(store_uri))
