"""The ledger: migrations, append-only runs, crash consistency, concurrent writers."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from ringfence.rfcore.errors import LedgerError
from ringfence.ledger import store as L
from ringfence.ledger.hostdiff import diff, snapshot
from ringfence.ledger.store import Ledger

ROOT = Path(__file__).resolve().parents[2]
PY = sys.executable


def _child(code: str, *args: str, **kw) -> subprocess.Popen:
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    return subprocess.Popen([PY, "-c", textwrap.dedent(code), *args], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, **kw)


def test_state_dir_precedence(tmp_path):
    assert L.state_dir({"RINGFENCE_HOME": "/a", "XDG_STATE_HOME": "/b"}) == Path("/a")
    assert L.state_dir({"XDG_STATE_HOME": "/b"}) == Path("/b/ringfence")
    assert L.state_dir({}) == Path.home() / ".local/state/ringfence"


def test_fresh_ledger_is_at_latest_version_in_wal(tmp_path):
    db = tmp_path / "l.db"
    with Ledger(db) as led:
        assert led.conn.execute("PRAGMA user_version").fetchone()[0] == len(L.MIGRATIONS)
        assert led.conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert db.is_file()


def test_default_location_follows_ringfence_home(tmp_path):
    with Ledger(env={"RINGFENCE_HOME": str(tmp_path / "h")}) as led:
        led.start_run(kind="host", command="true", state="completed", exit_code=0)
    assert (tmp_path / "h" / "ledger.db").is_file()


def test_injectable_connection_and_memory():
    conn = sqlite3.connect(":memory:")
    led = Ledger(conn)
    run = led.start_run(kind="host", command="true", state="completed", exit_code=0)
    assert conn.execute("SELECT command FROM runs WHERE id=?", (run,)).fetchone()[0] == "true"
    mem = Ledger(":memory:")
    assert mem.list_runs() == []


def test_migration_from_v1_keeps_runs_and_adds_tables(tmp_path):
    db = tmp_path / "old.db"
    conn = sqlite3.connect(db, isolation_level=None)
    assert L.migrate(conn, upto=1) == 1
    conn.execute("INSERT INTO runs (id, created_at, kind, command) VALUES "
                 "('run_old', 1.0, 'host', 'echo old')")
    conn.execute("INSERT INTO run_events (run_id, seq, state, at, exit_code) VALUES "
                 "('run_old', 1, 'completed', 2.0, 0)")
    tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    assert "approvals" not in tables
    conn.close()
    with Ledger(db) as led:
        assert led.conn.execute("PRAGMA user_version").fetchone()[0] == len(L.MIGRATIONS)
        rec = led.get_run("run_old")
        assert (rec.command, rec.state, rec.result("exit_code")) == ("echo old", "completed", 0)
        assert led.conn.execute("SELECT COUNT(*) FROM approvals").fetchone()[0] == 0


def test_failed_migration_rolls_back_whole_step(tmp_path, monkeypatch):
    db = tmp_path / "m.db"
    conn = sqlite3.connect(db, isolation_level=None)
    L.migrate(conn, upto=1)

    def broken(c):
        c.execute("CREATE TABLE approvals (id TEXT)")
        raise sqlite3.OperationalError("boom halfway")

    monkeypatch.setattr(L, "MIGRATIONS", (L.MIGRATIONS[0], broken, *L.MIGRATIONS[2:]))
    with pytest.raises(sqlite3.OperationalError):
        L.migrate(conn)
    assert conn.execute("PRAGMA user_version").fetchone()[0] == 1
    tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    assert "approvals" not in tables


def test_newer_schema_is_a_clear_error(tmp_path):
    db = tmp_path / "new.db"
    conn = sqlite3.connect(db)
    conn.execute(f"PRAGMA user_version = {len(L.MIGRATIONS) + 5}")
    conn.close()
    with pytest.raises(LedgerError, match="newer than this ringfence"):
        Ledger(db)


def test_unopenable_ledger_is_ledger_error(tmp_path):
    (tmp_path / "file").write_text("x")
    with pytest.raises(LedgerError, match="cannot open ledger"):
        Ledger(tmp_path / "file" / "ledger.db")
    bad = tmp_path / "garbage.db"
    bad.write_bytes(b"this is not a database" * 100)
    with pytest.raises(LedgerError, match="unusable"):
        Ledger(bad)


def test_runs_and_events_are_append_only():
    led = Ledger(":memory:")
    run = led.start_run(kind="sandbox", command="make", state="running", profile="build")
    for sql in ("UPDATE runs SET command='x'", "DELETE FROM runs",
                "UPDATE run_events SET state='completed'", "DELETE FROM run_events"):
        with pytest.raises(sqlite3.IntegrityError, match="append-only"):
            led.conn.execute(sql)
    led.append_event(run, "completed", exit_code=0, stdout_tail=b"x" * 10000,
                     changes={"created": ["a"]})
    rec = led.get_run(run)
    assert [e["state"] for e in rec.events] == ["running", "completed"]
    assert rec.state == "completed"
    assert len(rec.result("stdout_tail")) == L.TAIL_BYTES
    assert rec.result("changes") == {"created": ["a"]}


def test_unknown_state_or_field_is_refused_and_nothing_written():
    led = Ledger(":memory:")
    with pytest.raises(LedgerError, match="unknown run state"):
        led.start_run(kind="host", command="x", state="stopped")
    with pytest.raises(LedgerError, match="unknown run event fields"):
        led.start_run(kind="host", command="x", state="completed", colour="red")
    assert led.conn.execute("SELECT COUNT(*) FROM runs").fetchone()[0] == 0


def test_waiting_for_approval_is_never_aborted_even_with_dead_pid(tmp_path):
    db = tmp_path / "w.db"
    child = _child("""
        import sys
        from ringfence.ledger.store import Ledger
        led = Ledger(sys.argv[1])
        print(led.start_run(kind='host', command='longbridge news X', state='waiting_for_approval', exit_code=75))
    """, str(db))
    out, err = child.communicate(timeout=60)
    assert child.returncode == 0, err
    run_id = out.decode().strip()
    with Ledger(db) as led:   # the process that created it is gone
        rec = led.get_run(run_id)
        assert rec.state == "waiting_for_approval"
        assert [e["state"] for e in rec.events] == ["waiting_for_approval"]
        assert rec.to_json()["state"] == "waiting_for_approval"


def test_sigkill_mid_run_leaves_consistent_ledger_and_recovers_aborted(tmp_path):
    db = tmp_path / "k.db"
    child = _child("""
        import sys, time
        from ringfence.ledger.store import Ledger
        led = Ledger(sys.argv[1])
        run = led.start_run(kind='sandbox', command='sleep 600', state='running')
        print(run, flush=True)
        time.sleep(600)
        led.append_event(run, 'completed', exit_code=0)
    """, str(db))
    run_id = child.stdout.readline().decode().strip()
    with Ledger(db, recover=False) as led:
        assert led.get_run(run_id).state == "running"     # the writer is alive
    child.send_signal(signal.SIGKILL)
    child.wait(timeout=30)
    with Ledger(db, recover=False) as led:
        assert led.get_run(run_id).state == "aborted"     # reported, not yet recorded
        assert [e["state"] for e in led.get_run(run_id).events] == ["running"]
    with Ledger(db) as led:                               # open => recovery appends
        assert led.conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        events = led.get_run(run_id).events
        assert [e["state"] for e in events] == ["running", "aborted"]
        assert "died" in events[-1]["note"]
    with Ledger(db) as led:                               # idempotent
        assert [e["state"] for e in led.get_run(run_id).events] == ["running", "aborted"]


def test_sigkill_during_heavy_writes_loses_no_committed_run(tmp_path):
    db = tmp_path / "heavy.db"
    child = _child("""
        import sys
        from ringfence.ledger.store import Ledger
        led = Ledger(sys.argv[1])
        i = 0
        while True:
            r = led.start_run(kind='host', command=f'cmd {i}', state='running')
            led.append_event(r, 'completed', exit_code=0, stdout_tail=b'o' * 3000)
            print(r, flush=True)
            i += 1
    """, str(db))
    seen = [child.stdout.readline().decode().strip() for _ in range(40)]
    child.send_signal(signal.SIGKILL)
    child.wait(timeout=30)
    with Ledger(db) as led:
        assert led.conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        for run_id in seen:   # everything reported as committed is there, complete
            assert led.get_run(run_id).state == "completed"
        # Every run row has at least its first event: the pair is one transaction.
        orphans = led.conn.execute("SELECT COUNT(*) FROM runs r WHERE NOT EXISTS "
                                   "(SELECT 1 FROM run_events e WHERE e.run_id=r.id)")
        assert orphans.fetchone()[0] == 0
        states = {r.state for r in led.list_runs(limit=None)}
        assert states <= {"completed", "aborted"}


def test_concurrent_writers_from_several_processes_lose_nothing(tmp_path):
    db = tmp_path / "c.db"
    Ledger(db).close()
    code = """
        import sys
        from ringfence.ledger.store import Ledger
        led = Ledger(sys.argv[1])
        for i in range(30):
            r = led.start_run(kind='host', command=f'{sys.argv[2]}-{i}', state='running')
            led.append_event(r, 'completed' if i % 2 else 'failed', exit_code=i % 2 and 0 or 1)
    """
    kids = [_child(code, str(db), f"w{n}") for n in range(4)]
    for k in kids:
        _, err = k.communicate(timeout=120)
        assert k.returncode == 0, err.decode()
    with Ledger(db) as led:
        runs = led.list_runs(limit=None)
        assert len(runs) == 120
        assert sorted(r.command for r in runs) == sorted(
            f"w{n}-{i}" for n in range(4) for i in range(30))
        assert all(len(r.events) == 2 for r in runs)
        assert sum(r.state == "completed" for r in runs) == 60


def test_list_order_limit_and_export(tmp_path):
    led = Ledger(":memory:")
    ids = [led.start_run(kind="host", command=f"c{i}", state="completed", exit_code=0)
           for i in range(5)]
    assert [r.id for r in led.list_runs(limit=3)] == ids[::-1][:3]
    exported = list(led.export())
    assert [e["id"] for e in exported] == ids
    assert exported[0]["state"] == "completed" and exported[0]["exit_code"] == 0


def test_linked_runs_show_children():
    led = Ledger(":memory:")
    parent = led.start_run(kind="sandbox", command="curl x", state="failed", exit_code=1)
    child = led.start_run(kind="host", command="curl x", state="waiting_for_approval",
                          parent_id=parent)
    assert led.get_run(parent).children == [child]
    assert led.get_run(child).parent_id == parent


def test_changes_snapshot_diff(tmp_path):
    (tmp_path / "keep").write_text("k")
    (tmp_path / "mod").write_text("1")
    (tmp_path / "gone").write_text("g")
    (tmp_path / "d").mkdir()
    os.symlink("/", tmp_path / "rootlink")          # never followed
    before = snapshot(tmp_path)
    (tmp_path / "mod").write_text("22")
    (tmp_path / "gone").unlink()
    (tmp_path / "d" / "new").write_text("n")
    ch = diff(before, snapshot(tmp_path))
    assert (ch.created, ch.modified, ch.deleted, ch.capped) == (
        ("d/new",), ("mod",), ("gone",), False)
    assert "rootlink" in before.files and len(before.files) == 4


def test_changes_cap_is_reported(tmp_path):
    for i in range(10):
        (tmp_path / f"f{i}").write_text("x")
    before = snapshot(tmp_path, cap=5)
    assert before.capped and len(before.files) == 5
    (tmp_path / "zz").write_text("new")
    ch = diff(before, snapshot(tmp_path, cap=5))
    assert ch.capped is True
    assert ch.created == () and ch.deleted == ()   # unknown, not claimed


def test_new_ledger_is_owner_only(tmp_path):
    db = tmp_path / "state" / "ledger.db"
    with Ledger(db) as led:
        led.start_run(kind="host", command="echo secret", state="completed", exit_code=0)
    assert db.stat().st_mode & 0o777 == 0o600
    assert db.parent.stat().st_mode & 0o777 == 0o700
