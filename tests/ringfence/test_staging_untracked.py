"""A repository the top index does not record (an untracked clone, a linked
worktree of a repository elsewhere, a bare layout) obeys its OWN ``core.hooksPath``.

Each test sets such a repository up on the host before the run, plants a hook
from inside a Build sandbox where that repository's pre-run config (or a file it
includes, or the user's global config) puts its hooks, then runs the host's own
git in it and checks on the host side that the hook never ran. Run as root and as
the unprivileged user (scripts/test-unprivileged.sh).
"""

from __future__ import annotations

import os
import shutil

import pytest

from tests.ringfence.test_staging_git import box, host_git, run  # noqa: F401 - fixture

pytestmark = [
    pytest.mark.sandbox,
    pytest.mark.skipif(shutil.which("bwrap") is None or shutil.which("git") is None,
                       reason="bubblewrap and git are needed"),
]


def plant(box, rel: str) -> str:
    """Shell lines writing an executable hook at ``rel`` that touches the marker."""
    return (f"mkdir -p $(dirname {rel}); printf '#!/bin/sh\\ntouch {box.marker}\\n' > {rel}; "
            f"chmod +x {rel}")


def clone(box, rel: str = "vendor/lib"):
    lib = box.ws / rel
    lib.mkdir(parents=True)
    assert host_git(box, "init", "-q", cwd=lib).returncode == 0
    return lib


def commit_in(box, where) -> None:
    host_git(box, "commit", "-q", "--allow-empty", "-m", "h", cwd=where)
    assert not box.marker.exists()


def test_an_untracked_clones_own_hooks_path_is_held(box):
    lib = clone(box)
    (lib / "tools" / "hooks").mkdir(parents=True)
    host_git(box, "config", "core.hooksPath", "tools/hooks", cwd=lib)
    r = run(box, plant(box, "vendor/lib/tools/hooks/pre-commit") + "; echo code > vendor/lib/src.txt")
    assert r.returncode == 0, r.stderr
    assert "held for review: vendor/lib/tools/hooks/pre-commit" in r.stderr
    assert not (lib / "tools" / "hooks" / "pre-commit").exists()
    assert (lib / "src.txt").read_text() == "code\n"         # its ordinary files: applied
    commit_in(box, lib)


def test_a_hooks_path_set_in_a_file_the_clone_includes_is_held(box):
    lib = clone(box)
    (lib / "lib.gitconfig").write_text("[core]\n\thooksPath = .hooks\n")
    host_git(box, "config", "include.path", "../lib.gitconfig", cwd=lib)
    r = run(box, plant(box, "vendor/lib/.hooks/post-commit") + "; "
                 f"printf '[core]\\n\\tfsmonitor = \"touch {box.marker}; false\"\\n' "
                 ">> vendor/lib/lib.gitconfig")
    assert r.returncode == 0, r.stderr
    assert "held for review: vendor/lib/.hooks/post-commit" in r.stderr
    assert "held for review: vendor/lib/lib.gitconfig (adds git config keys that can run " \
           "programs: core.fsmonitor)" in r.stderr
    assert not (lib / ".hooks" / "post-commit").exists()
    host_git(box, "status", cwd=lib)
    commit_in(box, lib)


def test_a_linked_worktree_of_a_repository_outside_obeys_its_common_config(box):
    main = box.outside / "main"
    main.mkdir()
    assert host_git(box, "init", "-q", cwd=main).returncode == 0
    host_git(box, "commit", "-q", "--allow-empty", "-m", "init", cwd=main)
    host_git(box, "config", "core.hooksPath", ".githooks", cwd=main)
    wt = box.ws / "other"
    assert host_git(box, "worktree", "add", "-q", str(wt), cwd=main).returncode == 0
    assert (wt / ".git").is_file()
    r = run(box, plant(box, "other/.githooks/pre-commit"))
    assert r.returncode == 0, r.stderr
    assert "held for review: other/.githooks/pre-commit (a git hook runs" in r.stderr
    commit_in(box, wt)


def test_a_bare_repository_in_the_workspace_obeys_its_hooks_path(box):
    bare = box.ws / "srv.git"
    assert host_git(box, "init", "-q", "--bare", str(bare)).returncode == 0
    host_git(box, "config", "core.hooksPath", "custom", cwd=bare)
    r = run(box, plant(box, "srv.git/custom/pre-receive"))
    assert r.returncode == 0, r.stderr
    assert "held for review: srv.git/custom/pre-receive (a git hook runs" in r.stderr
    host_git(box, "add", "README")
    host_git(box, "commit", "-q", "-m", "init")
    host_git(box, "push", "-q", str(bare), "HEAD:refs/heads/x")
    assert not box.marker.exists()


def test_a_relative_global_hooks_path_applies_in_an_untracked_clone(box):
    lib = clone(box, "deps/a/b")
    (box.home / ".gitconfig").write_text("[core]\n\thooksPath = .githooks\n")
    r = run(box, plant(box, "deps/a/b/.githooks/pre-commit"))
    assert r.returncode == 0, r.stderr
    assert "held for review: deps/a/b/.githooks/pre-commit (a git hook runs" in r.stderr
    commit_in(box, lib)


def test_a_nested_clone_inside_an_untracked_clone_does_not_hide_the_outer_one(box):
    outer = clone(box)
    clone(box, "vendor/lib/inner")
    host_git(box, "config", "core.hooksPath", "inner/hooks", cwd=outer)
    r = run(box, plant(box, "vendor/lib/inner/hooks/pre-commit"))
    assert r.returncode == 0, r.stderr
    assert "held for review: vendor/lib/inner/hooks/pre-commit (a git hook runs" in r.stderr
    commit_in(box, outer)


def test_a_clone_reached_through_a_link_is_not_read_through_it(box):
    """A write through a workspace link into the clone is staged where it lands."""
    lib = clone(box)
    (lib / "tools" / "hooks").mkdir(parents=True)
    host_git(box, "config", "core.hooksPath", "tools/hooks", cwd=lib)
    os.symlink("vendor/lib/tools", box.ws / "t")
    r = run(box, plant(box, "t/hooks/pre-commit"))
    assert not (lib / "tools" / "hooks" / "pre-commit").exists(), r.stderr
    commit_in(box, lib)

