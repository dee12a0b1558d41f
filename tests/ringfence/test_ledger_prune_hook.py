"""`ringfence ledger prune` also prunes the hook's tables (hook_events, hook_asks).

The hook writes a row for every Bash call, so without this the ledger of a
Claude Code user grows without bound. The rows are made by driving the real hook
with Pre/Post event sequences at controlled times; prune runs through the API
and the real CLI; the assertions name exactly which rows remain.
"""

from __future__ import annotations

import io
import json
import os
import sqlite3
import subprocess
import sys
import time
import types

import pytest

from ringfence.ledger import prune as ledger_prune
from ringfence.hooks import claude_code as cc
from ringfence.ledger import hook_rows as store
from ringfence.ledger.store import Ledger

DAY = 86400.0


@pytest.fixture
def env(tmp_path):
    proj = tmp_path / "proj"
    proj.mkdir()
    return {"RINGFENCE_HOME": str(tmp_path / "state"), "XDG_CONFIG_HOME": str(tmp_path / "cfg"),
            "HOME": str(tmp_path / "home"), "PATH": os.environ["PATH"], "_proj": str(proj)}


def hook(env, monkeypatch, at: float, name: str, command: str, tid: str, sid="sess-A"):
    """One real hook call, as if made at time ``at``."""
    monkeypatch.setattr(store, "time", types.SimpleNamespace(time=lambda: at))
    payload = {"session_id": sid, "cwd": env["_proj"], "permission_mode": "default",
               "hook_event_name": name, "tool_name": "Bash", "tool_use_id": tid,
               "tool_input": {"command": command}}
    e = {k: v for k, v in env.items() if not k.startswith("_")}
    out = io.StringIO()
    assert cc.main(["--profile", "build"], stdin=io.BytesIO(json.dumps(payload).encode()),
                   stdout=out, stderr=io.StringIO(), env=e) == 0
    monkeypatch.setattr(store, "time", time)
    text = out.getvalue()
    return json.loads(text)["hookSpecificOutput"].get("permissionDecision") if text else None


def events(led) -> list[tuple[str, str]]:
    return [(r["tool_use_id"], r["event"]) for r in
            led.conn.execute("SELECT tool_use_id, event FROM hook_events ORDER BY seq")]


def asks(led) -> list[tuple[str, str]]:
    return [(r["tool_use_id"], r["status"]) for r in
            led.conn.execute("SELECT tool_use_id, status FROM hook_asks ORDER BY at")]


def history(env, monkeypatch):
    """Old and new hook rows: settled, stale and open asks, and plain allows.
    Returns the time it takes as now."""
    now = time.time()
    old, young = now - 40 * DAY, now - 60
    # 40 days ago: an ask the person approved (Pre + Post), an ask never answered
    # (long past the consent window), and an allow.
    assert hook(env, monkeypatch, old, "PreToolUse", "git push", "t_old_yes") == "ask"
    hook(env, monkeypatch, old + 5, "PostToolUse", "git push", "t_old_yes")
    assert hook(env, monkeypatch, old + 10, "PreToolUse", "git fetch", "t_old_open") == "ask"
    assert hook(env, monkeypatch, old + 20, "PreToolUse", "echo hi", "t_old_allow") == "allow"
    # A minute ago: an ask still open (its Post has not arrived), and one answered.
    assert hook(env, monkeypatch, young, "PreToolUse", "git pull", "t_open") == "ask"
    assert hook(env, monkeypatch, young + 1, "PreToolUse", "git tag v1", "t_new_yes") == "ask"
    hook(env, monkeypatch, young + 2, "PostToolUse", "git tag v1", "t_new_yes")
    # Now: the newest event.
    assert hook(env, monkeypatch, now, "PreToolUse", "pwd", "t_now") == "allow"
    return now


