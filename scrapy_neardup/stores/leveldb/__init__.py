"""``leveldb:///path``: the embedded default store (the store and its in-memory bucket index)."""

from .store import LevelDBStore

__all__ = ["LevelDBStore"]
