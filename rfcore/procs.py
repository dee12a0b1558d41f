"""Process identity: is the process that wrote a record still the one running?

A pid alone can be reused; its start time (``/proc/PID/stat`` field 22, clock
ticks since boot) tells a live process from a new one with the same pid. The
ledger records both for a running run and uses them to report a run whose
process is gone as ``aborted``.
"""

from __future__ import annotations

import os


_SELF: list = []        # [(our pid, our start time)]: it never changes while we live


def proc_start(pid: int) -> str | None:
    """Start time of `pid` in clock ticks since boot; guards against pid reuse.
    Our own is read once per process (a forked child has another pid, and reads its
    own): a warm Session records it with every running event."""
    if _SELF and _SELF[0][0] == pid == os.getpid():
        return _SELF[0][1]
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            data = fh.read().decode("ascii", "replace")
        start = data[data.rindex(")") + 2:].split()[19]
    except (OSError, ValueError, IndexError):
        return None
    if pid == os.getpid():
        _SELF[:] = [(pid, start)]
    return start


def alive(pid: int | None, start: str | None) -> bool:
    """True while `pid` exists and (when both are known) still has start time `start`."""
    if not pid:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass  # exists, owned by someone else
    now = proc_start(pid)
    return start is None or now is None or now == start
