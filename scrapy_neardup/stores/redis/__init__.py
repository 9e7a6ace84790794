"""``redis://``, ``rediss://``, ``unix://``, ``redis+sentinel://`` and ``redis+cluster://``: the
stores shared by several crawler processes or machines (one Redis and its Lua scripts, the
Sentinel client, and the Redis Cluster store with its slot router)."""

from .cluster_store import RedisClusterStore
from .store import RedisStore

__all__ = ["RedisClusterStore", "RedisStore"]
