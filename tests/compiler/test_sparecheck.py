"""compiler/sparecheck.py: which runs may use a spare, and what is sampled to prove
a spare is still the sandbox a cold start would build (no sandbox needed)."""

from __future__ import annotations

import os
import subprocess

from ringfence.compiler import sparecheck as sc
from ringfence.compiler.spec import (Bind, Broker, Chdir, DevNullOver, RoBind, SandboxSpec,
                                     Sanitized, Stage, Tmpfs)


def spec(*ops, sandboxed=True) -> SandboxSpec:
    return SandboxSpec("strict", "/w", tuple(ops), sandboxed=sandboxed)


ARGV = ["bash", "-c", "--", "true"]


def test_only_plain_bash_runs_on_devnull_in_a_brokerless_sandbox_fit():
    assert sc.fits(spec(), ARGV, subprocess.DEVNULL)
    assert not sc.fits(spec(Broker(entries=(), helper="/h")), ARGV, subprocess.DEVNULL)
    assert not sc.fits(spec(sandboxed=False), ARGV, subprocess.DEVNULL)
    assert not sc.fits(spec(), ARGV, None)                   # the caller's stdin (a tty)
    assert not sc.fits(spec(), ARGV, 0)
    assert not sc.fits(spec(), ["python3", "-c", "1"], subprocess.DEVNULL)
    assert not sc.fits(spec(), ["bash", "-c", "x" * sc.MAX_ARGV], subprocess.DEVNULL)
    assert sc.fits(spec(), ["bash", "-c", "x" * (sc.MAX_ARGV - 40)], subprocess.DEVNULL)


def test_mounts_count_by_identity_their_ancestors_and_sanitized_sources_by_times():
    names = dict(sc.paths(spec(
        RoBind(src="/usr", dst="/usr"), Bind(src="/w", dst="/w"), Tmpfs(dst="/tmp"),
        DevNullOver(dst="/w/sub/.env"), Sanitized(src="/h/.gitconfig", dst="/h/.gitconfig",
                                                  kind="gitconfig"),
        Stage(path="/w"), Chdir(path="/w/sub"))))
    assert names["/usr"] is False and names["/tmp"] is False
    assert names["/w/sub/.env"] is False
    assert names["/w"] is True and names["/w/sub"] is True      # ancestors of the mask
    assert names["/h/.gitconfig"] is True and names["/h"] is True and names["/"] is True


def test_a_sample_sees_a_rename_in_an_ancestor_and_a_recent_change_is_racy(tmp_path):
    d = tmp_path / "d"
    d.mkdir()
    (d / "f").write_text("a")
    names = sc.paths(spec(DevNullOver(dst=str(d / "f"))))
    before = sc.sample(names)
    assert sc._racy(before, __import__("time").time_ns())        # just made: racy
    assert sc.sample(names) == before
    (d / "g").write_text("b")
    os.rename(d / "g", d / "f")
    assert sc.sample(names) != before
