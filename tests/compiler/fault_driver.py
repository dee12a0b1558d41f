"""Run `ringfence ARGS...` with one fault injected (tests/compiler/test_faults.py).

    python fault_driver.py FAULT ARGS...

FAULT is one of the names in FAULTS (or "none"). Each patches one step of a run so
that it fails the way the real world makes it fail (a full disk, a dying ledger, a
bug after bwrap started); the test then checks what the host is left with.
"""

from __future__ import annotations

import errno
import os
import sqlite3
import sys


def settle_enospc():
    import ringfence.staging.settle as settle

    def boom(*_a, **_k):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
    settle.settle = boom


def ledger_full_at_the_end():
    from ringfence.ledger.store import FINAL_STATES, Ledger

    real = Ledger.append_event

    def append(self, run_id, state, **event):
        if state in FINAL_STATES:
            raise sqlite3.OperationalError("database or disk is full")
        return real(self, run_id, state, **event)
    Ledger.append_event = append


def bug_after_start():
    """A bug in the supervisor's loop once the command is running (its first output)."""
    from ringfence.compiler import supervise

    def add(self, chunk):
        raise RuntimeError("injected: the supervisor failed mid-run")
    supervise._Tail.add = add


def preexec_fails():
    """A preexec step (rlimits) that raises in the child after fork."""
    from ringfence.compiler import startup

    def fn(_spec, skip=(), **_kw):
        def apply():
            raise ValueError("injected: setrlimit failed in the child")
        return apply
    startup._rlimit_fn = fn


def watch_never_looks():
    """The limits watch never looks while the command runs (tests/compiler/
    test_memory_cap.py): only what it sees when the run ends can count."""
    from ringfence.compiler import supervise

    supervise.WATCH_EVERY = 3600.0


FAULTS = {f.__name__: f for f in (settle_enospc, ledger_full_at_the_end, bug_after_start,
                                  preexec_fails, watch_never_looks)}


if __name__ == "__main__":
    fault, args = sys.argv[1], sys.argv[2:]
    if fault != "none":
        FAULTS[fault]()
    from ringfence.__main__ import main

    main(args)
