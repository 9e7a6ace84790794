"""What each store held when this machine last used it, kept outside the store, so that a store
found emptied or rolled back since is reported at open instead of being silently taken for a
new store.

A Redis restarted without persistence comes back empty, and one restarted from an older
snapshot comes back with the documents of that moment; a LevelDB folder deleted or restored
from an older copy does the same. Either way the stories stored since are forgotten, and a
crawl that went on would keep every reprint of them. The store itself cannot tell: what it
lost includes what it knew. So each open and close writes a receipt: for the store (its URI
without credentials, and its namespace), the highest document id handed out and the store's
marker (Redis: the random token written when a namespace is created). Ids only grow (purges and
expiry take documents out, never ids back), so a store whose id counter is below its receipt's,
or that has no documents or another marker where the receipt names one, lost documents. It is
reported (a warning naming what was lost), not refused: what was lost is lost, and going on
keeps reprints of those stories, never drops a new one; a store emptied on purpose opens as
usual.

Receipts live in one JSON file per user: ``$NEARDUP_STATE_DIR/stores.json``, else
``$XDG_STATE_HOME/scrapy-neardup/stores.json``, else ``~/.local/state/scrapy-neardup/stores.json``.
Each machine keeps its own, and checks against its own last use.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import tempfile
import time
from typing import Any

from .base import Store

__all__ = ["check", "forget", "receipt_path", "record", "record_now_and_then"]

logger = logging.getLogger(__name__)

RECORD_EVERY = 60.0  # seconds between the receipts a running store writes as it hands out ids
KEPT = 1000  # receipts kept, the most recent


def receipt_path() -> str:
    """The file that holds this user's receipts."""
    folder = os.environ.get("NEARDUP_STATE_DIR")
    if not folder:
        state = os.environ.get("XDG_STATE_HOME") or os.path.join(os.path.expanduser("~"), ".local", "state")
        folder = os.path.join(state, "scrapy-neardup")
    return os.path.join(folder, "stores.json")


def _identity(store: Store) -> str | None:
    """The store as this machine reaches it; None for a store that keeps nothing (memory)."""
    where = store.location()
    return None if where is None else f"{where} namespace={store.namespace}"


def _read() -> dict[str, Any]:
    try:
        with open(receipt_path(), encoding="utf-8") as handle:
            found = json.load(handle)
    except (OSError, ValueError):
        return {}
    return found if isinstance(found, dict) else {}


def check(store: Store) -> str | None:
    """What ``store`` lost since this machine's last use of it, said for a user, or None: it is
    new (emptied), has another marker (emptied and made anew), or a lower id counter (rolled
    back)."""
    identity = _identity(store)
    receipt = _read().get(identity) if identity else None
    if not isinstance(receipt, dict):
        return None
    last, marker = int(receipt.get("last_id") or 0), receipt.get("marker")
    when = time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(float(receipt.get("at") or 0)))
    now = store.last_id()
    if now is None or last == 0:
        return None
    if store.created:
        what = "is empty"
    elif marker and store.marker() and store.marker() != marker:
        what = f"is another store: its marker is not the one it had (it holds ids up to {now})"
    elif now < last:
        what = f"holds ids up to {now} only"
    else:
        return None
    return (
        f"the store {store.describe()} {what}, but it had handed out ids up to {last} when this machine "
        f"last used it ({when}): the stories stored since are forgotten (a server restarted without "
        "persistence or from an older snapshot, a flush, a folder deleted or restored from an older copy), "
        "and their reprints will be kept. If it was not emptied on purpose, stop and restore its data"
    )


def record_now_and_then(store: Store) -> None:
    """:func:`record`, once every RECORD_EVERY seconds: a store calls it as it hands out ids, so
    the receipt follows a long run (and one that is killed)."""
    now = time.monotonic()
    if now - store.__dict__.get("_receipt_at", 0.0) >= RECORD_EVERY:
        store.__dict__["_receipt_at"] = now
        record(store)


def record(store: Store) -> None:
    """Write ``store``'s receipt (after a successful open, and at close). A receipt that cannot
    be written is logged: it weakens the next check, it does not stop the work."""
    identity = _identity(store)
    if identity is None:
        return
    try:
        last = store.last_id()
        if last is None:
            return
        receipts = _read()
        receipts[identity] = {"last_id": last, "marker": store.marker(), "at": time.time()}
        if len(receipts) > KEPT:  # stores made and dropped (temporary folders): the oldest go
            newest = sorted(receipts, key=lambda name: float(receipts[name].get("at") or 0), reverse=True)
            receipts = {name: receipts[name] for name in newest[:KEPT]}
        _write(receipts)
    except Exception as exc:  # the state directory is read-only, the store went away...
        logger.warning("could not write the receipt of store %s in %s: %s", store.describe(), receipt_path(), exc)


def forget(location: str) -> None:
    """Drop the receipts of the store at ``location`` (as :meth:`Store.location` spells it),
    every namespace: a store deleted on purpose, to start anew (the example project does at each
    run), is not one that lost its data, and its next open says nothing."""
    receipts = _read()
    kept = {name: value for name, value in receipts.items() if not name.startswith(f"{location} namespace=")}
    if len(kept) < len(receipts):
        try:
            _write(kept)
        except OSError as exc:
            logger.warning("could not drop the receipts of store %s in %s: %s", location, receipt_path(), exc)


def _write(receipts: dict[str, Any]) -> None:
    """Replace the receipts file, through a new file renamed over it."""
    path = receipt_path()
    os.makedirs(os.path.dirname(path), exist_ok=True)
    fd, partial = tempfile.mkstemp(prefix=".stores-", dir=os.path.dirname(path))
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            json.dump(receipts, handle, indent=1, sort_keys=True)
        os.replace(partial, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(partial)
        raise
