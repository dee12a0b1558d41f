"""Property: whatever the host's real git would read as config from any directory
of the workspace, after a stage of random git directories, gitfiles, commondirs
and links is planned and applied, never carries a key the sandbox planted.

Each example builds a stage (an upper dir over a workspace that is a real
repository, no sandbox needed: the planner and the apply are what is under test)
out of: bare layouts (HEAD, objects/, refs/, config), gitfiles, ``commondir``
files, plain ``config`` files and symbolic links (inside, and out to a directory
holding a repository, like the tooling dir). Every ``config`` the stage holds
carries ``core.fsmonitor = EVIL``. Then, in every directory of the workspace,
``git config --get-all core.fsmonitor`` (the host's own git, discovery stopped at
the workspace's parent) must not print EVIL: what git reads is either unchanged
or was held.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ringfence.staging.apply import apply_plan, plan
from ringfence.staging.settle import registry_for

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="git is needed")

DIRS = ("", "a", "a/b", "v", "v/lib", ".git", ".git/x", ".git/worktrees/w")
TARGETS = ("..", "../..", "a", "../a", "v/lib", "../v/lib", ".git", "../.git", "lnk",
           "../lnk", "x.git", "../x.git", "OUT", "OUT/r.git")
EVIL = "[core]\n\tbare = false\n\tworktree = .\n\tfsmonitor = EVIL\n"

op = st.tuples(st.sampled_from(("bare", "gitfile", "commondir", "config", "link")),
               st.sampled_from(DIRS), st.sampled_from(TARGETS))


def _env(home: str) -> dict:
    return {"PATH": os.environ.get("PATH", ""), "HOME": home, "GIT_CONFIG_NOSYSTEM": "1",
            "LANG": "C"}


def _write(path: str, text: str) -> None:
    os.makedirs(os.path.dirname(path), exist_ok=True)
    if os.path.lexists(path) and os.path.isdir(path) and not os.path.islink(path):
        return
    if os.path.lexists(path):
        os.unlink(path)
    with open(path, "w") as fh:
        fh.write(text)


def _target(root: str, t: str) -> str:
    return t.replace("OUT", os.path.join(root, "out")) if t.startswith("OUT") else t


def _apply_op(root: str, upper: str, kind: str, d: str, t: str) -> None:
    base = os.path.join(upper, d) if d else upper
    try:
        os.makedirs(base, exist_ok=True)
        if os.path.islink(base):
            return
        _one(root, base, kind, t)
    except OSError:          # a file or link already where this op needs a dir
        pass


def _one(root: str, base: str, kind: str, t: str) -> None:
    if kind == "bare":
        _write(os.path.join(base, "HEAD"), "ref: refs/heads/main\n")
        os.makedirs(os.path.join(base, "objects"), exist_ok=True)
        os.makedirs(os.path.join(base, "refs", "heads"), exist_ok=True)
        _write(os.path.join(base, "config"), EVIL)
    elif kind == "gitfile":
        _write(os.path.join(base, ".git"), f"gitdir: {_target(root, t)}\n")
    elif kind == "commondir":
        _write(os.path.join(base, "commondir"), _target(root, t) + "\n")
    elif kind == "config":
        _write(os.path.join(base, "config"), EVIL)
    else:
        link = os.path.join(base, "lnk")
        if not os.path.lexists(link):
            os.symlink(_target(root, t), link)


def _dirs(ws: str) -> list[str]:
    out = []
    for dirpath, dirnames, _ in os.walk(ws):          # never follows links
        out.append(dirpath)
    return out


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(op, min_size=1, max_size=6))
def test_git_never_reads_a_planted_config(ops):
    root = tempfile.mkdtemp(prefix="rf-prop-", dir="/var/tmp")
    try:
        ws, upper, home = (os.path.join(root, n) for n in ("ws", "upper", "home"))
        for d in (ws, upper, home):
            os.mkdir(d)
        env = _env(home)
        subprocess.run(["git", "init", "-q", ws], check=True, env=env)
        # outside the workspace: a repository the sandbox could write (the tooling dir)
        subprocess.run(["git", "init", "-q", "--bare", os.path.join(root, "out", "r.git")],
                       check=True, env=env)
        with open(os.path.join(root, "out", "r.git", "config"), "a") as fh:
            fh.write(EVIL)
        for kind, d, t in ops:
            _apply_op(root, upper, kind, d, t)
        reg = registry_for(ws, None, {"HOME": home})
        p = plan(upper, ws, reg)
        apply_plan(p, upper, ws)
        genv = {**env, "GIT_CEILING_DIRECTORIES": root}
        for d in _dirs(ws):
            r = subprocess.run(["git", "config", "--get-all", "core.fsmonitor"], cwd=d,
                               env=genv, capture_output=True, text=True, timeout=30)
            assert "EVIL" not in r.stdout, (ops, os.path.relpath(d, ws),
                                            [(a.op, a.path, a.held) for a in p.actions])
    finally:
        shutil.rmtree(root, ignore_errors=True)
