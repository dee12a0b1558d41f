"""``loose.derived``: an ``R/objects/XX`` directory's loose-object shortcut taken from
its parent ``R/objects``'s, without the probe lookup, must agree with what
``loose.shortcut`` would compute, or decline (None) and let the caller ask it."""

from __future__ import annotations

import os

import pytest

from ringfence.staging.git.discovery import View
from ringfence.staging.judges import Registry
from ringfence.staging.loose import derived, shortcut

OID = "c" * 38


def layout(tmp_path, *, head_in_xx=False, pre_repo_at_xx=False, fsmonitor=False):
    ws, upper = tmp_path / "ws", tmp_path / "upper"
    ws.mkdir()
    git = upper / ".git"
    (git / "objects" / "ab").mkdir(parents=True)
    (git / "refs" / "heads").mkdir(parents=True)
    (git / "HEAD").write_text("ref: refs/heads/main\n")
    (git / "config").write_text("[core]\n\tfsmonitor = touch /tmp/x\n" if fsmonitor
                                else "[core]\n\tbare = false\n")
    (git / "objects" / "ab" / OID).write_bytes(b"x")
    if head_in_xx:
        (git / "objects" / "ab" / "HEAD").write_text("ref: refs/heads/main\n")
    if pre_repo_at_xx:           # the workspace had a repository laid out there
        pre = ws / ".git" / "objects" / "ab"
        for d in ("objects", "refs"):
            (pre / d).mkdir(parents=True)
        (pre / "HEAD").write_text("ref: refs/heads/main\n")
    reg = Registry(str(ws))
    reg.post, reg.pre = View(str(upper), str(ws)), View(None, str(ws))
    return reg, git


def entries_of(git):
    return list(os.scandir(git / "objects" / "ab"))


@pytest.mark.parametrize("fsmonitor", [False, True], ids=["harmless", "held"])
def test_it_agrees_with_the_full_shortcut(tmp_path, fsmonitor):
    reg, git = layout(tmp_path, fsmonitor=fsmonitor)
    parent = shortcut(reg, ".git/objects")
    assert parent is not None and not parent.files
    got = derived(reg, parent, ".git/objects/ab", entries_of(git))
    full = shortcut(reg, ".git/objects/ab")
    assert got is not None and full is not None
    assert (got.files, got.verdict, got.rows) == (full.files, full.verdict, full.rows)
    assert (got.verdict is None) == (not fsmonitor)     # the new repository's verdict


def test_it_declines_where_the_directory_may_be_a_repository(tmp_path):
    reg, git = layout(tmp_path, head_in_xx=True)
    assert derived(reg, shortcut(reg, ".git/objects"), ".git/objects/ab", entries_of(git)) is None


def test_it_declines_where_the_workspace_had_a_repository_there(tmp_path):
    reg, git = layout(tmp_path, pre_repo_at_xx=True)
    parent = shortcut(reg, ".git/objects")
    assert parent is not None
    assert derived(reg, parent, ".git/objects/ab", entries_of(git)) is None
    assert shortcut(reg, ".git/objects/ab") is None          # the full probe agrees


def test_it_declines_when_a_row_was_added_since_the_parent(tmp_path):
    reg, git = layout(tmp_path)
    parent = shortcut(reg, ".git/objects")
    reg.extra[".git/objects/ab"] = ("hook", "a hooksPath target")
    assert derived(reg, parent, ".git/objects/ab", entries_of(git)) is None
    assert shortcut(reg, ".git/objects/ab") is None          # the full probe agrees


def test_it_needs_an_objects_level_parent(tmp_path):
    reg, git = layout(tmp_path)
    full = shortcut(reg, ".git/objects/ab")
    assert derived(reg, None, ".git/objects/ab", entries_of(git)) is None
    assert derived(reg, full, ".git/objects/ab", entries_of(git)) is None   # a files-level one
