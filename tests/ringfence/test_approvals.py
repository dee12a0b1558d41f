"""Approvals and grants as data, and the approvals/grants/ledger CLI as a user runs it."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from ringfence.rfcore.errors import ApprovalError, UsageError
from ringfence.ledger import pending as ap
from ringfence.ledger import grants as gr
from ringfence.ledger.store import Ledger

ROOT = Path(__file__).resolve().parents[2]
RINGFENCE = [sys.executable, "-m", "ringfence"]


def pend(led: Ledger, command: str, *, keys=("longbridge",), cls="capability", where="host",
         cwd: str | None = None, session="s1") -> ap.Approval:
    run_id = led.start_run(kind=where, command=command, state="waiting_for_approval",
                           profile="build", exit_code=75, session=session, cwd=cwd,
                           verdict={"command": command, "verdict": cls, "capabilities": [],
                                    "decorations": [], "findings": [], "parser": "t"})
    return ap.create(led, run_id=run_id, command=command, keys=keys, verdict_class=cls,
                     reasons=["not granted: " + ", ".join(keys)], where=where,
                     profile="build", cwd=cwd, session=session)


def test_ids_are_short_unguessable_and_distinct():
    led = Ledger(":memory:")
    ids = {pend(led, f"c{i}").id for i in range(50)}
    assert len(ids) == 50
    assert all(re.fullmatch(r"ap_[a-z2-7]{10}", i) for i in ids)


def test_create_get_pending_roundtrip():
    led = Ledger(":memory:")
    a = pend(led, "longbridge news FIG.US 2>&1 | head -30", cwd="/w")
    got = ap.get(led, a.id)
    assert (got.command, got.keys, got.where, got.cwd, got.status) == (
        "longbridge news FIG.US 2>&1 | head -30", ("longbridge",), "host", "/w", "pending")
    assert [p.id for p in ap.pending(led)] == [a.id]
    assert got.to_json()["capabilities"] == ["longbridge"]
    with pytest.raises(ApprovalError, match="'host' or in 'sandbox'"):
        ap.create(led, run_id=a.run_id, command="x", keys=(), verdict_class="helper",
                  reasons=(), where="elsewhere")


def test_claim_stores_grants_atomically_with_the_claim():
    led = Ledger(":memory:")
    a = pend(led, "git push", keys=("git push",))

    def crash(conn, claimed):
        raise RuntimeError("power cut inside the transaction")

    with pytest.raises(RuntimeError):
        ap.claim(led, a.id, scope="always", session="s1", on_claim=crash)
    assert ap.get(led, a.id).status == "pending"       # rolled back ...
    assert gr.list_grants(led) == []                    # ... with its grant
    claimed = ap.claim(led, a.id, scope="always", session="s1")
    assert (claimed.status, claimed.scope) == ("approved", "always")
    assert gr.active_keys(led, "anything") == frozenset({"git push"})


def test_unknown_scope_is_usage_error():
    led = Ledger(":memory:")
    a = pend(led, "x")
    with pytest.raises(UsageError, match="unknown scope"):
        ap.claim(led, a.id, scope="forever", session="s")


def test_grants_exact_keys_revoke_and_list():
    led = Ledger(":memory:")
    gr.add_grants(led, ["longbridge", "git push"], "always", "")
    gr.add_grants(led, ["longbridge"], "session", "s1", ttl=60)
    assert gr.active_keys(led, "s1") == {"longbridge", "git push"}
    assert "./longbridge" not in gr.active_keys(led, "s1")
    assert gr.revoke(led, "longbridge") == 2
    assert gr.active_keys(led, "s1") == {"git push"}
    assert gr.revoke(led, all_=True) == 1 and gr.list_grants(led) == []
    with pytest.raises(UsageError, match="--all"):
        gr.revoke(led)
    assert gr.add_grants(led, ["x"], "once", "s") == 0 and gr.list_grants(led) == []


def test_current_session_names():
    assert gr.current_session("cli", {"RINGFENCE_SESSION": "env"}) == ("cli", True)
    assert gr.current_session(None, {"RINGFENCE_SESSION": "env"}) == ("env", True)
    a, named = gr.current_session(None, {})
    assert not named and a == gr.current_session(None, {})[0]   # stable within a process
    assert a.startswith(f"proc-{os.getpid()}-")


# --- the CLI -----------------------------------------------------------------------------

@pytest.fixture
def home(tmp_path, monkeypatch):
    monkeypatch.setenv("RINGFENCE_HOME", str(tmp_path / "home"))
    monkeypatch.delenv("RINGFENCE_SESSION", raising=False)
    return tmp_path


def cli(*args: str, env_extra: dict | None = None) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=str(ROOT), COLUMNS="200", NO_COLOR="1", **(env_extra or {}))
    return subprocess.run([*RINGFENCE, *args], capture_output=True, env=env, timeout=120,
                          cwd=ROOT)


def test_cli_approve_prints_raw_output_and_exits_with_status(home):
    # Output that looks like rich markup and carries an escape must reach the
    # terminal byte for byte: typer/rich must not reinterpret or swallow it.
    cmd = "printf '[bold]raw[/bold] \\033[0m%s\\n' \"$PWD\"; echo to-stderr >&2; exit 4"
    with Ledger() as led:
        a = pend(led, cmd, keys=("printf",), cwd=str(home))
    r = cli("approve", a.id)
    assert r.returncode == 4
    assert r.stdout == f"[bold]raw[/bold] \x1b[0m{home}\n".encode()
    assert r.stderr == b"to-stderr\n"
    again = cli("approve", a.id)
    assert again.returncode == 2 and b"already approved" in again.stderr
    assert b"Traceback" not in again.stderr
    with Ledger() as led:
        rec = led.get_run(a.run_id)
        assert [e["state"] for e in rec.events] == ["waiting_for_approval", "running", "failed"]
        assert rec.result("exit_code") == 4


def test_cli_waiting_for_approval_is_its_own_state_everywhere(home):
    with Ledger() as led:
        a = pend(led, "longbridge news FIG.US 2>&1 | head -30")
    listed = json.loads(cli("approvals", "list", "--json").stdout)
    assert [(x["id"], x["status"], x["capabilities"]) for x in listed] == [
        (a.id, "pending", ["longbridge"])]
    assert 0 <= listed[0]["age_seconds"] < 600 and listed[0]["reasons"] == ["not granted: longbridge"]
    human = cli("approvals", "list").stdout.decode()
    assert a.id in human and "waiting_for_approval" in human and "longbridge" in human
    runs = json.loads(cli("ledger", "list", "--json").stdout)
    assert [r["state"] for r in runs] == ["waiting_for_approval"]
    shown = cli("ledger", "show", a.run_id).stdout.decode()
    assert "waiting_for_approval" in shown
    for word in ("aborted", "failed", "stopped"):
        assert word not in shown
    exported = [json.loads(line) for line in cli("ledger", "export", "--jsonl").stdout.splitlines()]
    assert [(e["id"], e["state"]) for e in exported] == [(a.run_id, "waiting_for_approval")]


def test_cli_deny_then_approve_is_error(home):
    with Ledger() as led:
        a = pend(led, "longbridge quote AAPL.US")
    r = cli("deny", a.id)
    assert r.returncode == 0 and f"denied {a.id}".encode() in r.stdout
    r = cli("approve", a.id)
    assert r.returncode == 2 and b"already denied" in r.stderr
    with Ledger() as led:
        assert led.get_run(a.run_id).state == "denied"


def test_cli_session_grant_then_list_and_revoke(home):
    with Ledger() as led:
        a = pend(led, "true", keys=("true",))
    r = cli("approve", a.id, "--scope", "session", "--session", "work")
    assert r.returncode == 0, r.stderr
    grants = json.loads(cli("grants", "list", "--json").stdout)
    assert [(g["key"], g["scope"], g["session"]) for g in grants] == [("true", "session", "work")]
    assert cli("grants", "revoke", "true").stdout.strip() == b"revoked 1 grant"
    assert json.loads(cli("grants", "list", "--json").stdout) == []


def test_cli_one_time_refuses_standing_scope(home):
    with Ledger() as led:
        a = pend(led, "bash -c 'true'", keys=("bash",), cls="one_time")
    r = cli("approve", a.id, "--scope", "always")
    assert r.returncode == 2 and b"one-time request" in r.stderr and r.stdout == b""
    assert cli("approve", a.id, "--scope", "once").returncode == 0


@pytest.mark.parametrize("args,code,msg", [
    (("approve", "ap_missing"), 2, b"no approval 'ap_missing'"),
    (("approve", "x", "--scope", "forever"), 2, b"unknown scope"),
    (("grants", "revoke"), 2, b"give a capability KEY or --all"),
    (("ledger", "show", "run_missing"), 2, b"no run 'run_missing'"),
    (("deny", "ap_missing"), 2, b"no approval"),
])
def test_cli_bad_input_is_a_clear_error(home, args, code, msg):
    r = cli(*args)
    assert r.returncode == code and msg in r.stderr
    assert b"Traceback" not in r.stderr


@pytest.mark.parametrize("args", [("approvals", "list"), ("approve",), ("deny",),
                                  ("grants", "list"), ("grants", "revoke"),
                                  ("ledger", "list"), ("ledger", "show"),
                                  ("ledger", "export")])
def test_every_command_has_help_with_an_example(home, args):
    r = cli(*args, "--help")
    assert r.returncode == 0 and b"Example:" in r.stdout, r.stdout


def test_ledger_show_renders_changes_network_and_links(home):
    with Ledger() as led:
        parent = led.start_run(kind="sandbox", command="curl https://x.example", state="running",
                               profile="host-assisted", spec_digest="abc123")
        led.append_event(parent, "failed", exit_code=56,
                         changes={"created": ["new.txt"], "modified": ["m.py"], "deleted": [],
                                  "capped": False},
                         network=[{"host": "x.example", "port": 443, "allowed": False,
                                   "rule": "not in allowlist"}],
                         stderr_tail=b"curl: (56) CONNECT tunnel failed, response 403\n")
        child = led.start_run(kind="host", command="curl https://x.example",
                              state="waiting_for_approval", parent_id=parent)
    out = cli("ledger", "show", parent).stdout.decode()
    for needle in ("failed", "abc123", "new.txt", "m.py", "x.example", "refused",
                   "not in allowlist", f"escalated to", child, "CONNECT tunnel failed"):
        assert needle in out, needle
    assert f"escalated from" in cli("ledger", "show", child).stdout.decode()