def test_before_prunes_old_hook_rows_only(env, monkeypatch):
    now = history(env, monkeypatch)
    with Ledger(env=env) as led:
        assert len(events(led)) == 8 and len(asks(led)) == 4
        result = ledger_prune.prune(led, before=now - 30 * DAY)
        assert events(led) == [("t_open", "PreToolUse"), ("t_new_yes", "PreToolUse"),
                               ("t_new_yes", "PostToolUse"), ("t_now", "PreToolUse")]
        assert asks(led) == [("t_open", "asked"), ("t_new_yes", "approved")]
    # The existing keys keep their meaning (no runs here); the hook's are new keys.
    assert result == {"runs": 0, "events": 0, "kept_for_pending_or_children": 0,
                      "dry_run": False, "hook_events": 4, "hook_asks": 2,
                      "hook_kept_for_open_asks": 0}


def test_keep_counts_hook_events_and_never_drops_an_open_ask(env, monkeypatch):
    history(env, monkeypatch)
    with Ledger(env=env) as led:
        result = ledger_prune.prune(led, keep=1)
        # The newest event stays (--keep 1), and so does the open ask with its Pre:
        # its Post may still come, and its --wrap consent may still be spent.
        assert events(led) == [("t_open", "PreToolUse"), ("t_now", "PreToolUse")]
        assert asks(led) == [("t_open", "asked")]
    assert (result["hook_events"], result["hook_asks"], result["hook_kept_for_open_asks"]) \
        == (6, 3, 1)


def test_the_open_ask_still_becomes_a_grant_after_a_prune(env, monkeypatch):
    history(env, monkeypatch)
    with Ledger(env=env) as led:
        ledger_prune.prune(led, keep=0)
        assert asks(led) == [("t_open", "asked")]
    hook(env, monkeypatch, time.time(), "PostToolUse", "git pull", "t_open")
    with Ledger(env=env) as led:
        assert asks(led) == [("t_open", "approved")]
        keys = [r[0] for r in led.conn.execute("SELECT key FROM grants")]
    assert "git pull" in keys   # unwrapped, it ran on the machine: a host grant (issue 20b)


def test_an_ask_past_the_consent_window_is_no_longer_open(env, monkeypatch):
    stale = time.time() - store.CONSENT_TTL - 60
    assert hook(env, monkeypatch, stale, "PreToolUse", "git pull", "t_stale") == "ask"
    with Ledger(env=env) as led:
        result = ledger_prune.prune(led, keep=0)
        assert events(led) == [] and asks(led) == []
    assert (result["hook_events"], result["hook_asks"]) == (1, 1)


def test_dry_run_counts_and_deletes_nothing(env, monkeypatch):
    now = history(env, monkeypatch)
    with Ledger(env=env) as led:
        result = ledger_prune.prune(led, before=now - 30 * DAY, dry_run=True)
        assert len(events(led)) == 8 and len(asks(led)) == 4
    assert (result["hook_events"], result["hook_asks"], result["dry_run"]) == (4, 2, True)


def test_a_failure_mid_prune_loses_nothing(env, monkeypatch):
    history(env, monkeypatch)
    with Ledger(env=env) as led:
        run = led.start_run(kind="sandbox", command="echo old", state="completed")
        before = (events(led), asks(led))
        # The last statement of the prune fails: runs, hook events and asks all stay.
        led.conn.execute("""CREATE TEMP TRIGGER boom BEFORE DELETE ON main.hook_asks
            WHEN OLD.tool_use_id = 't_old_open' BEGIN SELECT RAISE(ABORT, 'boom'); END""")
        with pytest.raises(sqlite3.DatabaseError, match="boom"):
            ledger_prune.prune(led, keep=0)
        assert (events(led), asks(led)) == before
        assert [r.id for r in led.list_runs(limit=None)] == [run]
        assert led.conn.execute("SELECT COUNT(*) FROM prune_permit").fetchone()[0] == 0


