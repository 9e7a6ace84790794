"""The errors a store raises: a module of its own, so that a command catches them without
loading the stores (numpy, the fingerprint tables)."""

from __future__ import annotations


class StoreError(Exception):
    """The store cannot be used; the message says why and what to do."""


class StoreUnavailable(StoreError):
    """Locked by another process, unreachable, or not openable."""


class StoreLost(StoreUnavailable):
    """The store's data is gone (a server restarted empty): going on would keep every reprint."""


class StoreFormatError(StoreError):
    """Written by another format version or fingerprint recipe."""


class StoreOptionError(StoreError, ValueError):
    """An option the store cannot take (a time window longer than it can represent): refused
    when the store is opened, before anything is created."""
