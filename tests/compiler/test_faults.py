"""Fault injection (issue 23): whatever fails once bwrap has started, the sandbox, the
proxy's relay and every child are gone, nothing is mounted on the host, no stage is
leaked (or, when writes are at stake, it is kept and reported), the run is recorded
with what happened, and stderr says it in one clear line (never a traceback).

Every case runs a command carrying a unique marker, so "nothing left running" is a
scan of /proc for that marker. Run as root and unprivileged (`make test`); the cases
that mount a tiny tmpfs as the state dir need root.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

from .sandbox_util import CLI

pytestmark = [
    pytest.mark.sandbox,
    pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap is not installed"),
]
DRIVER = str(Path(__file__).with_name("fault_driver.py"))
root_only = pytest.mark.skipif(os.geteuid() != 0, reason="mounting a tmpfs needs root")


def marker() -> str:
    return f"rfmark{uuid.uuid4().hex[:12]}"


def running_with(mark: str) -> list[str]:
    """Command lines of live processes (not zombies) that carry ``mark``."""
    found = []
    for pid in os.listdir("/proc"):
        if not pid.isdigit() or int(pid) == os.getpid():
            continue
        try:
            cmd = Path(f"/proc/{pid}/cmdline").read_bytes()
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if mark.encode() in cmd and state != "Z":
            found.append(cmd.replace(b"\0", b" ").decode("utf-8", "replace"))
    return found


def gone(mark: str, within: float = 10.0) -> list[str]:
    """Wait (bounded) for the sandbox to finish dying; what is still running after."""
    end = time.monotonic() + within
    while (left := running_with(mark)) and time.monotonic() < end:
        time.sleep(0.05)
    return left


def host_mounts_under(path: Path) -> list[str]:
    with open("/proc/self/mountinfo", encoding="utf-8") as fh:
        return [line for line in fh if str(path) in line]


def driven(box, fault: str, *args: str, env=None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, DRIVER, fault, *args], cwd=box.ws,
                          env=env or box.env(), capture_output=True, text=True, timeout=120)


def last_run(box, env=None) -> dict:
    r = subprocess.run([*CLI, "ledger", "export"], env=env or box.env(), capture_output=True,
                       text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    rows = [json.loads(x) for x in r.stdout.splitlines() if x.strip()]
    runs = [x for x in rows if x.get("kind") != "hook"]
    return runs[-1]


def ringfence_lines(stderr: str) -> list[str]:
    return [ln for ln in stderr.splitlines() if ln.startswith(("ringfence", "error:"))]


def assert_clean(box, mark, *, stages=0):
    assert gone(mark) == []
    assert host_mounts_under(box.root) == []
    assert len(box.stages()) == stages, box.stages()


# --- a failure at each step after bwrap started ----------------------------------------

def test_settle_fails_with_enospc_the_writes_are_kept_and_said(box):
    mark = marker()
    r = driven(box, "settle_enospc", "run", "-p", "build", "-w", str(box.ws), "-c",
               f"echo {mark} > out.txt")
    assert r.returncode == 125, r.stderr
    assert "Traceback" not in r.stderr
    lines = ringfence_lines(r.stderr)
    assert len(lines) == 1 and "could not be recorded and applied" in lines[0], r.stderr
    assert "No space left on device" in lines[0] and "kept, unapplied" in lines[0]
    row = last_run(box)
    assert row["state"] == "failed" and row["exit_code"] == 125
    assert not (box.ws / "out.txt").exists()          # nothing half-applied
    assert_clean(box, mark, stages=1)                  # nothing lost: kept in its stage
    # The next run reports it (RF642), and doctor lists it.
    nxt = box.run("strict", "--", "true")
    assert nxt.returncode == 0 and "RF642" in nxt.stderr


def test_ledger_full_at_the_end_is_one_error_and_nothing_runs_on(box):
    mark = marker()
    r = driven(box, "ledger_full_at_the_end", "run", "-p", "build", "-w", str(box.ws), "-c",
               f"echo {mark}")
    assert r.returncode == 125
    assert "Traceback" not in r.stderr
    lines = ringfence_lines(r.stderr)
    assert len(lines) == 1 and "cannot write the ledger: database or disk is full" in lines[0]
    assert "fix:" in r.stderr and "RINGFENCE_HOME" in r.stderr
    # The row could not be finished; its process is gone, so it reads as aborted.
    assert last_run(box)["state"] == "aborted"
    assert_clean(box, mark)


def test_a_bug_in_the_supervisor_mid_run_kills_the_whole_sandbox(box):
    mark = marker()
    r = driven(box, "bug_after_start", "run", "-p", "build", "-w", str(box.ws), "-c",
               f"echo {mark}; touch half; sleep 60 # {mark}")
    assert r.returncode == 125
    assert "Traceback" not in r.stderr
    lines = ringfence_lines(r.stderr)
    assert len(lines) == 1 and "internal error" in lines[0] and "injected" in lines[0]
    row = last_run(box)
    assert row["state"] == "aborted" and "injected" in (row["events"][-1]["note"] or "")
    assert not (box.ws / "half").exists()
    assert_clean(box, mark)


def test_a_preexec_step_that_fails_is_a_sandbox_error_not_an_internal_one(box):
    mark = marker()
    r = driven(box, "preexec_fails", "run", "-p", "build", "-w", str(box.ws), "-c",
               f"echo {mark}")
    assert r.returncode == 125
    assert "Traceback" not in r.stderr and "internal error" not in r.stderr
    lines = ringfence_lines(r.stderr)
    assert len(lines) == 1 and "could not start bubblewrap" in lines[0], r.stderr
    assert last_run(box)["state"] == "sandbox_error"
    assert_clean(box, mark)


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT, signal.SIGHUP])
def test_a_signal_to_the_supervisor_ends_everything_and_is_recorded(box, sig):
    mark = marker()
    proc = subprocess.Popen([*CLI, "run", "-p", "build", "-w", str(box.ws), "-c",
                             f"echo started; sleep 60 # {mark}"], cwd=box.ws, env=box.env(),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert proc.stdout.readline().strip() == "started"
    assert running_with(mark)
    proc.send_signal(sig)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 128 + sig, err
    assert "Traceback" not in err
    row = last_run(box)
    assert (row["state"], row["outcome"]) == ("aborted", "signal")
    assert_clean(box, mark)


def test_sigkill_of_the_supervisor_takes_the_sandbox_and_relay_with_it(box):
    mark = marker()
    proc = subprocess.Popen([*CLI, "run", "-p", "build", "-w", str(box.ws), "-c",
                             f"touch kept; echo started; sleep 60 # {mark}"], cwd=box.ws,
                            env=box.env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)
    assert proc.stdout.readline().strip() == "started"
    proc.kill()
    proc.communicate(timeout=60)
    assert gone(mark) == []                     # bwrap, its init, the relay, sleep
    assert host_mounts_under(box.root) == []
    assert not (box.ws / "kept").exists()       # never applied ...
    assert len(box.stages()) == 1               # ... but kept, and reported:
    nxt = box.run("strict", "--", "true")
    assert "RF642" in nxt.stderr
    assert last_run(box)["state"] == "completed"
    assert leaked_cgroups() == []               # the dead run's cgroup was swept
    export = subprocess.run([*CLI, "ledger", "list", "--json"], env=box.env(),
                            capture_output=True, text=True, timeout=60)
    states = [r["state"] for r in json.loads(export.stdout)]
    assert "aborted" in states and "running" not in states


def test_an_api_timeout_that_would_overflow_is_refused_before_start(box):
    from ringfence.rfcore.errors import SandboxError
    from ringfence.session.runner import run

    mark = marker()
    for bad in (float("inf"), 1e300, float("nan"), -1, 10**30):
        with pytest.raises(SandboxError, match="RF550"):
            run(["echo", mark], profile="build", workspace=str(box.ws), timeout=bad,
                env=box.env(), capture=True)
    assert_clean(box, mark)


# --- stage space (a tiny tmpfs as RINGFENCE_HOME) --------------------------------------

@pytest.fixture
def tiny_home(box):
    mounted = []

    def mount(size: str) -> Path:
        d = box.root / f"tiny{len(mounted)}"
        d.mkdir()
        subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size},mode=0700", "tmpfs",
                        str(d)], check=True)
        mounted.append(d)
        return d
    yield mount
    for d in mounted:
        subprocess.run(["umount", "-l", str(d)], check=False)


@root_only
def test_run_refuses_below_the_stage_minimum(box, tiny_home):
    home = tiny_home("1500k")
    env = box.env(RINGFENCE_HOME=str(home))
    mark = marker()
    r = subprocess.run([*CLI, "run", "-p", "build", "-w", str(box.ws), "-c", f"echo {mark}"],
                       cwd=box.ws, env=env, capture_output=True, text=True, timeout=60)
    assert r.returncode == 125 and mark not in r.stdout
    lines = ringfence_lines(r.stderr)
    assert len(lines) == 1 and "RF622" in lines[0] and str(home) in lines[0], r.stderr
    assert last_run(box, env)["state"] == "sandbox_error"
    assert not os.listdir(home / "stage") if (home / "stage").exists() else True
    assert gone(mark) == []


@root_only
def test_a_write_cut_for_stage_space_is_a_limit_never_completed(box, tiny_home):
    home = tiny_home("20m")
    env = box.env(RINGFENCE_HOME=str(home))
    (box.ws / "big").write_text("the good version\n")
    mark = marker()
    r = subprocess.run([*CLI, "run", "-p", "build", "-w", str(box.ws), "-c",
                        f"head -c 30000000 /dev/zero > big; true # {mark}"], cwd=box.ws,
                       env=env, capture_output=True, text=True, timeout=120)
    assert "RF623" in r.stderr and "Traceback" not in r.stderr, r.stderr
    row = last_run(box, env)
    assert (row["state"], row["outcome"]) == ("limit", "stage_space")
    assert r.returncode == 137                      # every limit (docs/exit-codes.md)
    assert any(d["code"] == "RF623" for d in row["degradations"])
    assert (box.ws / "big").read_text() == "the good version\n"    # never the cut one
    assert "discarded: big" in r.stderr                             # said what it was
    assert not os.listdir(home / "stage")                           # space given back
    assert gone(mark) == [] and host_mounts_under(box.ws) == []


@root_only
def test_a_stage_that_filled_up_and_was_freed_is_still_a_cut(box, tiny_home):
    """Review i23b: fill the stage, write the victim (cut to 0 bytes), free the filler:
    at the end the filesystem has room, but a write was cut. The watch saw the floor."""
    home = tiny_home("24m")
    env = box.env(RINGFENCE_HOME=str(home))
    (box.ws / "victim").write_text("the good version\n")
    mark = marker()
    r = subprocess.run([*CLI, "run", "-p", "build", "-w", str(box.ws), "-c",
                        f"head -c 30000000 /dev/zero > filler; sleep 1; "
                        f": > victim; echo new >> victim; rm -f filler; true # {mark}"],
                       cwd=box.ws, env=env, capture_output=True, text=True, timeout=120)
    assert "RF623" in r.stderr, r.stderr
    row = last_run(box, env)
    assert (row["state"], row["outcome"]) == ("limit", "stage_space"), row
    assert (box.ws / "victim").read_text() == "the good version\n"
    assert gone(mark) == []


@root_only
def test_a_full_state_dir_is_one_error_with_the_fix_and_no_leaked_stage(box, tiny_home):
    home = tiny_home("2m")
    env = box.env(RINGFENCE_HOME=str(home))
    ok = subprocess.run([*CLI, "ledger", "list"], env=env, capture_output=True, timeout=60)
    assert ok.returncode == 0
    with open(home / "filler", "wb") as fh:              # fill it to the last block
        try:
            while True:
                fh.write(b"\0" * 65536)
        except OSError:
            pass
    mark = marker()
    r = subprocess.run([*CLI, "run", "-p", "build", "-w", str(box.ws), "-c", f"echo {mark}"],
                       cwd=box.ws, env=env, capture_output=True, text=True, timeout=60)
    assert r.returncode == 125 and "Traceback" not in r.stderr
    lines = ringfence_lines(r.stderr)
    assert len(lines) == 1, r.stderr
    assert "cannot write the ledger" in lines[0] and "filesystem is full" in lines[0], lines
    assert "fix:" in r.stderr
    assert not (home / "stage").exists() or not os.listdir(home / "stage")
    assert gone(mark) == []
    listed = subprocess.run([*CLI, "ledger", "list"], env=env, capture_output=True,
                            text=True, timeout=60)
    assert listed.returncode == 0, listed.stderr          # reads work on a full disk


# --- doctor on a broken state dir; reads on a read-only ledger ------------------------

def doctor(env) -> tuple[int, dict, str]:
    r = subprocess.run([*CLI, "doctor", "--json"], env=env, capture_output=True, text=True,
                       timeout=120)
    assert "Traceback" not in r.stderr, r.stderr
    return r.returncode, {c["name"]: c for c in json.loads(r.stdout)["checks"]}, r.stderr


def test_doctor_names_a_state_dir_that_is_a_file(box):
    f = box.root / "afile"
    f.write_text("x")
    code, checks, _ = doctor(box.env(RINGFENCE_HOME=str(f)))
    assert code == 1
    c = checks["state dir"]
    assert not c["ok"] and "not a directory" in c["detail"] and "RINGFENCE_HOME" in c["fix"]
    assert checks["workspace staging (overlay)"]["detail"].startswith("not tested")


def test_doctor_names_a_state_dir_that_cannot_be_created(box):
    f = box.root / "afile"
    f.write_text("x")
    code, checks, _ = doctor(box.env(RINGFENCE_HOME=str(f / "sub")))
    assert code == 1
    c = checks["state dir"]
    assert not c["ok"] and "cannot be created" in c["detail"] and "mkdir" in c["fix"]


def test_doctor_creates_a_missing_state_dir(box):
    code, checks, _ = doctor(box.env(RINGFENCE_HOME=str(box.root / "fresh")))
    assert checks["state dir"]["ok"] and "created now" in checks["state dir"]["detail"]


def test_doctor_names_a_corrupt_ledger_and_how_to_move_it_aside(box):
    (box.state / "ledger.db").write_bytes(b"SQLite format 3\0" + os.urandom(8192))
    code, checks, _ = doctor(box.env())
    assert code == 1
    c = checks["ledger"]
    assert not c["ok"] and "mv " in c["fix"] and ".broken" in c["fix"]


def test_doctor_reports_stage_space_and_leftover_stages(box):
    assert box.run("strict", "--", "true").returncode == 0
    leftover = box.state / "stage" / "st_1_1_dead"
    (leftover / "upper").mkdir(parents=True)
    (leftover / "upper" / "f").write_bytes(b"x" * 10000)
    (leftover / "meta.json").write_text(json.dumps(
        {"pid": 1, "start": "0", "workspace": str(box.ws), "state": "running"}))
    code, checks, _ = doctor(box.env())
    assert checks["stage space"]["ok"] and "MiB" in checks["stage space"]["detail"]
    left = checks["stages left behind"]
    assert not left["ok"] and left["detail"].startswith("1 (1 interrupted)"), left


def read_only_home(box):
    """The state dir made unwritable: a read-only bind mount as root, modes otherwise."""
    if os.geteuid() == 0:
        ro = box.root / "ro"
        ro.mkdir()
        subprocess.run(["mount", "--bind", str(box.state), str(ro)], check=True)
        subprocess.run(["mount", "-o", "remount,bind,ro", str(ro)], check=True)
        return ro, lambda: subprocess.run(["umount", str(ro)], check=False)
    for p in (box.state, *box.state.iterdir()):
        p.chmod(0o500 if p.is_dir() else 0o400)
    return box.state, lambda: [p.chmod(0o700) for p in (box.state, *box.state.iterdir())]


def test_read_commands_work_on_a_read_only_ledger(box):
    assert box.run("strict", "--", "echo", "hello").returncode == 0
    run_id = last_run(box)["id"]
    home, undo = read_only_home(box)
    try:
        env = box.env(RINGFENCE_HOME=str(home))
        for args in (["ledger", "list"], ["ledger", "show", run_id], ["ledger", "export"]):
            r = subprocess.run([*CLI, *args], env=env, capture_output=True, text=True,
                               timeout=60)
            assert r.returncode == 0, (args, r.stderr)
            assert run_id in r.stdout or "run_" in r.stdout
        code, checks, _ = doctor(env)
        assert code == 1 and not checks["state dir"]["ok"]
        assert "not writable" in checks["state dir"]["detail"]
        assert checks["ledger"]["ok"]
        r = subprocess.run([*CLI, "run", "-p", "strict", "-w", str(box.ws), "--", "true"],
                           cwd=box.ws, env=env, capture_output=True, text=True, timeout=60)
        assert r.returncode == 125 and "Traceback" not in r.stderr
        assert len(ringfence_lines(r.stderr)) == 1
    finally:
        undo()


# --- limits that hold for root (small ones: this may be a shared 2-core machine) ------

def limited_profile(box, **limits) -> Path:
    p = box.root / "limited.toml"
    body = "".join(f"{k} = {v}\n" for k, v in limits.items())
    p.write_text(f'extends = "strict"\n[limits]\n{body}', encoding="utf-8")
    return p


def test_a_fork_bomb_ends_as_a_recorded_limit(box):
    mark = marker()
    prof = limited_profile(box, pids=32, timeout=60)
    r = subprocess.run([*CLI, "run", "-p", str(prof), "-w", str(box.ws), "-c",
                        f"b() {{ b | b & }}; b; sleep 50 # {mark}"], cwd=box.ws,
                       env=box.env(), capture_output=True, text=True, timeout=120)
    assert "RF624" in r.stderr and "Traceback" not in r.stderr, r.stderr
    row = last_run(box)
    assert (row["state"], row["outcome"]) == ("limit", "pids")
    assert row["duration"] < 60                     # ended by the limit, not the timeout
    assert_clean(box, mark)
    assert leaked_cgroups() == []


def leaked_cgroups() -> list[Path]:
    """Run cgroups whose ringfence is gone, under the cgroups this test process's
    runs are made in (another session's cgroups, and their leftovers, are theirs)."""
    from ringfence.compiler import limits

    parents = set()
    for ctrl, path in limits._own_paths().items():
        base = limits._v2_mount() if ctrl == "" else limits._v1_mount(ctrl)
        if base:
            parents.add(Path(base) / path.lstrip("/"))
    out = []
    for d in (d for parent in parents for d in parent.glob("ringfence-*")):
        parts = d.name.split("-")
        if d.is_dir() and len(parts) == 3 and parts[1].isdigit() and \
                not Path(f"/proc/{parts[1]}").exists():
            out.append(d)
    return out


def test_a_memory_hog_is_stopped(box):
    from .sandbox_util import INNER_PY

    mark = marker()
    prof = limited_profile(box, memory_mb=64)
    hog = f"x = b'x' * (400 << 20)  # {mark}"
    r = subprocess.run([*CLI, "run", "-p", str(prof), "-w", str(box.ws), "--", INNER_PY,
                        "-c", hog], cwd=box.ws, env=box.env(), capture_output=True, text=True,
                       timeout=120)
    assert r.returncode != 0 and "Traceback (most recent call last)" not in r.stderr.replace(
        "MemoryError", "") or "MemoryError" in r.stderr
    row = last_run(box)
    from ringfence.compiler.limits import RunLimits

    probe = RunLimits(None, 64 << 20)
    cgroup = "memory" in probe.enforced
    probe.close()
    if cgroup:      # root (or delegated v2): the kernel's OOM killer, recorded as a limit
        assert (row["state"], row["outcome"]) == ("limit", "memory"), row
        assert "RF624" in r.stderr
    else:           # 400 MiB at once is over the RLIMIT_AS backstop (4 x 64 MiB): refused
        assert row["state"] == "failed" and "MemoryError" in r.stderr   # before any use
        assert "RF629" in r.stderr
    assert_clean(box, mark)


def test_the_stage_cap_ends_a_runaway_write(box):
    mark = marker()
    prof = limited_profile(box, stage_mb=8, timeout=60)
    r = subprocess.run([*CLI, "run", "-p", str(prof), "-w", str(box.ws), "-c",
                        f"while :; do head -c 1000000 /dev/zero >> big; done # {mark}"],
                       cwd=box.ws, env=box.env(), capture_output=True, text=True, timeout=120)
    assert "RF624" in r.stderr, r.stderr
    row = last_run(box)
    assert (row["state"], row["outcome"]) == ("limit", "stage")
    # A killed run's writes are held for review (RF627), never applied.
    assert not (box.ws / "big").exists()
    assert_clean(box, mark, stages=1)
