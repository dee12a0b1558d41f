"""Deny and ask rules cannot be walked around by hiding the program in shell code.

The review's reproduction: a bare repository inside the workspace, and `git push`
(denied under strict, held for approval under build) hidden in `bash -c`, `eval`
or a variable. Real bwrap; the assertion is on the host side: the repository
received no branch.
"""

from __future__ import annotations

import shutil
import subprocess
import sys

import pytest

from tests.ringfence.pushrepo import branches, pushable_workspace

pytestmark = [pytest.mark.sandbox,
              pytest.mark.skipif(not shutil.which("git"), reason="needs git")]

CLI = [sys.executable, "-m", "ringfence"]
HIDDEN = ['bash -c "git push ./inrepo.git HEAD:refs/heads/b1"',
          'eval "git push ./inrepo.git HEAD:refs/heads/b1"',
          'g=git; $g push ./inrepo.git HEAD:refs/heads/b1',
          'sh -c "bash -c \\"git push ./inrepo.git HEAD:refs/heads/b1\\""']


@pytest.fixture
def ws(tmp_path):
    return pushable_workspace(tmp_path)


@pytest.mark.parametrize("command", HIDDEN)
@pytest.mark.parametrize("profile,status", [("strict", (75, 77)), ("build", (75,))])
def test_hidden_push_is_held_or_denied_and_nothing_is_pushed(ws, command, profile, status):
    path, env = ws
    r = subprocess.run([*CLI, "run", "-p", profile, "-c", command], cwd=path, env=env,
                       capture_output=True, text=True, timeout=60)
    assert r.returncode in status, r.stderr
    assert branches(path) == ""              # host side: nothing reached the repository


def test_visible_inline_shell_code_still_runs(ws):
    path, env = ws
    r = subprocess.run([*CLI, "run", "-p", "strict", "-c", 'bash -c "echo inner > out.txt"'],
                       cwd=path, env=env, capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    assert (path / "out.txt").read_text() == "inner\n"