def test_hook_rows_stay_append_only_outside_prune(env, monkeypatch):
    history(env, monkeypatch)
    with Ledger(env=env) as led:
        with pytest.raises(sqlite3.DatabaseError, match="append-only"):
            led.conn.execute("DELETE FROM hook_events")
        with pytest.raises(sqlite3.DatabaseError, match="append-only"):
            led.conn.execute("UPDATE hook_events SET command = 'x'")
        with pytest.raises(sqlite3.DatabaseError, match="only ledger prune deletes"):
            led.conn.execute("DELETE FROM hook_asks")
        # Defence in depth: even under a permit, an open ask is never deleted.
        led.conn.execute("BEGIN IMMEDIATE")
        led.conn.execute("INSERT INTO prune_permit VALUES ('test')")
        with pytest.raises(sqlite3.DatabaseError, match="open"):
            led.conn.execute("DELETE FROM hook_asks WHERE tool_use_id = 't_open'")
        led.conn.execute("ROLLBACK")
        assert len(asks(led)) == 4


def test_cli_json_reports_hook_rows(env, monkeypatch):
    history(env, monkeypatch)
    e = dict(os.environ, **{k: v for k, v in env.items() if not k.startswith("_")})
    e.pop("RINGFENCE_SESSION", None)
    proc = subprocess.run([sys.executable, "-m", "ringfence", "ledger", "prune", "--before",
                           "30d", "--json"], env=e, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    got = json.loads(proc.stdout)
    assert (got["runs"], got["hook_events"], got["hook_asks"]) == (0, 4, 2)
    proc = subprocess.run([sys.executable, "-m", "ringfence", "ledger", "prune", "--keep", "0"],
                          env=dict(e, COLUMNS="200"), capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert "deleted 0 run(s) and 0 event(s), 3 hook event(s) and 1 hook ask(s)" in proc.stdout
    assert "kept 1 hook event(s) of asks still open" in proc.stdout


def test_migration_from_v6_keeps_hook_rows(tmp_path):
    from ringfence.ledger.store import migrate
    from ringfence.ledger.migrations import MIGRATIONS

    conn = sqlite3.connect(tmp_path / "l.db", isolation_level=None)
    migrate(conn, upto=6)
    conn.execute("INSERT INTO hook_events (at, event) VALUES (1.0, 'PreToolUse')")
    conn.execute("INSERT INTO hook_asks (session, tool_use_id, at, rf_session, command, "
                 "verdict, keys, grant_scope) VALUES ('s', 't', 1.0, 'r', 'c', 'v', '[]', 'once')")
    assert migrate(conn) == len(MIGRATIONS)
    assert conn.execute("SELECT COUNT(*) FROM hook_events").fetchone()[0] == 1
    assert conn.execute("SELECT COUNT(*) FROM hook_asks").fetchone()[0] == 1
    with pytest.raises(sqlite3.DatabaseError, match="append-only"):
        conn.execute("DELETE FROM hook_events")


def test_the_schema_knows_the_consent_window():
    from ringfence.ledger import migrations as ledger_schema

    # The open-ask trigger (migration 7) hard-codes the window it was written for.
    assert ledger_schema._OPEN_ASK_SECONDS == store.CONSENT_TTL


def test_an_ask_at_the_edge_of_the_window_never_aborts_the_prune(env):
    """Python's clock and the trigger's (julianday('now'), millisecond precision)
    differ: an ask the trigger still sees as open must never be selected, or the
    whole prune rolls back with an integrity error."""
    with Ledger(env=env) as led:
        led.conn.execute(
            "INSERT INTO hook_asks (session, tool_use_id, at, rf_session, command, verdict, "
            "keys, grant_scope) VALUES ('s', 't', ?, 'r', 'c', 'v', '[]', 'once')",
            (time.time() - store.CONSENT_TTL + 0.2,))   # open for 0.2 s more
        led.conn.commit()
        out = ledger_prune.prune(led, before=time.time() + 10, now=time.time() + 0.5)
        assert out["hook_asks"] == 0
        assert led.conn.execute("SELECT count(*) FROM hook_asks").fetchone()[0] == 1
