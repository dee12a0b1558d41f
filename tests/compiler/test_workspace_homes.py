"""Issue 21 attack review: no sandbox gets a workspace that is, or contains, a home.

* The account's real home (password database) is as much a home as ``$HOME``:
  a run with ``HOME`` pointing elsewhere and the workspace at the real home
  would leave it unmasked and writable (dotfiles, ~/.local/bin).
* Read-only is not enough: Observe with the workspace at ``$HOME`` (or its
  parent) shows the whole home, every secret the credential table does not name.

Both are refused (RF616, exit 125) through the real ``ringfence run``; every
export refuses the same (exit 2). Assertions are on the host side.
"""

from __future__ import annotations

import os
import pwd
import shutil
import subprocess
from pathlib import Path

import pytest

from .sandbox_util import CLI, make_box

pytestmark = [pytest.mark.sandbox,
              pytest.mark.skipif(shutil.which("bwrap") is None, reason="needs bubblewrap")]

SECRET = "RF21B-NOT-IN-THE-TABLE-5e1f"
PROFILES = ("observe", "build", "strict", "host-assisted")


@pytest.fixture
def box():
    b = make_box()
    (b.home / "notes").mkdir()
    (b.home / "notes" / "secret.txt").write_text(SECRET + "\n")
    yield b
    shutil.rmtree(b.root, ignore_errors=True)


def _real_home() -> Path:
    real = Path(pwd.getpwuid(os.getuid()).pw_dir)
    if not real.is_dir() or not os.access(real, os.W_OK) or str(real).startswith("/tmp"):
        pytest.skip("no writable account home here")
    return real


@pytest.mark.parametrize("profile", PROFILES)
def test_the_password_database_home_is_refused_as_a_workspace(box, profile):
    real = _real_home()
    planted = real / f".rf21b-written-{os.getpid()}"
    try:
        r = box.run(profile, "-c", f"echo pwned > {planted}; cat ~/.bashrc; exit 0",
                    workspace=real)
        assert not planted.exists(), r.stderr
        assert r.returncode == 125 and "RF616" in r.stderr, r.stderr
    finally:
        if planted.exists():
            planted.unlink()


@pytest.mark.parametrize("profile", PROFILES)
@pytest.mark.parametrize("where", ["home", "parent"])
def test_a_workspace_at_or_above_home_is_refused_even_read_only(box, profile, where):
    ws = box.home if where == "home" else box.root
    r = box.run(profile, "-c", f"cat {box.home}/notes/secret.txt; exit 0", workspace=ws)
    assert SECRET not in r.stdout
    assert r.returncode == 125 and "RF616" in r.stderr, r.stderr


@pytest.mark.parametrize("fmt", ["srt", "seatbelt", "claude-code", "bwrap", "json"])
def test_exports_refuse_a_home_workspace_read_only_too(box, fmt):
    for ws in (box.home, box.root):
        r = subprocess.run([*CLI, "profile", "compile", "observe", "--format", fmt, "-w",
                            str(ws)], env=box.env(), capture_output=True, text=True)
        assert r.returncode == 2 and "RF616" in r.stderr and r.stdout == "", (ws, r.stderr)


def test_the_real_home_is_refused_by_exports(box):
    real = _real_home()
    r = subprocess.run([*CLI, "profile", "compile", "build", "--format", "srt", "-w",
                        str(real)], env=box.env(), capture_output=True, text=True)
    assert r.returncode == 2 and "RF616" in r.stderr, r.stderr


def test_a_project_under_the_home_still_runs_in_observe(box):
    (box.home / "proj").mkdir()
    r = box.run("observe", "-c", "echo fine", workspace=box.home / "proj")
    assert r.returncode == 0 and "fine" in r.stdout, r.stderr
