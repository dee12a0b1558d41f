"""The default tooling dir follows RINGFENCE_HOME / XDG_CACHE_HOME (issue 23 item 9),
and under RINGFENCE_HOME (which every sandbox hides whole) only it is bound back."""

from __future__ import annotations

import shutil
import subprocess

import pytest

from ringfence.rfcore.paths import tooling_dir

from .sandbox_util import CLI


def test_the_default_follows_ringfence_home_then_xdg_then_home():
    assert tooling_dir({"RINGFENCE_HOME": "/s/rf", "HOME": "/h"}) == "/s/rf/cache/tooling"
    assert tooling_dir({"XDG_CACHE_HOME": "/c", "HOME": "/h"}) == "/c/ringfence/tooling"
    assert tooling_dir({"HOME": "/h"}) == "/h/.cache/ringfence/tooling"


def test_an_explicit_tooling_dir_is_kept(tmp_path):
    from ringfence.compiler.compile import _tooling_dir
    from ringfence.profiles.model import Profile, Tooling

    prof = Profile(name="p", tooling=Tooling(dir="~/my-cache", enabled=True))
    assert _tooling_dir(prof, "/h", "/s/rf/cache/tooling") == "/h/my-cache"
    default = Profile(name="p", tooling=Tooling(enabled=True))
    assert _tooling_dir(default, "/h", "/s/rf/cache/tooling") == "/s/rf/cache/tooling"
    assert _tooling_dir(default, "/h", "") == "/h/.cache/ringfence/tooling"


@pytest.mark.sandbox
@pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap is not installed")
def test_under_ringfence_home_only_the_tooling_dir_is_visible(box):
    r = subprocess.run([*CLI, "run", "-p", "build", "-w", str(box.ws), "-c",
                        'mkdir -p "$PIP_CACHE_DIR" && echo cached > "$PIP_CACHE_DIR/x"; '
                        f'echo "$PIP_CACHE_DIR"; ls -A {box.state}'],
                       cwd=box.ws, env=box.env(), capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert lines[0] == str(box.state / "cache" / "tooling" / "pip")
    assert lines[1:] == ["cache"]                  # no ledger, no stage, no grants
    assert (box.state / "cache" / "tooling" / "pip" / "x").read_text() == "cached\n"
    assert (box.state / "ledger.db").exists()      # it is there, just hidden


@pytest.mark.sandbox
@pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap is not installed")
def test_xdg_cache_home_moves_it(box):
    xdg = box.root / "xdg"
    env = box.env(XDG_CACHE_HOME=str(xdg))
    del env["RINGFENCE_HOME"]
    env["XDG_STATE_HOME"] = str(box.root / "xstate")
    r = subprocess.run([*CLI, "run", "-p", "build", "-w", str(box.ws), "-c",
                        'echo "$PIP_CACHE_DIR"; mkdir -p "$PIP_CACHE_DIR" && touch "$PIP_CACHE_DIR/t"'], cwd=box.ws,
                       env=env, capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == str(xdg / "ringfence" / "tooling" / "pip")
    assert (xdg / "ringfence" / "tooling" / "pip" / "t").exists()
