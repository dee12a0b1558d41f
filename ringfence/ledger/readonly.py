"""Open the ledger for reading only (issue 23): `ledger list/show/export` and `doctor`
work on a ledger they cannot write (a read-only state dir, a file owned by another
user, a read-only mount).

SQLite in WAL mode needs its ``-shm`` file writable even to read; when that is not
possible the file is opened ``immutable`` (no locking: what is read is a snapshot of
a ledger nobody can be writing, since nobody here can write it). Nothing is
migrated and nothing is recovered: a read never writes.
"""

from __future__ import annotations

import os
import sqlite3
from urllib.parse import quote

from ringfence.rfcore.errors import LedgerError

from .migrations import MIGRATIONS
from .store import Ledger


def writable(path: str) -> bool:
    """Can this process write the ledger at ``path`` (and its dir, for -wal/-shm)?"""
    d = os.path.dirname(os.path.abspath(path)) or "."
    if os.path.exists(path) and not os.access(path, os.W_OK):
        return False
    if not os.access(d, os.W_OK):
        return False
    try:                                    # root passes access(); a ro mount does not
        st = os.statvfs(d)
    except OSError:
        return False
    return not st.f_flag & os.ST_RDONLY


def open_readonly(path: str) -> Ledger:
    """A :class:`Ledger` over ``path`` that only reads; LedgerError when unusable."""
    if not os.path.isfile(path):
        raise LedgerError(f"no ledger at {path}: no runs recorded yet",
                          hint="run a command with 'ringfence run' first")
    last: Exception | None = None
    for extra in ("mode=ro", "mode=ro&immutable=1"):
        try:
            conn = sqlite3.connect(f"file:{quote(path)}?{extra}", uri=True,
                                   isolation_level=None)
            conn.execute("PRAGMA query_only = 1")
            version = conn.execute("PRAGMA user_version").fetchone()[0]
            conn.execute("SELECT 1 FROM runs LIMIT 1").fetchall()
        except sqlite3.Error as exc:
            last = exc
            continue
        if version != len(MIGRATIONS):
            conn.close()
            raise LedgerError(f"the read-only ledger {path} is at schema v{version}, this "
                              f"ringfence reads v{len(MIGRATIONS)}",
                              hint="open it once with write access to migrate it, or use "
                                   "the ringfence that wrote it")
        conn.row_factory = sqlite3.Row
        led = Ledger.__new__(Ledger)
        led.conn, led.path = conn, path
        return led
    raise LedgerError(f"cannot read the ledger {path}: {last}",
                      hint="run 'ringfence doctor'; a corrupt ledger can be moved aside "
                           "(ringfence starts a new one)")


def open_for_reading(env=None) -> Ledger:
    """The ledger as read commands want it: writable when it can be (so dead runs are
    marked aborted, and deferred Claude Code calls past their clock end: ``hook_defer``),
    else read-only."""
    from .store import default_path

    path = str(default_path(env))
    if not os.path.exists(path) or writable(path):    # none yet: create it, as before
        try:
            led = Ledger(env=env)
        except LedgerError as exc:
            text = str(exc)
            if not os.path.exists(path) or not any(
                    w in text for w in ("readonly", "read-only", "full", "disk I/O")):
                raise       # a full disk or a read-only one: still readable below
        else:
            from .hook_defer import expire_stale

            try:
                expire_stale(led)
            except (LedgerError, sqlite3.Error):
                pass        # busy or full: the read shows what is recorded; the next open ends them
            return led
    return open_readonly(path)
