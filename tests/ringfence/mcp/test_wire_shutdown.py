"""Review r24w: a client that ends the wire (MCP's stdio shutdown: close the server's
stdin, wait for it to exit) while a ``shell`` call runs. The call is cancelled and
its sandbox killed; the server must finish that run's bookkeeping before it exits:
the run settled (recorded ``aborted``), its stage removed, nothing half-applied."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import time

import pytest

pytest.importorskip("mcp")


def _msg(obj) -> bytes:
    return json.dumps(obj).encode() + b"\n"


def _start(box):
    from tests.compiler.sandbox_util import CLI

    proc = subprocess.Popen([*CLI, "mcp", "-p", "build", "-w", str(box.ws)], cwd=box.ws,
                            env=box.env(), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE)
    proc.stdin.write(_msg({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "t", "version": "0"}}}))
    proc.stdin.flush()
    assert json.loads(proc.stdout.readline())["id"] == 1
    proc.stdin.write(_msg({"jsonrpc": "2.0", "method": "notifications/initialized"}))
    return proc


def _left_unsettled(box) -> list[tuple[str, str]]:
    """Stages the server left unsettled: anything but a killed run's changes held
    for review (state ``held``, the designed outcome of a killed run, RF627)."""
    out = []
    for name in _stages(box):
        with open(os.path.join(str(box.state), "stage", name, "meta.json")) as fh:
            state = json.load(fh).get("state")
        if state != "held":
            out.append((name, state))
    return out


def _stages(box) -> list[str]:
    root = os.path.join(str(box.state), "stage")
    try:
        return [n for n in os.listdir(root) if n.startswith("st_")]
    except FileNotFoundError:
        return []


_SANDBOX = [pytest.mark.sandbox,
            pytest.mark.skipif(shutil.which("bwrap") is None, reason="no bubblewrap")]


@_SANDBOX[0]
@_SANDBOX[1]
def test_end_of_input_during_a_call_leaves_no_stage_and_no_half_run(box):
    proc = _start(box)
    proc.stdin.write(_msg({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
        "name": "shell", "arguments": {"command": "sleep 5; echo hi > marker.txt"}}}))
    proc.stdin.flush()
    deadline = time.monotonic() + 60
    while not _stages(box) and time.monotonic() < deadline:
        time.sleep(0.05)                # the run's stage exists: it is running
    assert _stages(box), "the call never started"
    proc.stdin.close()                  # the client ends the session
    proc.stdin = None
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err.decode()
    assert not (box.ws / "marker.txt").exists()
    # Host side: the run was settled by the server that ran it, not left behind for
    # the next process to report as an interrupted run (RF642) and keep forever.
    assert _left_unsettled(box) == [], err.decode()
    import sqlite3

    con = sqlite3.connect(os.path.join(str(box.state), "ledger.db"))
    states = [r[0] for r in con.execute(
        "select state from run_events order by run_id, seq")]
    con.close()
    assert states and states[-1] == "aborted", states


def _settling(box) -> bool:
    import sqlite3

    try:
        con = sqlite3.connect(os.path.join(str(box.state), "ledger.db"))
        try:
            return bool(con.execute("select 1 from run_events where note like "
                                    "'%settling its staged writes%'").fetchall())
        finally:
            con.close()
    except sqlite3.Error:
        return False


@_SANDBOX[0]
@_SANDBOX[1]
def test_end_of_input_while_a_run_settles_applies_all_of_it_or_none(box):
    n = 3000
    proc = _start(box)
    proc.stdin.write(_msg({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
        "name": "shell", "arguments": {
            "command": f"mkdir out && cd out && seq 1 {n} | xargs touch"}}}))
    proc.stdin.flush()
    deadline = time.monotonic() + 120
    while not _settling(box) and time.monotonic() < deadline:
        time.sleep(0.01)
    assert _settling(box), "the run never settled"
    proc.stdin.close()                  # the client ends the session mid-settle
    proc.stdin = None
    out, err = proc.communicate(timeout=120)
    got = len(os.listdir(box.ws / "out")) if (box.ws / "out").exists() else 0
    assert got in (0, n), f"{got} of {n} files applied"
    assert _left_unsettled(box) == [], err.decode()


def test_what_a_handler_printed_while_serving_never_reaches_the_wire():
    """print() while serving goes to Python's buffered sys.stdout; that buffer must be
    emptied to stderr before fd 1 is the wire again, not at interpreter exit."""
    import sys

    code = ("import sys\n"
            "from ringfence.mcp import wire\n"
            "with wire.claimed() as (lines, out):\n"
            "    print('STRAY-OUTPUT')\n")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}  # as clients
    proc = subprocess.run([sys.executable, "-c", code], stdin=subprocess.PIPE, env=env,
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert b"STRAY-OUTPUT" not in proc.stdout
    assert b"STRAY-OUTPUT" in proc.stderr
