"""The list commands stay readable in an 80-column terminal: every column is shown
and each run or request keeps its own lines."""

from __future__ import annotations

import os
import subprocess
import sys

from ringfence.ledger import pending as ap
from ringfence.ledger.store import Ledger

CLI = [sys.executable, "-m", "ringfence"]


def _env(tmp_path) -> dict:
    return dict(os.environ, RINGFENCE_HOME=str(tmp_path / "state"), COLUMNS="80",
                TERM="dumb")


def test_ledger_list_fits_80_columns_with_every_column(tmp_path):
    env = _env(tmp_path)
    with Ledger(env=env) as led:
        for state in ("completed", "waiting_for_approval", "denied", "failed"):
            led.start_run(kind="sandbox", command="longbridge news FIG.US 2>&1 | head -30 " * 3,
                          state=state, profile="host-assisted", exit_code=75)
    r = subprocess.run([*CLI, "ledger", "list"], capture_output=True, text=True, env=env,
                       timeout=60)
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    header = next(line for line in lines if " id " in f" {line} ")
    # every column is there; only the command (the last) may be cut to fit
    names = header.split()
    assert names[:6] == ["id", "at", "where", "state", "exit", "time"], header
    assert len(names) == 7 and "command".startswith(names[6].rstrip("…")), header
    runs = [line for line in lines if line.strip().startswith("run_")]
    assert len(runs) == 4 and all(len(line) <= 80 for line in lines)
    assert any("waiting_for_approval" in line for line in runs)   # never abbreviated


def test_approvals_list_is_one_block_per_request(tmp_path):
    env = _env(tmp_path)
    with Ledger(env=env) as led:
        run_id = led.start_run(kind="host", command="./longbridge news X", state="running")
        ap.create(led, run_id=run_id, command="./longbridge news X", keys=("./longbridge",),
                  verdict_class="capability", reasons=("needs approval for capability "
                                                       "`./longbridge` " * 4,), where="host")
    r = subprocess.run([*CLI, "approvals", "list"], capture_output=True, text=True, env=env,
                       timeout=60)
    assert r.returncode == 0, r.stderr
    out = r.stdout
    assert "pending approvals: 1 (state: waiting_for_approval)" in out
    assert "command ./longbridge news X" in out and "needs   ./longbridge" in out
    assert all(len(line) <= 80 for line in out.splitlines())
    assert "ringfence approve ID" in out and "ringfence deny ID" in out
