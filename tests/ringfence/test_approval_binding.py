"""An approval runs where it was shown (issue 10 §5), attacked through the real CLI.

A host request `rm -rf build` is held in `ws/sub`. A sandboxed run then swaps the
directory for a symlink (`mv sub sub.old; ln -s <outside> sub`). Resolving the
recorded cwd again would make the approved command delete `<outside>/build`.
An approval binds to the command, the identity (st_dev:st_ino) of its working
directory, and the profile: `approve` refuses (exit 2) and nothing runs.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess

import pytest

from tests.compiler.sandbox_util import CLI

pytestmark = [
    pytest.mark.sandbox,
    pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap is not installed"),
]


def cli(box, *args, cwd=None) -> subprocess.CompletedProcess:
    return subprocess.run([*CLI, *args], cwd=cwd or box.ws, capture_output=True, text=True,
                          env=box.env(COLUMNS="200", NO_COLOR="1"), timeout=120)


def hold_rm(box) -> str:
    (box.ws / "sub" / "build").mkdir()
    (box.outside / "build").mkdir()
    (box.outside / "build" / "precious").write_text("keep me\n")
    r = cli(box, "run", "--host", "-p", "build", "-w", str(box.ws), "-c", "rm -rf build",
            cwd=box.ws / "sub")
    assert r.returncode == 75, r.stderr
    pending = json.loads(cli(box, "approvals", "list", "--json").stdout)
    assert [p["command"] for p in pending] == ["rm -rf build"]
    assert pending[0]["cwd"] == str(box.ws / "sub")
    return pending[0]["id"]


def test_approve_refuses_a_cwd_swapped_for_a_symlink(box):
    ap_id = hold_rm(box)
    # Swapped on the host (a sandboxed run's new link out of the workspace is held
    # since issue 19, so it could not do this itself): approve must notice.
    os.rename(box.ws / "sub", box.ws / "sub.old")
    os.symlink(box.outside, box.ws / "sub")
    assert (box.ws / "sub").is_symlink()
    r = cli(box, "approve", ap_id)
    assert r.returncode == 2, r.stdout + r.stderr
    assert "changed" in r.stderr and "nothing was run" in r.stderr
    assert "Traceback" not in r.stderr
    assert (box.outside / "build" / "precious").read_text() == "keep me\n"
    assert (box.ws / "sub.old" / "build").is_dir()
    # Still pending: the person can look again and deny it.
    pending = json.loads(cli(box, "approvals", "list", "--json").stdout)
    assert [p["id"] for p in pending] == [ap_id]


def test_approve_refuses_a_cwd_replaced_by_another_directory(box):
    ap_id = hold_rm(box)
    swap = cli(box, "run", "-p", "build", "-w", str(box.ws), "-c",
               "mv sub sub.old && mkdir -p sub/build")
    assert swap.returncode == 0, swap.stderr
    r = cli(box, "approve", ap_id)
    assert r.returncode == 2 and "changed" in r.stderr, r.stderr
    assert (box.ws / "sub" / "build").is_dir() and (box.ws / "sub.old" / "build").is_dir()


def test_approve_runs_in_the_unchanged_directory_without_the_terminal(box):
    ap_id = hold_rm(box)
    r = cli(box, "approve", ap_id)
    assert r.returncode == 0, r.stderr
    assert not (box.ws / "sub" / "build").exists()
    assert (box.outside / "build" / "precious").read_text() == "keep me\n"


def test_approvals_list_shows_the_working_directory(box):
    ap_id = hold_rm(box)
    r = cli(box, "approvals", "list")
    assert r.returncode == 0, r.stderr
    lines = [ln.strip() for ln in r.stdout.splitlines()]
    assert f"cwd     {box.ws / 'sub'}" in lines, r.stdout
    doc = json.loads(cli(box, "approvals", "list", "--json").stdout)[0]
    assert doc["id"] == ap_id and doc["cwd_identity"].count(":") == 1


def test_approve_refuses_when_the_profile_changed(box):
    prof = box.root / "mine.toml"
    prof.write_text('extends = "build"\n')
    r = cli(box, "run", "--host", "-p", str(prof), "-w", str(box.ws), "--", "touch", "made")
    assert r.returncode == 75, r.stderr
    ap_id = json.loads(cli(box, "approvals", "list", "--json").stdout)[0]["id"]
    prof.write_text('extends = "build"\n[commands]\nallow = ["touch *"]\n')
    r = cli(box, "approve", ap_id)
    assert r.returncode == 2 and "changed since" in r.stderr, r.stderr
    assert not (box.ws / "made").exists()
    prof.write_text('extends = "build"\n')           # back to what the person saw
    assert cli(box, "approve", ap_id).returncode == 0
    assert (box.ws / "made").exists()


def test_approve_refuses_a_request_without_a_recorded_identity(box):
    import sqlite3

    ap_id = hold_rm(box)
    db = sqlite3.connect(box.state / "ledger.db")
    with db:
        db.execute("UPDATE approvals SET cwd_id=NULL WHERE id=?", (ap_id,))
    db.close()
    r = cli(box, "approve", ap_id)
    assert r.returncode == 2 and "identity was not recorded" in r.stderr, r.stderr
    assert (box.ws / "sub" / "build").is_dir()
