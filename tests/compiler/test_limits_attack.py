"""Attacks on issue 23's limits (review i23b): what a sandboxed command could do around
the memory, pids, stage and file-size limits, asserted on the host side.

Limits are tiny (a shared 2-core machine). Run as root and unprivileged.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from .sandbox_util import CLI

pytestmark = [
    pytest.mark.sandbox,
    pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap is not installed"),
]


def limited(box, **limits) -> Path:
    p = box.root / "limited.toml"
    body = "".join(f"{k} = {v}\n" for k, v in limits.items())
    p.write_text(f'extends = "strict"\n[limits]\n{body}', encoding="utf-8")
    return p


def run(box, prof, command: str, timeout: float = 120) -> subprocess.CompletedProcess:
    return subprocess.run([*CLI, "run", "-p", str(prof), "-w", str(box.ws), "-c", command],
                          cwd=box.ws, env=box.env(), capture_output=True, text=True,
                          timeout=timeout)


def last_run(box) -> dict:
    r = subprocess.run([*CLI, "ledger", "export"], env=box.env(), capture_output=True,
                       text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    rows = [json.loads(x) for x in r.stdout.splitlines() if x.strip()]
    return [x for x in rows if x.get("kind") != "hook"][-1]


# --- 1. every tmpfs the sandbox can write is sized ------------------------------------

def test_private_tmp_and_dev_shm_cannot_fill_host_ram(box):
    """memory_mb=32: before, 48 MB went into each of /tmp and /dev/shm (host RAM)."""
    prof = limited(box, memory_mb=32, timeout=60)
    r = run(box, prof, "for d in /tmp /dev/shm $HOME; do "
                       "head -c 48000000 /dev/zero > $d/fill 2>/dev/null; "
                       "echo $d=$(stat -c %s $d/fill); rm -f $d/fill; done; "
                       "touch /dev/planted 2>/dev/null && echo dev-writable; true")
    assert r.returncode == 0, r.stderr
    sizes = dict(line.split("=") for line in r.stdout.split() if "=" in line)
    assert set(sizes) == {"/tmp", "/dev/shm", str(box.home)}, r.stdout
    for where, size in sizes.items():
        assert int(size) <= 32 << 20, (where, size)
    assert "dev-writable" not in r.stdout


def test_the_unprivileged_memory_limit_is_recorded_not_silent(box):
    prof = limited(box, memory_mb=64)
    r = run(box, prof, "true")
    assert r.returncode == 0, r.stderr
    from ringfence.compiler.limits import RunLimits

    probe = RunLimits(64, 64 << 20)
    cgroup = "memory" in probe.enforced
    probe.close()
    notes = " ".join(n.get("message", "") + n.get("code", "")
                     for n in last_run(box).get("degradations", []))
    if not cgroup:
        assert "RF626" in notes, notes
        if os.geteuid() == 0:
            assert "RF626" in r.stderr


# --- 2. a killed run's writes are never applied ------------------------------------------

def test_a_timed_out_runs_writes_are_held_not_applied(box):
    prof = limited(box, timeout=2)
    (box.ws / "keep").write_text("good\n")
    r = run(box, prof, "echo whole > new; printf cut > keep; sleep 30")
    assert r.returncode == 124, r.stderr
    assert not (box.ws / "new").exists()
    assert (box.ws / "keep").read_text() == "good\n"       # never the cut version
    row = last_run(box)
    assert (row["state"], row["outcome"]) == ("aborted", "timeout")
    changes = row["changes"]
    assert sorted(h["path"] for h in changes["held"]) == ["keep", "new"], changes
    assert sorted(x["path"] for x in changes["not_applied"]) == ["keep", "new"]
    assert "RF627" in r.stderr
    rid = row["id"]
    shown = subprocess.run([*CLI, "approvals", "show", rid], env=box.env(), cwd=box.ws,
                           capture_output=True, text=True, timeout=60)
    assert shown.returncode == 0 and "new" in shown.stdout, shown.stdout + shown.stderr
    ok = subprocess.run([*CLI, "approve", rid], env=box.env(), cwd=box.ws,
                        capture_output=True, text=True, timeout=60)
    assert ok.returncode == 0, ok.stderr
    assert (box.ws / "new").read_text() == "whole\n"
    assert (box.ws / "keep").read_text() == "cut"


def test_a_run_killed_by_the_stage_cap_applies_nothing(box):
    prof = limited(box, stage_mb=4, timeout=60)
    r = run(box, prof, "echo x > small; while :; do head -c 1000000 /dev/zero >> big; done")
    assert r.returncode == 137 and "RF624" in r.stderr, r.stderr
    assert not (box.ws / "big").exists() and not (box.ws / "small").exists()
    row = last_run(box)
    assert (row["state"], row["outcome"]) == ("limit", "stage")
    assert {"big", "small"} <= {x["path"] for x in row["changes"]["not_applied"]}


# --- 4. sparse files count at their apparent size ------------------------------------------

def test_a_sparse_file_over_the_stage_cap_is_a_stage_limit_and_not_applied(box):
    prof = limited(box, stage_mb=4, timeout=60)
    r = run(box, prof, "truncate -s 200M sparse; echo done")
    assert "done" in r.stdout, r.stderr
    assert not (box.ws / "sparse").exists()
    row = last_run(box)
    assert (row["state"], row["outcome"]) == ("limit", "stage"), row
    assert r.returncode == 137


def test_the_cross_filesystem_copy_keeps_holes(tmp_path):
    from ringfence.staging.place import _copy_into

    src = tmp_path / "src"
    with open(src, "wb") as fh:
        fh.write(b"head")
        fh.seek(64 << 20)
        fh.write(b"tail")
    dst = tmp_path / "dst"
    dst.mkdir()
    fd = os.open(dst, os.O_RDONLY | os.O_DIRECTORY)
    try:
        _copy_into(str(src), fd, "copy")
    finally:
        os.close(fd)
    st = os.stat(dst / "copy")
    assert st.st_size == (64 << 20) + 4
    assert st.st_blocks * 512 < 1 << 20, st.st_blocks        # holes stay holes
    with open(dst / "copy", "rb") as fh:
        assert fh.read(4) == b"head"
        fh.seek(64 << 20)
        assert fh.read() == b"tail"
    assert sorted(os.listdir(dst)) == ["copy"]


# --- 5. a file cut by the file-size limit is never `completed` ------------------------------

def test_a_file_cut_at_file_size_mb_is_a_limit_and_not_applied(box):
    prof = limited(box, file_size_mb=1, timeout=60)
    (box.ws / "big").write_text("the good version\n")
    r = run(box, prof, "head -c 2000000 /dev/zero > big; echo done")
    assert "done" in r.stdout, r.stderr
    assert "RF628" in r.stderr, r.stderr
    assert (box.ws / "big").read_text() == "the good version\n"
    row = last_run(box)
    assert (row["state"], row["outcome"]) == ("limit", "file_size"), row
    assert r.returncode == 137


# --- 6. the limit is found even where settling fails, and only in real changes ---------------

DEEP = ("D=$(printf 'd%.0s' $(seq 200)); mkdir z && cd z && "
        "for i in $(seq 24); do mkdir $D && cd $D; done; echo x > leaf")


@pytest.mark.parametrize("how", ["unreadable", "overrun"])
def test_a_stage_over_its_cap_is_a_limit_even_when_its_settle_fails(box, how):
    """The stage is counted on settle's own walk; a walk that fails (a path longer than
    PATH_MAX: RF643; the settle's time bound: RF644) must not lose the limit: the run
    is still `limit` (137), and nothing is applied (review of issue 19 item 10)."""
    prof = limited(box, stage_mb=2, timeout=60)
    if how == "unreadable":
        r = run(box, prof, f"truncate -s 10M big; {DEEP}; echo done")
        assert "RF643" in r.stderr, r.stderr
    else:
        r = subprocess.run([*CLI, "run", "-p", str(prof), "-w", str(box.ws), "-c",
                            "truncate -s 10M big; echo done"], cwd=box.ws,
                           env=box.env(RINGFENCE_SETTLE_SECONDS="0"), capture_output=True,
                           text=True, timeout=120)
        assert "RF644" in r.stderr, r.stderr
    assert "done" in r.stdout, r.stderr
    assert r.returncode == 137, r.stderr
    assert not (box.ws / "big").exists() and not (box.ws / "z").exists()
    row = last_run(box)
    assert (row["state"], row["outcome"]) == ("limit", "stage"), row


def test_an_unchanged_file_at_the_file_size_is_no_cut(box):
    """A workspace file exactly `file_size_mb` long that the command only copied up
    (chmod to the mode it had) was not cut: the run's real edits are applied."""
    prof = limited(box, file_size_mb=1, timeout=60)
    (box.ws / "data.bin").write_bytes(os.urandom(1 << 20))
    os.chmod(box.ws / "data.bin", 0o644)
    (box.ws / "src.c").write_text("a\n")
    r = run(box, prof, "chmod 644 data.bin; echo b > src.c")
    assert r.returncode == 0, r.stderr
    assert "RF628" not in r.stderr, r.stderr
    assert (box.ws / "src.c").read_text() == "b\n"
    row = last_run(box)
    assert row["state"] == "completed", row


