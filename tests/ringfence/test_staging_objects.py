"""Loose git objects take a shortcut in settle (ringfence/staging/loose.py): what must NOT.

Each test writes, from inside a Build sandbox, something that sits where loose
objects sit (``.git/objects/XX/...``) or beside them, next to real objects so the
directory's shortcut is in play, then checks on the host side: the link, FIFO,
planted repository or alternates file never reaches the workspace, the setuid bit
is gone, a rewritten object keeps its bytes, and the host's git sees the commits
it should. Run as root and as the unprivileged user (scripts/test-unprivileged.sh).
"""

from __future__ import annotations

import os
import shutil
import stat

import pytest

from tests.compiler.sandbox_util import INNER_PY
from tests.ringfence.test_staging_git import box, commit_all, host_git, run  # noqa: F401 - box is a fixture

pytestmark = [
    pytest.mark.sandbox,
    pytest.mark.skipif(shutil.which("bwrap") is None or shutil.which("git") is None,
                       reason="bubblewrap and git are needed"),
]

FAKE = "ab" + "c" * 38                    # an object id no commit below produces
COMMIT = ("git -c user.name=n -c user.email=e@x -c commit.gpgsign=false commit -q -m c")


def fresh_ws(box):
    ws = box.root / "fresh"
    ws.mkdir()
    for i in range(20):
        (ws / f"f{i}.txt").write_text(f"file {i}\n")
    return ws


NEW_REPO = f"git init -q -b main; git add -A; {COMMIT}; "


@pytest.mark.parametrize("new_repo", [True, False], ids=["new-repo", "existing-repo"])
def test_a_commits_loose_objects_are_applied_whole(box, new_repo):
    ws = fresh_ws(box) if new_repo else box.ws
    if not new_repo:
        for i in range(20):
            (ws / f"f{i}.txt").write_text(f"file {i}\n")
    r = run(box, NEW_REPO if new_repo else f"git add -A; {COMMIT}", workspace=ws)
    assert r.returncode == 0, r.stderr
    assert "RF641" not in r.stderr, r.stderr
    assert host_git(box, "cat-file", "-p", "HEAD:f7.txt", cwd=ws).stdout == "file 7\n"
    assert host_git(box, "fsck", "--strict", cwd=ws).returncode == 0


@pytest.mark.parametrize("new_repo", [True, False], ids=["new-repo", "existing-repo"])
def test_a_link_and_a_fifo_named_as_objects_are_held(box, new_repo):
    ws = fresh_ws(box) if new_repo else box.ws
    body = (NEW_REPO if new_repo else f"echo x > f.txt; git add -A; {COMMIT}; ") + (
        f"mkdir -p .git/objects/ab .git/objects/cd; "
        f"ln -s {box.outside}/file.txt .git/objects/ab/{FAKE[2:]}; "
        f"mkfifo .git/objects/cd/{FAKE[2:]}")
    r = run(box, body, workspace=ws)
    assert r.returncode == 0, r.stderr
    assert f"held for review: .git/objects/ab/{FAKE[2:]}" in r.stderr, r.stderr
    assert f"held for review: .git/objects/cd/{FAKE[2:]}" in r.stderr, r.stderr
    objects = ws / ".git" / "objects"
    assert not os.path.lexists(objects / "ab" / FAKE[2:])
    assert not os.path.lexists(objects / "cd" / FAKE[2:])
    # the host's git reads the commit's own objects, never hangs on a FIFO
    assert host_git(box, "log", "--format=%s", cwd=ws).stdout == "c\n"


def test_a_setuid_file_named_as_an_object_loses_the_bit(box):
    r = run(box, f"echo x > f.txt; git add -A; {COMMIT}; mkdir -p .git/objects/ab; "
                 f"printf '#!/bin/sh\\ntouch {box.marker}\\n' > .git/objects/ab/{FAKE[2:]}; "
                 f"chmod 755 .git/objects/ab/{FAKE[2:]}; "
                 f"chmod 6755 .git/objects/ab/{FAKE[2:]} || echo refused")
    assert r.returncode == 0, r.stderr
    assert "refused" in r.stdout          # the seccomp filter: no setuid mode at all
    planted = box.ws / ".git" / "objects" / "ab" / FAKE[2:]
    assert planted.is_file() and not planted.is_symlink()     # plain data: applied
    assert not planted.stat().st_mode & (stat.S_ISUID | stat.S_ISGID)


