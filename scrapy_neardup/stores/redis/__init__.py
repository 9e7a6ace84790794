"""``redis://``, ``rediss://``, ``unix://`` and ``redis+sentinel://``: the store shared by several
crawler processes or machines (the store, its Lua scripts, and the Sentinel client)."""

from .store import RedisStore

__all__ = ["RedisStore"]
