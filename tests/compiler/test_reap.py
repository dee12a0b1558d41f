"""No run leaves a zombie (issue 10 §8).

bwrap's outer process exits without waiting for the sandbox's init, which then
dies as an orphan: reparented to pid 1 as ``[bwrap] <defunct>``, where an init
that never reaps (a container without --init) lets them pile up. The test runs
``ringfence run`` under a parent that is itself a child subreaper, exactly like
such an init: anything ringfence fails to reap is reparented to it, and it lists
what is left over once ringfence has exited.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys

import pytest

from .sandbox_util import CLI

pytestmark = [
    pytest.mark.sandbox,
    pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap is not installed"),
]

# A non-reaping "init": becomes a subreaper, runs the CLI, waits for it, then
# reports every process still parented to it (a zombie or alive) WITHOUT reaping.
PARENT = r"""
import ctypes, json, os, subprocess, sys, time
libc = ctypes.CDLL(None, use_errno=True)
assert libc.prctl(36, 1, 0, 0, 0) == 0          # PR_SET_CHILD_SUBREAPER
child = subprocess.Popen(json.loads(sys.argv[1]), stdout=subprocess.DEVNULL,
                         stderr=subprocess.DEVNULL)
if len(sys.argv) > 2:                            # signal the CLI once its sandbox runs
    time.sleep(float(sys.argv[2]))
    child.terminate()
code = child.wait()
def orphans():
    out = []
    for n in os.listdir("/proc"):
        if n.isdigit():
            try:
                st = open(f"/proc/{n}/stat").read()
            except OSError:
                continue
            name, rest = st[st.index("(") + 1:st.rindex(")")], st[st.rindex(")") + 2:].split()
            if int(rest[1]) == os.getpid():
                out.append([name, rest[0]])
    return out
left = orphans()
for _ in range(50):                 # an orphan may still be on its way: look for 0.5 s
    if left:
        break
    time.sleep(0.01)
    left = orphans()
print(json.dumps({"code": code, "left": left}))
"""


def run_under_reaper(box, args, *, terminate_after: float | None = None) -> dict:
    cmd = [*CLI, "run", "-w", str(box.ws), *args]
    argv = [sys.executable, "-c", PARENT, json.dumps(cmd)]
    if terminate_after is not None:
        argv.append(str(terminate_after))
    r = subprocess.run(argv, cwd=box.ws, env=box.env(), capture_output=True, text=True,
                       timeout=120)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


@pytest.mark.parametrize("profile", ["observe", "build", "strict"])
def test_a_run_leaves_no_zombie(box, profile):
    assert run_under_reaper(box, ["-p", profile, "--", "true"]) == {"code": 0, "left": []}


def test_failing_and_backgrounding_runs_leave_no_zombie(box):
    # The command leaves a background child behind: the init reaps it as it dies.
    res = run_under_reaper(box, ["-p", "strict", "--", "bash", "-c", "sleep 60 & exit 3"])
    assert res == {"code": 3, "left": []}


def test_timed_out_run_leaves_no_zombie(box):
    res = run_under_reaper(box, ["-p", "strict", "--timeout", "1", "--", "sleep", "60"])
    assert res == {"code": 124, "left": []}


def test_signalled_run_leaves_no_zombie(box):
    res = run_under_reaper(box, ["-p", "strict", "--", "sleep", "60"], terminate_after=1.5)
    assert res == {"code": 128 + 15, "left": []}


def test_reap_waits_for_our_child_and_kills_it_only_after_the_grace():
    import subprocess as sp
    import sys

    from ringfence.compiler.reap import _reap

    quick = sp.Popen([sys.executable, "-c", "import time; time.sleep(0.2)"])
    _reap(quick.pid, grace=30)
    with pytest.raises(ChildProcessError):      # reaped: its exit status is gone
        os.waitpid(quick.pid, os.WNOHANG)
    stuck = sp.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    _reap(stuck.pid, grace=0.3)
    with pytest.raises(ChildProcessError):
        os.waitpid(stuck.pid, os.WNOHANG)
    # A live process that is not our child (a grandchild, orphaned to init):
    # never signalled, whatever the grace.
    out = sp.run(["sh", "-c", "sleep 30 >/dev/null 2>&1 & echo $!"], capture_output=True,
                 text=True, check=True)
    other = int(out.stdout)
    try:
        _reap(other, grace=0.1)
        os.kill(other, 0)                        # still alive (raises if it was killed)
        with open(f"/proc/{other}/stat") as fh:
            assert fh.read().split(") ", 1)[1][0] != "Z"
    finally:
        os.kill(other, 9)
