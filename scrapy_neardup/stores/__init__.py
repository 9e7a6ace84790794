"""Stores chosen by URI: ``memory://``, ``leveldb:///path``, ``redis://host:port/db``."""

from __future__ import annotations

from urllib.parse import unquote, urlsplit

from ..fingerprint import Recipe
from .base import (
    FORMAT_VERSION,
    Probe,
    Reservation,
    Store,
    StoreError,
    StoreFormatError,
    StoreUnavailable,
)

__all__ = [
    "FORMAT_VERSION",
    "Probe",
    "Reservation",
    "Store",
    "StoreError",
    "StoreFormatError",
    "StoreUnavailable",
    "open_store",
    "redact",
]


def redact(uri: str) -> str:
    """The URI without its password, for messages and logs."""
    parts = urlsplit(uri)
    if parts.password is None:
        return uri
    netloc = parts.netloc.rsplit("@", 1)[1]
    user = f"{parts.username}:***@" if parts.username else ":***@"
    return parts._replace(netloc=user + netloc).geturl()


def open_store(
    uri: str,
    namespace: str = "default",
    recipe: Recipe | None = None,
    **options: object,
) -> Store:
    """Open the store at ``uri`` and check that it holds fingerprints of ``recipe``.

    ``leveldb://relative/path`` and ``leveldb:///absolute/path`` both work; a bare path is
    taken as a LevelDB directory.
    """
    recipe = (recipe or Recipe()).resolved()
    scheme = urlsplit(uri).scheme if "://" in uri else "leveldb"
    if scheme == "memory":
        from .memory import MemoryStore

        name = uri[len("memory://") :]
        store: Store = MemoryStore(uri, namespace, shared=bool(name))
    elif scheme == "leveldb":
        from .leveldb import LevelDBStore

        path = unquote(uri[len("leveldb://") :]) if "://" in uri else uri
        if not path:
            raise StoreError(f"store URI {uri!r} names no directory: leveldb:///path/to/dir")
        store = LevelDBStore(path, namespace, uri=uri if "://" in uri else None)
    elif scheme in ("redis", "rediss", "unix"):
        try:
            from .redis import RedisStore
        except ImportError as exc:
            raise StoreUnavailable(
                f"the {scheme}:// store needs the redis package ({exc}): "
                "pip install scrapy-neardup[redis]"
            ) from exc
        store = RedisStore(uri, namespace, **options)
    else:
        raise StoreError(
            f"unknown store URI {redact(uri)!r}: use memory://, leveldb:///path or redis://host:port/db"
        )
    try:
        store.open(recipe)
    except BaseException:
        store.close()
        raise
    return store
