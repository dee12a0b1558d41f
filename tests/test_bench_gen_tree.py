"""bench/gen_tree.py: deterministic node_modules-shaped trees; growing a tree in
steps gives exactly the tree generated at once."""

from __future__ import annotations

import hashlib
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))
import gen_tree  # noqa: E402


def digest(root: Path) -> tuple[int, int, str]:
    h = hashlib.sha256()
    files = dirs = 0
    for dp, dn, fn in sorted(os.walk(root)):
        dn.sort()
        dirs += len(dn)
        for f in sorted(fn):
            p = Path(dp) / f
            h.update(str(p.relative_to(root)).encode() + b"\0" + p.read_bytes())
            files += 1
    return files, dirs, h.hexdigest()


def test_shape_and_counts(tmp_path):
    info = gen_tree.generate(str(tmp_path / "a"), 1000)
    files, dirs, _ = digest(tmp_path / "a")
    assert (info["files"], info["dirs"]) == (files, dirs) == (1020, 222)   # whole packages
    pkg = tmp_path / "a" / "node_modules" / "pkg-000003"
    assert sorted(os.listdir(pkg)) == ["index.js", "lib", "node_modules", "package.json"]
    assert sorted(os.listdir(pkg / "node_modules")) == ["dep-0", "dep-1"]
    assert len(os.listdir(pkg / "lib")) == gen_tree.LIB


def test_deterministic_and_resumable(tmp_path):
    gen_tree.generate(str(tmp_path / "once"), 3000)
    state = gen_tree.generate(str(tmp_path / "steps"), 100)
    state = gen_tree.generate(str(tmp_path / "steps"), 1000, resume=state)
    state = gen_tree.generate(str(tmp_path / "steps"), 3000, resume=state)
    assert digest(tmp_path / "once") == digest(tmp_path / "steps")
    assert state["files"] == digest(tmp_path / "once")[0] == 3000
