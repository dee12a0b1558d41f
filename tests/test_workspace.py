"""rfcore.workspace: the workspace is the project (CLAUDE_PROJECT_DIR, git root, cwd)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from ringfence.rfcore.workspace import find_workspace

ROOT = Path(__file__).resolve().parents[1]


def test_git_root_from_a_subdirectory_and_a_gitfile(tmp_path):
    repo = tmp_path / "repo"
    (repo / "a" / "b").mkdir(parents=True)
    (repo / ".git").mkdir()
    env = {"HOME": str(tmp_path / "home")}
    assert find_workspace(str(repo / "a" / "b"), env) == (str(repo), "git root of the cwd")
    wt = tmp_path / "wt"
    (wt / "src").mkdir(parents=True)
    (wt / ".git").write_text("gitdir: /elsewhere/.git/worktrees/wt\n")   # a gitfile counts
    assert find_workspace(str(wt / "src"), env)[0] == str(wt)


def test_claude_project_dir_wins_when_it_holds_the_cwd(tmp_path):
    proj = tmp_path / "proj"
    (proj / "pkg" / ".git").mkdir(parents=True)          # a nested repository inside
    env = {"HOME": str(tmp_path / "home"), "CLAUDE_PROJECT_DIR": str(proj)}
    assert find_workspace(str(proj / "pkg"), env) == (str(proj), f"CLAUDE_PROJECT_DIR={proj}")
    elsewhere = tmp_path / "other"
    elsewhere.mkdir()
    ws, why = find_workspace(str(elsewhere), env)
    assert ws == str(elsewhere) and why.startswith("cwd (the cwd is outside CLAUDE_PROJECT_DIR")


def test_cwd_without_a_repository_and_never_home_or_root(tmp_path):
    plain = tmp_path / "plain"
    plain.mkdir()
    assert find_workspace(str(plain), {"HOME": str(tmp_path / "h")}) == (str(plain), "cwd")
    home = tmp_path / "home"
    (home / ".git").mkdir(parents=True)                  # a dotfiles repository in ~
    (home / "notes").mkdir()
    ws, why = find_workspace(str(home / "notes"), {"HOME": str(home)})
    assert ws == str(home / "notes") and "home directory" in why
    ws, why = find_workspace(str(home / "notes"), {"HOME": str(home), "CLAUDE_PROJECT_DIR": "/"})
    assert ws == str(home / "notes")
    assert find_workspace("/x", {}, explicit=str(plain)) == (str(plain), "--workspace")


def test_profile_show_names_the_rule(tmp_path):
    repo = tmp_path / "repo"
    (repo / "sub").mkdir(parents=True)
    (repo / ".git").mkdir()
    env = dict(os.environ, PYTHONPATH=str(ROOT), HOME=str(tmp_path / "h"),
               XDG_CONFIG_HOME=str(tmp_path / "cfg"), RINGFENCE_HOME=str(tmp_path / "s"))
    env.pop("CLAUDE_PROJECT_DIR", None)
    env.pop("RINGFENCE_PROFILE", None)
    r = subprocess.run([sys.executable, "-m", "ringfence", "profile", "show", "--json"],
                       cwd=repo / "sub", env=env, capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["workspace"] == {"path": str(repo), "why": "git root of the cwd"}


@pytest.mark.sandbox
def test_git_commit_from_a_subdirectory_of_the_repository(tmp_path):
    """Issue 13: run from repo/sub, the workspace is the repository, and the command
    still starts in sub: `git add` finds its path and `git commit` can write
    .git/index.lock."""
    base = Path(tempfile.mkdtemp(prefix="rf-ws-", dir="/var/tmp"))   # not the private /tmp
    try:
        repo = base / "repo"
        (repo / "sub").mkdir(parents=True)
        env = dict(os.environ, PYTHONPATH=str(ROOT), HOME=str(base / "home"),
                   XDG_CONFIG_HOME=str(base / "cfg"), RINGFENCE_HOME=str(base / "state"),
                   GIT_CONFIG_NOSYSTEM="1")
        env.pop("CLAUDE_PROJECT_DIR", None)
        env.pop("RINGFENCE_PROFILE", None)
        subprocess.run(["git", "init", "-q", str(repo)], check=True, env=env)
        for key, value in (("user.name", "a"), ("user.email", "a@b")):   # env is cleared inside
            subprocess.run(["git", "-C", str(repo), "config", key, value], check=True, env=env)
        (repo / "sub" / "f.txt").write_text("x\n")

        def rf(*args):
            return subprocess.run([sys.executable, "-m", "ringfence", "run", "--", *args],
                                  cwd=repo / "sub", env=env, capture_output=True, text=True,
                                  timeout=120)
        add = rf("git", "add", "f.txt")
        assert add.returncode == 0, add.stderr
        commit = rf("git", "commit", "-qm", "from sub")
        assert commit.returncode == 0, commit.stderr
        log = subprocess.run(["git", "-C", str(repo), "log", "--format=%s", "--name-only"],
                             capture_output=True, text=True, env=env)
        assert log.stdout.split() == ["from", "sub", "sub/f.txt"]
    finally:
        shutil.rmtree(base, ignore_errors=True)
