"""The index reader keeps the last index it parsed (a settle reads one index up to
three times): another index, even of the same length, is never answered from it."""

from __future__ import annotations

import shutil
import subprocess

import pytest

from ringfence.staging.git import index

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="git is needed")


def an_index(tmp_path, name: str, files: list[str], assume: str | None = None) -> bytes:
    repo = tmp_path / name
    repo.mkdir()
    subprocess.run(["git", "init", "-q"], cwd=repo, check=True)
    for f in files:
        (repo / f).write_text(f)
    subprocess.run(["git", "add", "-A"], cwd=repo, check=True)
    if assume:
        subprocess.run(["git", "update-index", "--assume-unchanged", assume], cwd=repo,
                       check=True)
    return (repo / ".git" / "index").read_bytes()


def test_each_index_is_read_as_itself(tmp_path):
    a = an_index(tmp_path, "a", ["aa", "bb"])
    b = an_index(tmp_path, "b", ["cc", "dd"], assume="dd")   # same length, other bytes
    assert len(a) == len(b) and a != b
    for _ in range(2):
        assert index.parse_entries(a)[0] == [("aa", False, False), ("bb", False, False)]
        assert index.parse_entries(b)[0] == [("cc", False, False), ("dd", True, False)]
        assert set(index.stat_data(a)) == {"aa", "bb"}
        assert index.strip_caches(b) == b          # no cache extension: the same bytes
    names, _ = index.parse_entries(a)
    names.append(("planted", True, True))          # a caller's list is its own
    assert len(index.parse_entries(a)[0]) == 2


def test_a_cut_index_is_unreadable_even_after_the_whole_one(tmp_path):
    a = an_index(tmp_path, "a", ["aa", "bb"])
    assert index.parse_entries(a) is not None
    assert index.parse_entries(a[:-30]) is None


def test_both_hashers_agree_and_a_sha256_index_is_read(tmp_path):
    import hashlib

    small, big = b"x" * 1000, b"y" * (index._SMALL + 1)
    for name in ("sha1", "sha256"):
        for data in (small, big):
            assert index._digest(name, data) == hashlib.new(name, data).digest()
    repo = tmp_path / "s"
    repo.mkdir()
    if subprocess.run(["git", "init", "-q", "--object-format=sha256"], cwd=repo).returncode:
        pytest.skip("this git cannot make a sha256 repository")
    (repo / "f").write_text("f")
    subprocess.run(["git", "add", "-A"], cwd=repo, check=True)
    data = (repo / ".git" / "index").read_bytes()
    assert index._sha256_sum(data)
    assert index.parse_entries(data)[0] == [("f", False, False)]