def test_alternates_written_with_new_objects_are_held(box):
    ws = fresh_ws(box)
    r = run(box, NEW_REPO + (
        'git init -q --bare "$TOOLING/evil.git"; '
        'echo evil | git --git-dir="$TOOLING/evil.git" hash-object -w --stdin; '
        'echo "$TOOLING/evil.git/objects" > .git/objects/info/alternates'), workspace=ws)
    assert r.returncode == 0, r.stderr
    evil = r.stdout.strip().splitlines()[-1]
    assert "held for review: .git" in r.stderr and "alternates" in r.stderr, r.stderr
    assert not (ws / ".git" / "objects" / "info" / "alternates").exists()
    assert host_git(box, "cat-file", "-e", evil, cwd=ws).returncode != 0


def test_a_repository_planted_in_an_object_directory_is_judged_as_one(box):
    ws = fresh_ws(box)
    nested = ".git/objects/ab"
    r = run(box, NEW_REPO + (
        f"mkdir -p {nested}/objects {nested}/refs; echo 'ref: refs/heads/main' > {nested}/HEAD; "
        f"printf '[core]\\n\\tbare = false\\n\\tworktree = .\\n"
        f"\\tfsmonitor = \"touch {box.marker}; false\"\\n' > {nested}/config"), workspace=ws)
    assert r.returncode == 0, r.stderr
    assert f"held for review: {nested}" in r.stderr, r.stderr
    assert not (ws / nested / "config").exists()
    host_git(box, "status", cwd=ws / nested)
    host_git(box, "status", cwd=ws)
    assert not box.marker.exists()


def test_an_object_named_file_in_the_hooks_path_is_judged_as_a_hook(box):
    commit_all(box)
    host_git(box, "config", "core.hooksPath", ".git/objects/ab")
    r = run(box, f"echo x > f.txt; git add -A; {COMMIT}; mkdir -p .git/objects/ab; "
                 f"printf '#!/bin/sh\\ntouch {box.marker}\\n' > .git/objects/ab/{FAKE[2:]}; "
                 f"chmod +x .git/objects/ab/{FAKE[2:]}")
    assert r.returncode == 0, r.stderr
    assert f"held for review: .git/objects/ab/{FAKE[2:]}" in r.stderr, r.stderr
    assert "hook" in r.stderr
    assert not (box.ws / ".git" / "objects" / "ab" / FAKE[2:]).exists()


FORGE = r'''
import os, subprocess, zlib
oid = subprocess.run(["git", "rev-parse", "HEAD:README"], check=True, capture_output=True,
                     text=True).stdout.strip()
d = f".git/objects/{oid[:2]}"
subprocess.run(["rm", "-rf", d], check=True)
os.mkdir(d)                                # a new (opaque) directory replaces the old one
open(f"{d}/{oid[2:]}", "wb").write(zlib.compress(b"blob 5\0evil\n"))
'''


def test_an_object_rewritten_through_a_replaced_directory_keeps_its_bytes(box):
    commit_all(box)
    (box.root / "forge.py").write_text(FORGE)
    r = run(box, f"{INNER_PY} {box.root}/forge.py")
    assert r.returncode == 0, r.stderr
    assert "rewrites an existing git object" in r.stderr, r.stderr
    assert host_git(box, "cat-file", "-p", "HEAD:README").stdout == "hello\n"
    assert host_git(box, "fsck").returncode == 0



def test_a_commit_graph_through_a_replaced_directory_never_reaches_the_host(box):
    commit_all(box)
    r = run(box, "rm -rf .git/objects/info; mkdir -p .git/objects/info; "
                 "printf 'CGPH forged' > .git/objects/info/commit-graph")
    assert r.returncode == 0, r.stderr
    assert "held for review: .git/objects/info" in r.stderr, r.stderr
    assert not (box.ws / ".git" / "objects" / "info" / "commit-graph").exists()
    assert host_git(box, "log", "--format=%s").stdout == "init\n"
