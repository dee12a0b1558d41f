"""compiler/cgprime.prime_attach: the warm-up of the kernel's cgroup migration lock
never moves ringfence anywhere (issue 24's warm path)."""

from __future__ import annotations

import os
import threading

import pytest

from ringfence.compiler import cgprime as limits


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


def _pids_cgroup() -> str | None:
    """A fresh pids cgroup below ours (v1 pids hierarchy, or v2 with pids delegated)."""
    own = limits._own_paths()
    v1 = limits._v1_mount("pids")
    if v1 is not None and "pids" in own:
        base = os.path.join(v1, own["pids"].lstrip("/"))
    elif limits._v2_mount() is not None and "" in own:
        base = os.path.join(limits._v2_mount(), own[""].lstrip("/"))
    else:
        return None
    d = os.path.join(base, f"rf-prime-test-{os.getpid()}")
    try:
        os.mkdir(d)
    except OSError:
        return None
    if not os.path.exists(os.path.join(d, "pids.max")):
        os.rmdir(d)
        return None
    return d


@pytest.mark.skipif(os.geteuid() != 0, reason="the prime runs only as root")
def test_a_run_whose_cgroup_has_no_thread_left_is_still_recorded(box):
    """ringfence's own cgroup is at its pids.max (a container's pids limit, a
    TasksMax filled by other work): the prime's thread cannot start. The run must
    fail like any run that cannot start (recorded, exit 125), never leave its ledger
    row "running" forever with the prime's RuntimeError escaping."""
    import sqlite3
    import subprocess
    import sys

    cg = _pids_cgroup()
    if cg is None:
        pytest.skip("no pids cgroup can be made here")
    code = (f"import os, sys\n"
            f"open({cg + '/cgroup.procs'!r}, 'w').write(str(os.getpid()))\n"
            f"open({cg + '/pids.max'!r}, 'w').write('1')\n"
            "from ringfence.__main__ import main\n"
            f"main(['run', '--profile', 'strict', '--workspace', {str(box.ws)!r}, '--', "
            "'echo', 'hi'])\n")
    try:
        p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                           env=box.env(), cwd=str(box.ws), timeout=120)
    finally:
        os.rmdir(cg)
    assert p.returncode != 0
    db = sqlite3.connect(box.state / "ledger.db")
    states = [s for (s,) in db.execute("SELECT state FROM run_events ORDER BY rowid")]
    assert states and states[-1] != "running", (states, p.stderr[-600:])
