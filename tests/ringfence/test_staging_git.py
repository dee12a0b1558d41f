"""git by git's own rules, attacked for real through ``ringfence run`` (issue 19).

Each test plants, from inside a Build sandbox, something the HOST's real git would
obey on its next plain command (a repository git discovers by its files, a redirect
through a link, a push URL into a repository with hooks, hidden edits), then runs
the host's own git and checks on the host side: the marker a planted
``core.fsmonitor`` or hook would create never appears, and hidden edits stay
visible. Run as root and as the unprivileged user (scripts/test-unprivileged.sh).
"""

from __future__ import annotations

import os
import shutil
import subprocess

import pytest

from tests.compiler.sandbox_util import INNER_PY, make_box

pytestmark = [
    pytest.mark.sandbox,
    pytest.mark.skipif(shutil.which("bwrap") is None or shutil.which("git") is None,
                       reason="bubblewrap and git are needed"),
]


@pytest.fixture
def box():
    b = make_box()
    b.marker = b.root / "MARKER"
    yield b
    shutil.rmtree(b.root, ignore_errors=True)


def run(box, body: str, profile: str = "build", workspace=None):
    path = box.root / f"s{len(os.listdir(box.root))}.sh"
    path.write_text("set -e\nTOOLING=$(dirname \"$PIP_CACHE_DIR\")\n" + body + "\n")
    return box.run(profile, "--", "bash", str(path), workspace=workspace)


def host_git(box, *args, cwd=None) -> subprocess.CompletedProcess:
    env = {"PATH": os.environ.get("PATH", ""), "HOME": str(box.home),
           "GIT_CONFIG_NOSYSTEM": "1", "GIT_AUTHOR_NAME": "h", "GIT_AUTHOR_EMAIL": "h@h",
           "GIT_COMMITTER_NAME": "h", "GIT_COMMITTER_EMAIL": "h@h"}
    return subprocess.run(["git", *args], cwd=cwd or box.ws, env=env, capture_output=True,
                          text=True, timeout=60)


def commit_all(box) -> None:
    host_git(box, "add", "README")
    assert host_git(box, "commit", "-qm", "init").returncode == 0


def fsmon(box, cfg: str) -> str:
    """Shell lines that make ``cfg`` a worktree config whose fsmonitor touches the marker."""
    return (f"git config -f {cfg} core.bare false; git config -f {cfg} core.worktree .; "
            f"git config -f {cfg} core.fsmonitor 'touch {box.marker}; false'")


def host_obeys_nothing(box, *dirs) -> None:
    for d in ("", "sub", *dirs):
        where = box.ws / d
        if where.is_dir():
            host_git(box, "status", cwd=where)
            host_git(box, "diff", cwd=where)
    assert not box.marker.exists()


def test_a_bare_layout_at_the_top_replacing_dot_git_is_held(box):
    commit_all(box)
    r = run(box, "cp -a .git/. .; rm -rf .git; " + fsmon(box, "config"))
    assert r.returncode == 0, r.stderr
    assert "held for review: .git" in r.stderr
    assert (box.ws / ".git").is_dir()                       # deleting it is held
    assert not (box.ws / "config").exists() and not (box.ws / "HEAD").exists()
    host_obeys_nothing(box)
    assert host_git(box, "log", "--format=%s").stdout == "init\n"


def test_a_nested_bare_layout_is_judged_as_a_repository(box):
    r = run(box, "mkdir -p vendor; git init -q --bare vendor/lib; " + fsmon(box, "vendor/lib/config"))
    assert r.returncode == 0, r.stderr
    assert "held for review: vendor/lib" in r.stderr
    host_obeys_nothing(box, "vendor", "vendor/lib")


def test_a_config_written_before_the_directory_became_a_repository(box):
    # run 1 writes a file called config in a plain dir (harmless data then) ...
    r = run(box, "mkdir -p v/lib; printf '[core]\\n\\tbare = false\\n\\tworktree = .\\n"
                 f"\\tfsmonitor = \"touch {box.marker}; false\"\\n' > v/lib/config")
    assert r.returncode == 0, r.stderr
    # ... run 2 adds HEAD, objects and refs: now git reads that config
    r = run(box, "cd v/lib; mkdir -p objects refs/heads; echo 'ref: refs/heads/main' > HEAD")
    assert r.returncode == 0, r.stderr
    assert "held for review: v/lib/HEAD" in r.stderr
    host_obeys_nothing(box, "v", "v/lib")


