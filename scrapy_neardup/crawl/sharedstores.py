"""Stores shared by the spiders of one process: one open store per (URI, namespace).

Two spiders on one LevelDB must use one store object, since document ids come from it; and
a copy met by one spider waits for the first copy that another spider holds. So the store,
its calls and the copies waiting on its pending documents are kept here, counted by user,
and the store closes with its last user.
"""

from __future__ import annotations

from typing import Any

from .settings import NearDupConfig
from ..fingerprints.fingerprint import Recipe
from .reservations import Waiting
from .storecalls import StoreCalls
from ..stores import Store, StoreFormatError, open_store

__all__ = ["SharedStore", "acquire_store", "release_store"]


class SharedStore:
    """One open store, its calls, and the copies waiting on its pending documents."""

    def __init__(self, key: tuple[str, str], store: Store, threaded: bool | None = None, down_timeout: float = 60.0):
        self.key = key
        self.store = store
        self.users = 0
        self.waiting: Waiting = {}
        self.calls = StoreCalls(store.describe(), bool(threaded), down_timeout)


_SHARED: dict[tuple[str, str], SharedStore] = {}


def acquire_store(uri: str, namespace: str, recipe: Recipe, config: NearDupConfig) -> SharedStore:
    """The store open under (``uri``, ``namespace``), opened now if it is not; refused when it
    is open with another fingerprint recipe, whose fingerprints would not compare."""
    key = (uri, namespace)
    shared = _SHARED.get(key)
    if shared is None:
        store = open_store(uri, namespace, recipe, stores=config.stores, **config.store_options())
        shared = SharedStore(key, store, config.store_thread, config.store_down_timeout)
        _SHARED[key] = shared
    elif shared.store.recipe != recipe:
        raise StoreFormatError(
            f"store {shared.store.describe()} is already open in this process with fingerprint "
            f"recipe {shared.store.recipe.as_dict()}, this spider asks for {recipe.as_dict()}; "
            "spiders sharing a namespace must use the same NEARDUP_TOKENIZER, NEARDUP_NSHASH_N "
            "and NEARDUP_SIMHASH_DISTANCE"
        )
    shared.users += 1
    return shared


def release_store(shared: SharedStore) -> Any:
    """The store closes with its last user (after every call made before); a Deferred when
    its calls run on a thread."""
    shared.users -= 1
    if shared.users > 0:
        return None
    _SHARED.pop(shared.key, None)
    return shared.calls.close(shared.store.close)
