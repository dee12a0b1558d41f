"""Change sets in the ledger: compact storage, the full list back, notes as JSON
objects (never a Python repr), and `ledger show`'s summary by directory."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from ringfence.ledger import changeset
from ringfence.ledger.changeset import pack_changes, summarize, unpack_changes
from ringfence.compiler.spec import Note
from ringfence.ledger.store import Ledger

ROOT = Path(__file__).resolve().parents[2]
SITE = ".venv/lib/python3.11/site-packages"


def venv_paths() -> list[str]:
    """1,685 paths shaped like a venv install's (12 packages, nested dirs)."""
    out = []
    pkgs = [f"pkg{i:02d}" for i in range(12)]
    for n in range(1685):
        pkg = pkgs[n % 12]
        sub = ("", "sub/", "sub/deeper/", "tests/")[(n // 12) % 4]
        out.append(f"{SITE}/{pkg}/{sub}module_{n:04d}.py")
    return out


def test_pack_round_trips_and_is_compact():
    paths = venv_paths()
    changes = {"created": paths, "modified": ["README"], "deleted": [], "capped": False,
               "unreadable_dirs": 0}
    packed = pack_changes(changes)
    assert unpack_changes(json.loads(json.dumps(packed))) == {**changes,
                                                            "created": sorted(paths)}
    before = len(json.dumps(changes, sort_keys=True))
    after = len(json.dumps(packed, sort_keys=True))
    # every path repeats ".venv/lib/python3.11/site-packages/pkgNN/sub/deeper/"
    assert (before, after) == (108_326, 33_021)


def test_the_ledger_stores_packed_and_reads_the_full_list(tmp_path):
    paths = venv_paths()
    with Ledger(tmp_path / "l.db") as led:
        rid = led.start_run(kind="sandbox", command="pip install x", state="running")
        led.append_event(rid, "completed", exit_code=0,
                         changes={"created": paths, "modified": [], "deleted": []})
        raw = led.conn.execute("SELECT changes FROM run_events WHERE run_id=? AND seq=2",
                               (rid,)).fetchone()[0]
        rec = led.get_run(rid)
        exported = [r for r in led.export() if r["id"] == rid][0]
    assert json.loads(raw)["created"]["by_dir"][0] == [f"{SITE}/pkg00",
                                                      [f"module_{n:04d}.py" for n in
                                                       range(0, 1685, 48)]]
    assert rec.result("changes")["created"] == sorted(paths)
    assert exported["changes"]["created"] == sorted(paths)


def test_notes_are_stored_as_json_objects(tmp_path):
    note = Note("RF604", "the sandboxed command created .envrc")
    with Ledger(tmp_path / "l.db") as led:
        rid = led.start_run(kind="sandbox", command="touch .envrc", state="running")
        led.append_event(rid, "completed", exit_code=0, degradations=[note],
                         changes={"created": [".envrc"], "protected_created": [note]})
        raw = dict(led.conn.execute("SELECT changes, degradations FROM run_events "
                                    "WHERE run_id=? AND seq=2", (rid,)).fetchone())
    want = {"code": "RF604", "message": "the sandboxed command created .envrc"}
    assert json.loads(raw["changes"])["protected_created"] == [want]
    assert json.loads(raw["degradations"]) == [want]
    assert "Note(" not in raw["changes"] + raw["degradations"]


def test_old_repr_notes_read_back_as_objects():
    old = {"created": [], "protected_created": [
        "Note(code='RF604', message=\"created .envrc (it's quarantined)\")", "plain text"]}
    assert unpack_changes(old)["protected_created"] == [
        {"code": "RF604", "message": "created .envrc (it's quarantined)"},
        {"message": "plain text"}]
    # parsed as literals, never evaluated
    assert unpack_changes({"protected_created": ["Note(code=__import__('os').getpid())"]}
                          )["protected_created"] == [
        {"message": "Note(code=__import__('os').getpid())"}]


def test_the_governor_passes_notes_not_their_repr(tmp_path):
    from ringfence.session import in_sandbox as governor

    # protected_created (RF604 notes) is gone with the journal (issue 12): a staged
    # run's record carries its held changes as JSON objects and is stored as is.
    record = {"created": [".envrc"], "modified": [], "deleted": [], "capped": False,
              "staged": True, "stage": "st_x", "not_applied": [],
              "held": [{"path": ".envrc", "op": "move", "why": "direnv runs it on cd"}]}

    class Result:
        changes = record

    ws = tmp_path / "ws"
    ws.mkdir()
    assert governor._changes(None, str(ws), Result()) == record
    assert governor._jsonable((Note("RF641", "held"),)) == [{"code": "RF641", "message": "held"}]


def test_summary_groups_by_directory_tree():
    rows, more, more_groups = summarize(venv_paths(), top=8)
    assert rows[0] == (f"{SITE}/pkg00/", 141, 4)
    assert len(rows) == 8 and [r[1] for r in rows] == [141] * 5 + [140] * 3
    assert (more, more_groups) == (1685 - 5 * 141 - 3 * 140, 4)
    assert summarize(["a.txt", "b/c.txt"]) == ([("./", 2, 2)], 0, 0)
    assert summarize(["x/y/1", "x/y/2", "x/y/z/3"]) == ([("x/y/", 3, 2)], 0, 0)
    one_tree = [f"{SITE}/x/{i}.py" for i in range(30)]
    assert summarize(one_tree) == ([(f"{SITE}/x/", 30, 1)], 0, 0)


def test_ledger_show_summarizes_and_json_keeps_every_path(tmp_path):
    env = dict(os.environ, PYTHONPATH=str(ROOT), COLUMNS="200", NO_COLOR="1",
               RINGFENCE_HOME=str(tmp_path / "state"))
    paths = venv_paths()
    with Ledger(env=env) as led:
        rid = led.start_run(kind="sandbox", command="pip install x", state="running")
        led.append_event(rid, "completed", exit_code=0,
                         changes={"created": paths, "modified": ["setup.cfg"], "deleted": []})
    cli = [sys.executable, "-m", "ringfence"]
    shown = subprocess.run([*cli, "ledger", "show", rid], env=env, capture_output=True,
                           text=True, timeout=60)
    assert shown.returncode == 0, shown.stderr
    out = shown.stdout
    assert "+ created" in out and "1,685 paths in 48 directories" in out
    assert f"141 under {SITE}/pkg00/ (4 dirs)" in out
    assert "… and 560 more under 4 more directories" in out
    assert "~ modified" in out and "setup.cfg" in out
    assert "module_0001.py" not in out
    assert len(out.splitlines()) < 60
    full = subprocess.run([*cli, "ledger", "export", "--jsonl"], env=env, capture_output=True,
                          text=True, timeout=60)
    [record] = [json.loads(line) for line in full.stdout.splitlines()]
    assert record["changes"]["created"] == sorted(paths)
