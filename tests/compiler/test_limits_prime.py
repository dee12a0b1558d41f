"""compiler/limits.prime_attach: the warm-up of the kernel's cgroup migration lock
never moves ringfence anywhere (issue 24's warm path)."""

from __future__ import annotations

import os
import threading

import pytest

from ringfence.compiler import limits


def _cgroups() -> str:
    with open("/proc/self/cgroup") as fh:
        return fh.read()


def _join_prime() -> None:
    for t in threading.enumerate():
        if t.name == "ringfence-cgroup-prime":
            t.join(10)


@pytest.mark.skipif(os.geteuid() != 0, reason="the prime runs only as root")
def test_prime_leaves_ringfence_in_its_own_cgroups():
    before = _cgroups()
    limits.prime_attach()
    _join_prime()
    assert _cgroups() == before


def test_prime_writes_nothing_to_a_cgroup_that_does_not_list_us(tmp_path):
    procs = tmp_path / "cgroup.procs"
    procs.write_text("1\n2\n")
    limits._noop_migration(str(procs))
    assert procs.read_text() == "1\n2\n"
    procs.write_text(f"1\n{os.getpid()}\n")
    limits._noop_migration(str(procs))
    assert procs.read_text().startswith(str(os.getpid()))   # it did write: the check is real


def test_prime_is_a_no_op_unprivileged(monkeypatch):
    monkeypatch.setattr(os, "geteuid", lambda: 1000)
    started = []
    monkeypatch.setattr(threading.Thread, "start", lambda self: started.append(self))
    limits.prime_attach()
    assert started == []