def test_a_gitfile_through_a_new_link_into_the_tooling_dir_is_held(box):
    r = run(box, ('git init -q --bare "$TOOLING/x.git"; '
                  + fsmon(box, '"$TOOLING/x.git/config"') + '; '
                  'ln -s "$TOOLING" lnk; mkdir -p w; echo "gitdir: ../lnk/x.git" > w/.git'))
    assert r.returncode == 0, r.stderr
    assert "held for review: lnk" in r.stderr
    assert "held for review: w/.git" in r.stderr
    assert not (box.ws / "w" / ".git").exists() and not (box.ws / "lnk").exists()
    host_obeys_nothing(box, "w")


def test_a_commondir_through_a_link_is_held(box):
    r = run(box, ('git init -q --bare "$TOOLING/c.git"; '
                  + fsmon(box, '"$TOOLING/c.git/config"') + '; '
                  'ln -s "$TOOLING/c.git" .git/cl; echo cl > .git/commondir'))
    assert r.returncode == 0, r.stderr
    assert "held for review: .git/commondir" in r.stderr
    assert not (box.ws / ".git" / "commondir").exists()
    host_obeys_nothing(box)


def test_a_commondir_through_an_inside_link_is_held(box):
    # the link stays inside the workspace, but git would follow it to a repository
    # the judge never saw as one
    r = run(box, ("mkdir -p data/x/objects data/x/refs; " + fsmon(box, "data/x/config") + "; "
                  "ln -s ../data/x .git/cl; echo cl > .git/commondir"))
    assert r.returncode == 0, r.stderr
    assert "held for review: .git/commondir" in r.stderr
    host_obeys_nothing(box)


def test_a_push_url_into_a_repository_with_hooks_is_held(box):
    commit_all(box)
    r = run(box, ('git init -q --bare "$TOOLING/p.git"; '
                  f"printf '#!/bin/sh\\ntouch {box.marker}\\n' > \"$TOOLING/p.git/hooks/pre-receive\"; "
                  'chmod +x "$TOOLING/p.git/hooks/pre-receive"; '
                  "git remote add origin https://example.invalid/r.git; "
                  'git config remote.origin.pushurl "$TOOLING/p.git"'))
    assert r.returncode == 0, r.stderr
    assert "held for review: .git/config (adds git config keys that can run programs: " \
           "remote.origin.pushurl)" in r.stderr
    host_git(box, "push", "-q", "origin", "HEAD:refs/heads/x")
    assert not box.marker.exists()


@pytest.mark.parametrize("flag", ("--assume-unchanged", "--skip-worktree"))
def test_hidden_edits_through_index_flags_and_exclude_are_held(box, flag):
    commit_all(box)
    r = run(box, (f"echo evil >> README; git update-index {flag} README; "
                  "echo 'import os' > conftest.py; echo conftest.py >> .git/info/exclude"))
    assert r.returncode == 0, r.stderr
    assert "held for review: .git/index" in r.stderr and "README" in r.stderr
    assert "held for review: .git/info/exclude" in r.stderr
    status = host_git(box, "status", "--porcelain").stdout
    assert " M README" in status and "?? conftest.py" in status, status
    assert "evil" in host_git(box, "diff").stdout


def test_plain_git_work_in_a_new_repository_is_still_applied(box):
    ws = box.root / "fresh"
    ws.mkdir()
    path = box.root / "plain.sh"
    path.write_text("set -e\ngit init -q -b main; git config user.email x@y; "
                    "git config user.name n; echo a > a; git add a; git commit -qm x; "
                    "git init -q --bare ../fresh/mirror.git; "
                    "git remote add m https://example.invalid/m.git\n")
    r = box.run("build", "--", "bash", str(path), workspace=ws)
    assert r.returncode == 0, r.stderr
    assert "RF641" not in r.stderr, r.stderr
    assert host_git(box, "log", "--format=%s", cwd=ws).stdout == "x\n"
    assert host_git(box, "status", "--porcelain", cwd=ws).stdout == "?? mirror.git/\n"


def test_replace_refs_and_a_rebase_todo_are_held(box):
    commit_all(box)
    r = run(box, ("fake=$(echo fake | git hash-object -w --stdin); "
                  "git update-ref refs/replace/$(git rev-parse HEAD:README) $fake; "
                  "mkdir -p .git/rebase-merge; "
                  f"echo 'exec touch {box.marker}' > .git/rebase-merge/git-rebase-todo"))
    assert r.returncode == 0, r.stderr
    assert "held for review: .git/refs/replace/" in r.stderr
    assert "held for review: .git/rebase-merge/git-rebase-todo" in r.stderr
    assert host_git(box, "cat-file", "-p", "HEAD:README").stdout == "hello\n"
    assert not (box.ws / ".git" / "rebase-merge" / "git-rebase-todo").exists()


