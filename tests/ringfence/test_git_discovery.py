"""git's discovery rule, redirect resolution, URLs and index flags (no sandbox)."""

from __future__ import annotations

import os
import subprocess

import pytest

from ringfence.staging.git.keys import key_can_run_program, url_is_network
from ringfence.staging.git.discovery import View, resolve
from ringfence.staging.git.repo_judges import judge_exclude, judge_index


def _tree(tmp_path):
    ws, up = tmp_path / "ws", tmp_path / "up"
    (ws / "lib" / "objects").mkdir(parents=True)
    (ws / "lib" / "refs").mkdir()
    (ws / "real").mkdir()
    (up / "lib").mkdir(parents=True)
    (up / "lib" / "HEAD").write_text("ref: refs/heads/main\n")
    os.symlink("real", up / "lnk")
    (up / "gone").mkdir()
    os.mknod(up / "gone" / "x", 0o20000 | 0o600) if os.getuid() == 0 else None
    return str(ws), str(up)


def test_a_bare_layout_is_a_repository_only_after_the_run(tmp_path):
    ws, up = _tree(tmp_path)
    post, pre = View(up, ws), View(None, ws)
    assert post.is_git_dir("lib") and not pre.is_git_dir("lib")
    assert post.git_root("lib/objects/ab") == "lib" and pre.git_root("lib/objects") is None
    assert not post.is_git_dir("") and not post.is_git_dir("real")


def test_redirects_never_follow_a_link(tmp_path):
    ws, up = _tree(tmp_path)
    v = View(up, ws)
    assert resolve(v, "a", "../real") == ("real", None)
    assert "symbolic link" in resolve(v, "", "lnk/x")[1]
    assert "outside the workspace" in resolve(v, "", "../../etc")[1]
    assert "outside the workspace" in resolve(v, "", "/etc/passwd")[1]
    assert resolve(v, "", ws + "/real") == ("real", None)
    assert v.realpath("", "lnk") == ("real", None)
    assert v.realpath("", "/etc") == (None, None)


@pytest.mark.parametrize("url,net", [
    ("https://h/r.git", True), ("git@h:r.git", True), ("ssh://h/r", True),
    ("/srv/r.git", False), ("../r", False), ("file:///r", False), ("ext::sh -c x", False),
    ("fd::3", False), ("hg::https://h", False), ("foo://h", False), ("-oProxy=x:y", False),
])
def test_which_urls_run_nothing(url, net):
    assert url_is_network(url) is net
    assert key_can_run_program("remote.o.pushurl", url) is not net
    assert key_can_run_program("remote.o.receivepack", "git-receive-pack")
    assert not key_can_run_program("branch.main.remote", "origin")
    assert not key_can_run_program("branch.main.remote", ".")


def test_index_flags_and_excludes(tmp_path):
    env = {"PATH": os.environ.get("PATH", ""), "HOME": str(tmp_path)}
    repo = tmp_path / "r"
    subprocess.run(["git", "init", "-q", str(repo)], check=True, env=env)
    (repo / "a").write_text("a\n")
    (repo / "b").write_text("b\n")
    subprocess.run(["git", "add", "a", "b"], cwd=repo, check=True, env=env)
    before = (repo / ".git" / "index").read_bytes()
    subprocess.run(["git", "update-index", "--assume-unchanged", "a"], cwd=repo, check=True,
                   env=env)
    subprocess.run(["git", "update-index", "--skip-worktree", "b"], cwd=repo, check=True,
                   env=env)
    after = (repo / ".git" / "index").read_bytes()
    why = judge_index(after, before)
    assert "assume-unchanged a" in why and "skip-worktree b" in why
    assert judge_index(after, after) is None and judge_index(before, None) is None
    assert "index ringfence cannot read" in judge_index(b"DIRC\0\0\0\2\0\0\0\5", None)
    assert judge_exclude("info/exclude", "# c\nconftest.py\n", "# c\n") == \
        "hides files from git status: conftest.py"
    assert judge_exclude("info/exclude", "# c\n# more\n", "# c\n") is None


def test_the_registry_remembers_a_git_root_only_for_the_views_it_was_found_in(tmp_path):
    """Registry.git_root is remembered per path (settle asks twice per entry), but a
    new pair of views (the next plan, a later lookup without the stage) asks again:
    a stale answer would judge a bare layout's config as plain data."""
    from ringfence.staging.judges import Registry

    ws, up = _tree(tmp_path)
    reg = Registry(ws)
    reg.post, reg.pre = View(up, ws), View(None, ws)
    assert reg.git_root("lib/config") == "lib"
    assert reg.lookup("lib/config")[0] == "git-config"
    reg.post, reg.pre = View(None, ws), View(None, ws)    # the stage is gone
    assert reg.git_root("lib/config") is None
    assert reg.lookup("lib/config") is None


def test_prewarm_loads_what_settling_needs_in_a_fresh_process():
    """The background load a staged run starts while its command runs
    (staging/settle.py prewarm): afterwards the judges' tables are built."""
    import sys

    code = ("import sys; from ringfence.staging.settle import prewarm; "
            "assert 'ringfence.staging.judges' not in sys.modules; prewarm(); "
            "from ringfence.staging import judges; assert judges._TABLES; "
            "assert 'ringfence.staging.git.repo_judges' in sys.modules; print('ok')")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 0 and out.stdout.strip() == "ok", out.stderr
