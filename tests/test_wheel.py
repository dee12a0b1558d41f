"""The wheel installs one top-level name: ``ringfence`` (issue 14, one namespace).

Slower than most tests (a real ``pip wheel`` build, a few seconds): it is the
only check that package-dir maps rfcore/classifier/profiles/compiler under
``ringfence.`` and ships nothing else at the top level.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import zipfile

import pytest

from tests.conftest import ROOT


@pytest.mark.slow
def test_wheel_top_level_is_only_ringfence(tmp_path):
    src = tmp_path / "src"
    # A copy without the venv and caches: the build writes build/ and *.egg-info.
    shutil.copytree(ROOT, src, symlinks=True, ignore=shutil.ignore_patterns(
        ".venv", ".git", "build", "*.egg-info", "__pycache__", ".hypothesis", "bench",
        "tests", "corpus"))
    out = tmp_path / "dist"
    proc = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps",
                           "--no-build-isolation", "-q", "-w", str(out), str(src)],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    (wheel,) = out.glob("ringfence-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    top = {n.split("/", 1)[0] for n in names}
    assert top == {"ringfence", f"{wheel.name.split('-')[0]}-{wheel.name.split('-')[1]}"
                   ".dist-info"}, sorted(top)
    for part in ("rfcore", "classifier", "profiles", "compiler"):
        assert f"ringfence/{part}/__init__.py" in names
    assert "ringfence/profiles/build.toml" in names
    assert "ringfence/profiles/chain.py" in names
