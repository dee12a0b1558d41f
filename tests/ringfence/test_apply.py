"""Applying a stage never follows a symlink out of the workspace (RF643)."""

from __future__ import annotations

import os

from ringfence.staging.apply import apply_plan, plan
from ringfence.staging.judges import Registry


def _setup(tmp_path):
    ws, upper, outside = tmp_path / "ws", tmp_path / "upper", tmp_path / "outside"
    for d in (ws / "d" / "e", upper / "d" / "e", outside / "e"):
        d.mkdir(parents=True)
    (upper / "d" / "e" / "x").write_text("staged\n")
    (upper / "new").mkdir()
    (upper / "new" / "n").write_text("n\n")
    return ws, upper, outside


def test_a_link_swapped_in_after_planning_is_not_followed(tmp_path):
    ws, upper, outside = _setup(tmp_path)
    p = plan(str(upper), str(ws), Registry(str(ws)))
    assert (sorted(p.created), p.modified, p.deleted) == (["d/e/x", "new/n"], [], [])
    # the host replaces d by a link to outside between the plan and the apply
    os.rename(ws / "d", tmp_path / "d.old")
    os.symlink(outside, ws / "d")
    failed = apply_plan(p, str(upper), str(ws))
    assert failed == [("d/e/x", "a symbolic link on the way (not followed)")]
    assert os.listdir(outside / "e") == []                 # nothing outside was written
    assert (ws / "new" / "n").read_text() == "n\n"         # the rest was applied
    assert (upper / "d" / "e" / "x").exists()              # kept in the stage


def test_a_new_directory_is_moved_whole(tmp_path):
    ws, upper, _ = _setup(tmp_path)
    ino = os.stat(upper / "new").st_ino
    p = plan(str(upper), str(ws), Registry(str(ws)))
    assert apply_plan(p, str(upper), str(ws)) == []
    assert os.stat(ws / "new").st_ino == ino               # renamed, not copied
    assert (ws / "d" / "e" / "x").read_text() == "staged\n"


def test_a_stage_on_another_filesystem_is_copied(tmp_path):
    import shutil
    import tempfile

    if os.stat("/dev/shm").st_dev == os.stat(tmp_path).st_dev:
        import pytest
        pytest.skip("/dev/shm is on the same filesystem here")
    ws = tmp_path / "ws"
    (ws / "d").mkdir(parents=True)
    (ws / "d" / "old").write_text("old\n")
    upper = tempfile.mkdtemp(dir="/dev/shm")
    try:
        os.makedirs(f"{upper}/new/deep")
        with open(f"{upper}/new/deep/n", "w") as fh:
            fh.write("n\n")
        os.chmod(f"{upper}/new/deep/n", 0o751)
        os.mkdir(f"{upper}/d")
        with open(f"{upper}/d/old", "w") as fh:
            fh.write("changed\n")
        os.symlink("deep/n", f"{upper}/new/link")
        p = plan(upper, str(ws), Registry(str(ws)))
        assert (sorted(p.created), p.modified) == (["new/deep/n", "new/link"], ["d/old"])
        assert apply_plan(p, upper, str(ws)) == []
        assert (ws / "new" / "deep" / "n").read_text() == "n\n"
        assert os.stat(ws / "new" / "deep" / "n").st_mode & 0o777 == 0o751
        assert os.readlink(ws / "new" / "link") == "deep/n"
        assert (ws / "d" / "old").read_text() == "changed\n"
        assert sorted(os.listdir(ws / "d")) == ["old"]       # no temp file left
    finally:
        shutil.rmtree(upper, ignore_errors=True)


def test_privilege_is_stripped_on_apply(tmp_path):
    import stat

    import pytest

    ws, upper = tmp_path / "ws", tmp_path / "upper"
    ws.mkdir()
    (upper / "d").mkdir(parents=True)
    for p in (upper / "d" / "x", upper / "top"):
        p.write_bytes(b"\x7fELF")
        os.chmod(p, 0o6755)
    os.chmod(upper / "d", 0o2775)
    # a v2 file capability blob (cap_setuid, effective) and a trusted.* attribute:
    # only root may set them; an unprivileged run checks the mode bits alone
    cap = bytes.fromhex("01000002" "80000000" "00000000" "00000000" "00000000")
    xattrs = []
    for name, value in (("security.capability", cap), ("trusted.rf", b"1"), ("user.rf", b"1")):
        try:
            os.setxattr(upper / "top", name, value)
            xattrs.append(name)
        except OSError:
            pass
    p = plan(str(upper), str(ws), Registry(str(ws)))
    assert apply_plan(p, str(upper), str(ws)) == []
    for path in (ws / "d", ws / "d" / "x", ws / "top"):
        assert not os.lstat(path).st_mode & (stat.S_ISUID | stat.S_ISGID), path
    left = os.listxattr(ws / "top")
    assert not [n for n in left if n.startswith(("security.capability", "trusted."))], left
    if "user.rf" in xattrs:
        assert "user.rf" in left                     # ordinary attributes are kept
    if os.getuid() != 0:
        pytest.skip("security.* / trusted.* need root to set (mode bits were checked)")
    assert "security.capability" in xattrs and "trusted.rf" in xattrs


def test_privilege_deep_in_a_new_dir_is_stripped_without_a_second_walk(tmp_path):
    """A new directory moved whole is looked at once, while planning: what in it
    carries privilege (setuid/setgid bits, security.* / trusted.* attributes) is
    listed in ``Plan.inspected`` and stripped before the move; what carries nothing
    is not listed (the apply walks nothing again)."""
    import stat

    ws, upper = tmp_path / "ws", tmp_path / "upper"
    ws.mkdir()
    deep = upper / "new" / "a" / "b"
    deep.mkdir(parents=True)
    (deep / "plain").write_text("x\n")
    (deep / "suid").write_bytes(b"\x7fELF")
    os.chmod(deep / "suid", 0o4755)
    os.chmod(upper / "new" / "a", 0o2775)
    os.symlink("plain", deep / "link")
    cap = bytes.fromhex("01000002" "80000000" "00000000" "00000000" "00000000")
    capped = True
    try:
        os.setxattr(deep / "plain", "security.capability", cap)
        os.setxattr(deep / "plain", "trusted.rf", b"1")
    except OSError:
        capped = False                      # unprivileged: the mode bits alone
    p = plan(str(upper), str(ws), Registry(str(ws)))
    want = {str(deep / "suid"), str(upper / "new" / "a")} | ({str(deep / "plain")} if capped
                                                            else set())
    assert set(p.inspected["new"]) == want
    assert apply_plan(p, str(upper), str(ws)) == []
    for path in (ws / "new" / "a", ws / "new" / "a" / "b" / "suid"):
        assert not os.lstat(path).st_mode & (stat.S_ISUID | stat.S_ISGID), path
    assert os.readlink(ws / "new" / "a" / "b" / "link") == "plain"
    left = os.listxattr(ws / "new" / "a" / "b" / "plain")
    assert not [n for n in left if n.startswith(("security.", "trusted."))], left
