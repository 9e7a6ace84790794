"""Stores chosen by URI: ``memory://``, ``leveldb:///path``, ``redis://host:port/db``,
``redis+cluster://host:port,...``."""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any
from urllib.parse import unquote, urlsplit

from ..dotted import load_dotted
from ..fingerprints.recipe import Recipe
from .errors import StoreError, StoreFormatError, StoreOptionError, StoreUnavailable

if TYPE_CHECKING:
    from .base import FORMAT_VERSION, Probe, Reservation, Store

__all__ = [
    "FORMAT_VERSION",
    "STORES_BASE",
    "Probe",
    "Reservation",
    "Store",
    "StoreError",
    "StoreFormatError",
    "StoreOptionError",
    "StoreUnavailable",
    "names_a_secret",
    "open_store",
    "read_meta",
    "redact",
    "store_class",
    "store_folder",
]

logger = logging.getLogger(__name__)


def __getattr__(name: str) -> Any:
    """The store contract (:mod:`.base`: numpy, the SimHash tables) is imported on first use,
    so that a command that fails before opening a store, or names one, does without it."""
    if name in ("FORMAT_VERSION", "Probe", "Reservation", "Store"):
        from . import base

        return getattr(base, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def names_a_secret(parameter: str) -> bool:
    """A URI query parameter whose value is a secret (redis-py takes ``?password=``): never
    shown in a message or a log."""
    return any(word in unquote(parameter).lower() for word in ("pass", "secret", "token"))


def redact(uri: str) -> str:
    """The URI without its credentials, for messages and logs.

    Hidden: the password of the userinfo (the whole userinfo when it has no ``:``: a password
    written without its colon), the value of each query parameter named like a secret
    (redis-py takes ``?password=``) and the fragment. An ``@`` after the host part comes
    from a password holding a raw ``#``, ``/``, ``?`` or ``@``: everything up to the last
    ``@`` is hidden then, and the whole URI when that ``@`` may belong to the query.
    """
    scheme, sep, rest = uri.partition("://")
    if not sep:
        return uri
    host_end = min((i for i in map(rest.find, "/?#") if i >= 0), default=len(rest))
    authority, tail = rest[:host_end], rest[host_end:]
    if authority and "@" in tail:
        userinfo, _, rest = rest.rpartition("@")
        query_at, fragment_at = userinfo.find("?"), userinfo.find("#")
        if query_at >= 0 and not 0 <= fragment_at < query_at:
            return f"{scheme}://***"
        host_end = min((i for i in map(rest.find, "/?#") if i >= 0), default=len(rest))
        authority, tail = f"{userinfo}@{rest[:host_end]}", rest[host_end:]
    if "@" in authority:
        userinfo, _, host = authority.rpartition("@")
        user, colon, _ = userinfo.partition(":")
        shown = f"{user}:***" if colon and not set(user) & set("/?#") else "***"
        authority = f"{shown}@{host}"
    tail, fragment, _ = tail.partition("#")
    path, question, query = tail.partition("?")
    params = []
    for param in query.split("&") if question else []:
        name, equals, _ = param.partition("=")
        secret = equals and names_a_secret(name)
        params.append(f"{name}=***" if secret else param)
    return f"{scheme}://{authority}{path}{question}{'&'.join(params)}{'#***' if fragment else ''}"


# URI scheme -> store class (a dotted path or the class). Settings extend and override it:
# NEARDUP_STORES_BASE, then NEARDUP_STORES, merged as Scrapy merges FEED_STORAGES.
STORES_BASE: dict[str, str] = {
    "memory": "scrapy_neardup.stores.memory.MemoryStore",
    "leveldb": "scrapy_neardup.stores.leveldb.LevelDBStore",
    "redis": "scrapy_neardup.stores.redis.RedisStore",
    "rediss": "scrapy_neardup.stores.redis.RedisStore",
    "unix": "scrapy_neardup.stores.redis.RedisStore",
    "redis+sentinel": "scrapy_neardup.stores.redis.RedisStore",
    "redis+cluster": "scrapy_neardup.stores.redis.RedisClusterStore",
    "rediss+cluster": "scrapy_neardup.stores.redis.RedisClusterStore",
}


def scheme_of(uri: str) -> str:
    """A URI's scheme; a bare path is a LevelDB directory."""
    return urlsplit(uri).scheme.lower() if "://" in uri else "leveldb"


def store_class(uri: str, stores: Mapping[str, Any] | None = None) -> type[Store]:
    """The class registered for ``uri``'s scheme in ``stores`` (default :data:`STORES_BASE`)."""
    registry = {name: path for name, path in (stores or STORES_BASE).items() if path}
    scheme = scheme_of(uri)
    found = registry.get(scheme)
    if found is None:
        known = ", ".join(f"{name}://" for name in sorted(registry))
        raise StoreError(f"unknown store URI {redact(uri)!r}: the known schemes are {known}")
    if isinstance(found, str):
        try:
            found = load_dotted(found)
        except ImportError as exc:
            extra = "redis" if "redis" in found else None
            hint = f": pip install 'scrapy-neardup[{extra}]'" if extra else ""
            raise StoreUnavailable(f"the {scheme}:// store ({found}) cannot be loaded ({exc}){hint}") from exc
        except (AttributeError, ValueError):
            raise StoreError(f"the {scheme}:// store names {found!r}, which does not exist") from None
    from .base import Store

    if not (isinstance(found, type) and issubclass(found, Store) and callable(getattr(found, "from_uri", None))):
        raise StoreUnavailable(
            f"the {scheme}:// store is {found!r}, not a store class: register a subclass of "
            "scrapy_neardup.stores.Store with a from_uri classmethod"
        )
    return found


def store_folder(uri: str, stores: Mapping[str, Any] | None = None) -> str | None:
    """The folder the store at ``uri`` keeps its files in (a LevelDB store's), or None: a
    store that keeps no files here, or one that cannot be loaded (opening it says why)."""
    try:
        return store_class(uri, stores).folder_of(uri)
    except Exception:  # a registered class may fail in any way: opening the store tells how
        return None


def open_store(
    uri: str,
    namespace: str = "default",
    recipe: Recipe | None = None,
    create: bool = True,
    stores: Mapping[str, Any] | None = None,
    **options: Any,
) -> Store:
    """Open the store at ``uri`` and check that it holds fingerprints of ``recipe``.

    The scheme picks the class in ``stores``; the class builds itself from the URI and the
    ``options`` it understands (the pipeline passes its whole configuration: ``ttl``,
    ``redis_params``...) and ignores the others. ``leveldb://relative/path`` and
    ``leveldb:///absolute/path`` both work; a bare path is taken as a LevelDB directory. With
    ``create`` False a store that does not exist is refused instead of made.
    """
    from . import receipts
    from .base import Store

    cls = store_class(uri, stores)
    recipe = (recipe or Recipe()).resolved()  # a tokenizer that cannot load fails before a store is made
    store = cls.from_uri(uri, namespace, create=create, **options)
    if not isinstance(store, Store):
        raise StoreUnavailable(f"{cls.__name__}.from_uri gave {type(store).__name__}, not a store")
    try:
        store.open(recipe, create)
        lost = receipts.check(store)
    except BaseException:
        store.close()
        raise
    if lost:
        logger.warning("%s", lost)
    store.lost_since_last_use = lost
    receipts.record(store)
    return store


def read_meta(
    uri: str, namespace: str = "default", stores: Mapping[str, Any] | None = None, **options: Any
) -> dict | None:
    """What a store recorded about itself (format, recipe, layout), read without checking it
    against any recipe and without creating anything; None when there is no such store."""
    store = store_class(uri, stores).from_uri(uri, namespace, create=False, **options)
    try:
        meta = store.read_meta()
    finally:
        store.close()
    return meta