# --- 7. a SIGKILL during the apply leaves no placeholder, and RF642 tells the truth ---------

KILLED_APPLY = r"""
import os, sys, time
from ringfence.staging import place as apply
real = os.pwrite
def slow(fd, data, at):
    n = real(fd, data, at)
    sys.stdout.write("copying\n"); sys.stdout.flush()
    time.sleep(60)
    return n
os.pwrite = slow
src, ws, name = sys.argv[1:4]
fd = os.open(ws, os.O_RDONLY | os.O_DIRECTORY)
apply._copy_into(src, fd, name)
"""


@pytest.mark.parametrize("name", ["new.bin", "existing.bin"])
def test_sigkill_during_a_cross_filesystem_copy_leaves_no_name(tmp_path, name):
    import sys

    src = tmp_path / "src.bin"
    src.write_bytes(b"x" * 100000)
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "existing.bin").write_text("old\n")
    before = sorted(os.listdir(ws))
    proc = subprocess.Popen([sys.executable, "-c", KILLED_APPLY, str(src), str(ws), name],
                            stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout.readline() == "copying\n"
    finally:
        proc.kill()
        proc.wait()
    assert sorted(os.listdir(ws)) == before                 # no .name.rf-PID placeholder
    assert (ws / "existing.bin").read_text() == "old\n"


def test_rf642_names_what_a_killed_apply_did_apply(tmp_path):
    import sys

    from ringfence.staging import mount as stg

    ws = tmp_path / "ws"
    ws.mkdir()
    stage = stg.create(str(tmp_path / "state"), str(ws))
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    stage.write_meta(pid=dead.pid, start="0")
    with open(os.path.join(stage.path, stg.APPLY_JOURNAL), "a", encoding="utf-8") as fh:
        fh.write("applied\ta.txt\napplied\tsub/b.txt\n")
    from ringfence.staging.stale import recover

    (notes,) = recover(str(tmp_path / "state"))
    assert notes.code == "RF642"
    assert "never applied" not in notes.message
    assert "partly applied" in notes.message and "a.txt" in notes.message \
        and "sub/b.txt" in notes.message, notes.message


# --- 8. small pid limits count the command's processes, not the sandbox's own -------------

def test_pids_8_lets_a_small_command_run(box):
    """Before: unprivileged, the namespace count (bwrap's init included) minus a margin
    of 8 ended `sleep 1` at pids=8; RLIMIT_NPROC also counted the user's other
    processes."""
    prof = limited(box, pids=8, timeout=60)
    r = run(box, prof, "sleep 1 & sleep 1 & wait; echo ok")
    assert r.returncode == 0 and "ok" in r.stdout, r.stderr
    assert last_run(box)["state"] == "completed"


def test_pids_8_still_stops_a_fork_bomb(box):
    prof = limited(box, pids=8, timeout=60)
    r = run(box, prof, "b() { b | b & }; b; sleep 50")
    assert "RF624" in r.stderr, r.stderr
    row = last_run(box)
    assert (row["state"], row["outcome"]) == ("limit", "pids")
    assert r.returncode == 137


def test_all_tmpfs_mounts_together_stay_within_the_memory_budget():
    from ringfence.compiler.backends.bwrap import tmpfs_sizes
    from ringfence.compiler.spec import Rlimit, SandboxSpec, Tmpfs

    budget = 64 << 20
    masks = [Tmpfs(f"/masked/{i}") for i in range(30)]
    spec = SandboxSpec("t", None, (Tmpfs("/tmp"), Tmpfs("/run"), *masks,
                                   Rlimit("as", budget)))
    sizes = tmpfs_sizes(spec)
    total = sizes["/tmp"] + sizes["/dev/shm"] + sizes[""] * (len(masks) + 1)
    assert total <= budget + (len(masks) + 3) * (1 << 20), total
