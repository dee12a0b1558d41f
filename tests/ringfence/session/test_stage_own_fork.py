"""Review r24w: ``mount.OWN`` (stages this process made, skipped by ``stale.recover``
unread) must not survive a fork: a child's OWN would name its parent's stages, and a
parent that died (SIGKILL) mid-run would have its stage neither reported (RF642) nor
ever recovered by that child."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap


def test_a_forked_child_recovers_its_dead_parents_stage(tmp_path):
    state, ws = tmp_path / "state", tmp_path / "ws"
    state.mkdir()
    ws.mkdir()
    code = textwrap.dedent(f"""
        import os, time
        from ringfence.staging import mount, stale
        run = os.fork()
        if run == 0:                            # the ringfence process that dies mid-run
            s = mount.create({str(state)!r}, {str(ws)!r})   # a run's stage, running
            if os.fork() == 0:                  # its child, which outlives it
                pid = int(s.meta()["pid"])
                for _ in range(1000):
                    if mount.proc_start(pid) is None:
                        break                   # dead and reaped
                    time.sleep(0.01)
                notes = stale.recover({str(state)!r})
                print("NOTES", [n.code for n in notes], flush=True)
                os._exit(0)
            os._exit(0)                         # dies without settling (as on SIGKILL)
        os.waitpid(run, 0)
    """)
    proc = subprocess.run([sys.executable, "-c", code], stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, timeout=60)
    # stdout is read to its end: the grandchild's answer is in it
    out = proc.stdout.decode()
    assert proc.returncode == 0, proc.stderr.decode()
    assert "NOTES ['RF642']" in out, (out, proc.stderr.decode())
