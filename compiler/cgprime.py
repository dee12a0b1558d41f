"""Warm the kernel's cgroup migration lock before a run joins its cgroup (root).

See ``prime_attach``. The run's cgroups themselves are ``compiler/limits.py``.
"""

from __future__ import annotations

import os

from .limits import _own_paths, _v1_mount, _v2_mount


def _own_procs() -> str | None:
    """Our own cgroup's ``cgroup.procs`` in the hierarchy runs are made in."""
    own = _own_paths()
    v1 = _v1_mount("pids")
    if v1 is not None and "pids" in own:
        return os.path.join(v1, own["pids"].lstrip("/"), "cgroup.procs")
    v2 = _v2_mount()
    if v2 is not None and "" in own:
        return os.path.join(v2, own[""].lstrip("/"), "cgroup.procs")
    return None


def prime_attach() -> None:
    """Warm the kernel's cgroup migration lock in the background, as root.

    Moving a process into a cgroup (the run's first preexec step) takes the kernel's
    global ``cgroup_threadgroup_rwsem`` for writing, and the first writer after a
    quiet spell waits a full RCU grace period (about 10 ms here); writers within the
    next grace period or so do not. So at the start of a run a daemon thread
    "moves" ringfence into the cgroup it is already in (a no-op migration that takes
    the lock, only after checking that this ``cgroup.procs`` lists our pid, so a
    cgroup-namespace mismatch can never move ringfence anywhere), sleeping through
    the grace period while the run is classified and compiled. The join that
    matters then finds the lock warm. Best effort: it never raises (not even when
    no thread can be started), so a run's ledger row never stays "running"."""
    if os.geteuid() != 0:
        return
    procs = _own_procs()
    if procs is None:
        return
    import threading

    try:
        threading.Thread(target=_noop_migration, args=(procs,), daemon=True,
                         name="ringfence-cgroup-prime").start()
    except RuntimeError:
        # No thread to be had (ringfence's cgroup is at its pids.max, a TasksMax):
        # the run goes on without the warm-up, and fails or not on its own terms.
        pass


def _noop_migration(procs: str) -> None:
    pid = str(os.getpid())
    try:
        with open(procs, encoding="ascii") as fh:
            if pid not in fh.read().split():
                return
        fd = os.open(procs, os.O_WRONLY)
        try:
            os.write(fd, pid.encode())
        finally:
            os.close(fd)
    except OSError:
        pass
