"""A profile path that is not a regular file gets a precise error, never a hang
(a FIFO, a device) and never an internal error (a symlink loop)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from ringfence.profiles.load import load_profile
from ringfence.rfcore.errors import ProfileError

CLI = [sys.executable, "-m", "ringfence"]


@pytest.fixture
def specials(tmp_path):
    fifo = tmp_path / "fifo.toml"
    os.mkfifo(fifo)
    loop = tmp_path / "loop.toml"
    os.symlink(loop, loop)
    return {"fifo": (fifo, "is not a regular file"),
            "device": ("/dev/zero", "is not a regular file"),
            "loop": (loop, "symbolic link loop")}


@pytest.mark.parametrize("kind", ["fifo", "device", "loop"])
def test_load_refuses(specials, kind):
    path, message = specials[kind]
    with pytest.raises(ProfileError, match=message):
        load_profile(str(path))


@pytest.mark.parametrize("kind", ["fifo", "device", "loop"])
def test_cli_lint_and_run_refuse_without_hanging(specials, kind, tmp_path):
    path, message = specials[kind]
    lint = subprocess.run([*CLI, "profile", "lint", str(path)], capture_output=True, text=True,
                          timeout=30)
    assert lint.returncode == 1 and message in lint.stdout + lint.stderr
    env = dict(os.environ, RINGFENCE_HOME=str(tmp_path / "state"))
    run = subprocess.run([*CLI, "run", "-p", str(path), "--", "true"], capture_output=True,
                         text=True, timeout=30, cwd=tmp_path, env=env)
    assert run.returncode == 125 and message in run.stderr
    assert "Traceback" not in run.stderr + lint.stderr + lint.stdout
