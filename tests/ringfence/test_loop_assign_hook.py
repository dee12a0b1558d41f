"""A loop variable, `export NAME` and the assigning builtins are assignments
(issue 20b item 2), through the real hook without --wrap (an allow runs the
command on the machine). Where the hook would allow, the command runs as Claude
Code would run it, and the marker the planted program would create must not exist.
"""

from __future__ import annotations

import os
import subprocess

import pytest

from tests.ringfence.test_host_reads_attack import decide, env  # noqa: F401  (fixture)

GIT_ID = ["-c", "user.email=a@b", "-c", "user.name=a"]


@pytest.fixture
def ws(tmp_path):
    ws = tmp_path / "proj"
    (ws / "bin").mkdir(parents=True)
    (tmp_path / "home").mkdir()
    mark = tmp_path / "MARK"
    for name in ("ls", "x", "pager"):
        p = ws / "bin" / name
        p.write_text(f"#!/bin/sh\ntouch {mark}\n")
        p.chmod(0o755)
    subprocess.run(["git", "init", "-q", str(ws)], check=True)
    (ws / "f").write_text("one\n")
    subprocess.run(["git", *GIT_ID, "add", "f"], cwd=ws, check=True)
    subprocess.run(["git", *GIT_ID, "commit", "-qm", "one"], cwd=ws, check=True)
    (ws / "f").write_text("two\n")
    return ws


ATTACKS = (
    "for PATH in ./bin; do ls; done",
    "for PATH in ./bin; do export PATH; ls; done",
    "for GIT_EXTERNAL_DIFF in ./bin/x; do export GIT_EXTERNAL_DIFF; git diff; done",
    "for GIT_EXTERNAL_DIFF in ./bin/x; do git diff; done",
    "for PAGER in ./bin/pager; do export PAGER; git -p log; done",
    "select PATH in ./bin; do ls; break; done </dev/null",
    "for LD_PRELOAD in ./x.so; do ls; done",
    "for BASH_ENV in ./bin/x; do export BASH_ENV; ls; done",
    "for GIT_CONFIG_GLOBAL in ./c; do git status; done",
    "for GIT_DIR in ./.git; do git status; done",
    "for HOME in ./h; do git status; done",
    "for XDG_CONFIG_HOME in ./c; do ls; done",
    "export GIT_EXTERNAL_DIFF; git diff",
    "export PATH; ls",
    "declare -x PATH; ls",
    'export "PATH=./bin"; ls',
    "printf -v XDG_STATE_HOME %s ./s",
    "read XDG_STATE_HOME </dev/null",
    "printf -v PATH %s ./bin; ls",
    "let PATH=1; ls",
    ": ${PATH:=./bin}; ls",
)


@pytest.mark.parametrize("command", ATTACKS)
def test_a_loop_or_builtin_assignment_is_never_allowed(env, ws, command):
    d = decide(env, command, ws)
    if d == "allow":
        subprocess.run(["bash", "-c", command], cwd=ws, capture_output=True, timeout=30,
                       env={"PATH": os.environ["PATH"], "HOME": env["HOME"]})
    assert d != "allow", command
    assert not (ws.parent / "MARK").exists()


def test_the_persistent_shell_two_step_asks_at_the_first_step(env, ws):
    """Claude's shell keeps a loop's last value: the loop alone must already ask."""
    assert decide(env, "for PATH in ./bin; do :; done", ws) != "allow"
    assert decide(env, "for GIT_DIR in ../x; do :; done", ws) != "allow"


def test_an_ordinary_loop_is_still_allowed(env, ws):
    assert decide(env, "for f in f; do wc -l $f; done", ws) in ("allow", "ask")
    assert decide(env, "for f in f bin; do ls; done", ws) == "allow"
