"""Stores chosen by URI: ``memory://``, ``leveldb:///path``, ``redis://host:port/db``."""

from __future__ import annotations

import os
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
        secret = equals and any(word in unquote(name).lower() for word in ("pass", "secret", "token"))
        params.append(f"{name}=***" if secret else param)
    return f"{scheme}://{authority}{path}{question}{'&'.join(params)}{'#***' if fragment else ''}"


def open_store(
    uri: str,
    namespace: str = "default",
    recipe: Recipe | None = None,
    create: bool = True,
    **options: object,
) -> Store:
    """Open the store at ``uri`` and check that it holds fingerprints of ``recipe``.

    ``leveldb://relative/path`` and ``leveldb:///absolute/path`` both work; a bare path is
    taken as a LevelDB directory. With ``create`` False a store that does not exist is
    refused instead of made.
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
        if not create and not os.path.exists(os.path.join(path, "CURRENT")):
            raise StoreUnavailable(f"there is no LevelDB store at {os.path.abspath(path)}: check --store")
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
        store.open(recipe, create)
    except BaseException:
        store.close()
        raise
    return store
