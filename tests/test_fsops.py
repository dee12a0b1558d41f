"""rfcore.fsops: remove_tree never follows a link out of the tree it removes."""

from __future__ import annotations

import os

from ringfence.rfcore.fsops import copy_file, remove_tree


def test_remove_tree_removes_a_small_tree(tmp_path):
    root = tmp_path / "t"
    (root / "a" / "b").mkdir(parents=True)
    (root / "a" / "b" / "f").write_text("x")
    (root / "g").write_text("y")
    remove_tree(str(root))
    assert not root.exists()


def test_remove_tree_unlinks_links_and_keeps_their_targets(tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "keep").write_text("precious")
    root = tmp_path / "t"
    root.mkdir()
    os.symlink(outside, root / "link")
    remove_tree(str(root))
    assert not root.exists() and (outside / "keep").read_text() == "precious"
    top = tmp_path / "toplink"
    os.symlink(outside, top)
    remove_tree(str(top))                      # the path itself is a link
    assert not os.path.lexists(top) and (outside / "keep").read_text() == "precious"


def test_remove_tree_hands_a_big_tree_to_shutil(tmp_path):
    root = tmp_path / "big"
    root.mkdir()
    for i in range(40):
        (root / f"f{i}").write_text("x")
    remove_tree(str(root))
    assert not root.exists()
    remove_tree(str(root))                     # already gone: no error


def test_copy_file(tmp_path):
    src = tmp_path / "s"
    src.write_bytes(os.urandom(3 << 20))
    copy_file(str(src), str(tmp_path / "d"))
    assert (tmp_path / "d").read_bytes() == src.read_bytes()