def test_a_global_include_target_in_the_workspace_is_judged_as_config(box):
    (box.ws / "team.gitconfig").write_text("[user]\n\tname = t\n")
    (box.home / ".gitconfig").write_text(f"[include]\n\tpath = {box.ws}/team.gitconfig\n")
    r = run(box, f"printf '[core]\\n\\tfsmonitor = \"touch {box.marker}; false\"\\n' >> team.gitconfig")
    assert r.returncode == 0, r.stderr
    assert "held for review: team.gitconfig" in r.stderr
    host_obeys_nothing(box)


def test_a_hooks_path_through_the_workspaces_own_link_is_judged_where_it_leads(box):
    (box.ws / "tools" / "hooks").mkdir(parents=True)
    os.symlink("tools/hooks", box.ws / ".githooks")
    host_git(box, "config", "core.hooksPath", ".githooks")
    r = run(box, f"printf '#!/bin/sh\\ntouch {box.marker}\\n' > tools/hooks/pre-commit; "
                 "chmod +x tools/hooks/pre-commit")
    assert r.returncode == 0, r.stderr
    assert "held for review: tools/hooks/pre-commit" in r.stderr
    host_git(box, "commit", "-q", "--allow-empty", "-m", "h")
    assert not box.marker.exists()


FORGE_TREE = r'''
import hashlib, subprocess, sys
run = lambda *a, **k: subprocess.run(a, check=True, capture_output=True, text=True, **k).stdout
blob = run("git", "hash-object", "-w", "--stdin", input="evil\n").strip()
tree = bytes.fromhex(run("git", "mktree", input=f"100644 blob {blob}\tREADME\n").strip())
run("git", "write-tree")                     # a valid cache-tree in the index
d = open(".git/index", "rb").read()[:-20]
i = d.find(b"TREE")
size = int.from_bytes(d[i + 4:i + 8], "big")
ext = d[i + 8:i + 8 + size]
nl = ext.index(b"\n")
d = d[:i + 8] + ext[:nl + 1] + tree + ext[nl + 21:] + d[i + 8 + size:]
open(".git/index", "wb").write(d + hashlib.sha1(d).digest())
'''


def test_a_forged_cache_tree_never_reaches_the_hosts_commit(box):
    commit_all(box)
    (box.root / "forge.py").write_text(FORGE_TREE)
    r = run(box, f"{INNER_PY} {box.root}/forge.py")
    assert r.returncode == 0, r.stderr
    assert "README" not in host_git(box, "status", "--porcelain").stdout
    assert host_git(box, "commit", "-q", "--allow-empty", "-m", "h").returncode == 0
    assert host_git(box, "show", "HEAD:README").stdout == "hello\n"


FORGE_OBJECT = r'''
import os, subprocess, zlib
oid = subprocess.run(["git", "rev-parse", "HEAD:README"], check=True, capture_output=True,
                     text=True).stdout.strip()
path = f".git/objects/{oid[:2]}/{oid[2:]}"
os.chmod(path, 0o644)
open(path, "wb").write(zlib.compress(b"blob 5\0evil\n"))
os.makedirs(".git/objects/info/commit-graphs", exist_ok=True)
open(".git/objects/info/commit-graph", "wb").write(b"CGPH forged")
'''


def test_a_rewritten_object_and_a_forged_commit_graph_never_reach_the_host(box):
    commit_all(box)
    (box.root / "forge.py").write_text(FORGE_OBJECT)
    r = run(box, f"{INNER_PY} {box.root}/forge.py")
    assert r.returncode == 0, r.stderr
    assert "held for review: .git/objects/" in r.stderr and "rewrites an existing git " \
           "object" in r.stderr
    assert host_git(box, "cat-file", "-p", "HEAD:README").stdout == "hello\n"
    assert not (box.ws / ".git" / "objects" / "info" / "commit-graph").exists()
    assert host_git(box, "fsck").returncode == 0


def test_a_legacy_remote_file_pointing_at_a_hooked_repository_is_held(box):
    commit_all(box)
    r = run(box, ('git init -q --bare "$TOOLING/q.git"; '
                  f"printf '#!/bin/sh\\ntouch {box.marker}\\n' > \"$TOOLING/q.git/hooks/pre-receive\"; "
                  'chmod +x "$TOOLING/q.git/hooks/pre-receive"; mkdir -p .git/remotes; '
                  'printf "URL: %s\\nPush: HEAD:refs/heads/x\\n" "$TOOLING/q.git" > .git/remotes/up'))
    assert r.returncode == 0, r.stderr
    assert "held for review: .git/remotes/up" in r.stderr
    host_git(box, "push", "-q", "up")
    assert not box.marker.exists()
