"""The memory limit holds unprivileged too (issue 23 item 7): a memory hog ends as a
recorded ``limit``/``memory`` outcome, the whole sandbox is gone, the host keeps its
memory.

As root a cgroup caps the run (the kernel OOM-kills inside it); unprivileged,
without a delegated cgroup, ringfence's watch sums the sandbox's memory and kills it
(compiler/limits.py, docs/sandbox.md "Memory without a cgroup"). Limits are tiny
(a shared 2-core machine). Run as root and unprivileged
(scripts/test-unprivileged.sh).
"""

from __future__ import annotations

import os
import shutil

import pytest

from .test_limits_attack import last_run, limited, run

pytestmark = [
    pytest.mark.sandbox,
    pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap is not installed"),
    pytest.mark.skipif(shutil.which("python3") is None, reason="no python3 for the sandbox"),
]

MB = 1 << 20


def memory_cgroup() -> bool:
    from ringfence.compiler.limits import RunLimits

    probe = RunLimits(None, 64 * MB)
    try:
        return "memory" in probe.enforced
    finally:
        probe.close()


def left_behind(tag: str) -> list[int]:
    """Host processes whose command line carries ``tag``: the run left them alive."""
    out = []
    for name in os.listdir("/proc"):
        if name.isdigit() and int(name) != os.getpid():
            try:
                with open(f"/proc/{name}/cmdline", "rb") as fh:
                    if tag.encode() in fh.read():
                        out.append(int(name))
            except OSError:
                pass
    return out


def py(code: str, tag: str) -> str:
    """A python3 command line inside the sandbox, tagged so a survivor can be found."""
    return f"python3 -c '{code}' {tag}"


def assert_memory_limit(box, r, tag: str) -> dict:
    assert r.returncode == 137, (r.returncode, r.stderr)
    assert "survived" not in r.stdout          # killed while it held the memory
    assert "RF624" in r.stderr and "memory limit" in r.stderr, r.stderr
    row = last_run(box)
    assert (row["state"], row["outcome"]) == ("limit", "memory"), row
    assert left_behind(tag) == []
    return row


def test_a_growing_hog_is_killed_as_a_memory_limit(box):
    """1 MiB a step, held: the watch (or the kernel's OOM kill in a cgroup) ends it
    long before its 400 MiB; before, unprivileged, it was `failed` (MemoryError)."""
    tag = "rf-hog-grow"
    prof = limited(box, memory_mb=64, timeout=60)
    r = run(box, prof, py("import time\nb = []\nfor i in range(400):\n"
                          "    b.append(bytearray(1 << 20)); time.sleep(0.005)\n"
                          "print(\"survived\")", tag) + "; echo after")
    assert_memory_limit(box, r, tag)


def test_a_fast_allocation_that_exits_at_once_is_still_a_memory_limit(box):
    """200 MiB touched and freed within one look of the watch: the run's peak resident
    set (known when it ends) is over the cap."""
    tag = "rf-hog-fast"
    prof = limited(box, memory_mb=64, timeout=60)
    (box.ws / "keep").write_text("good\n")
    r = run(box, prof, py("b = bytearray(200 << 20)", tag) + "; echo cut > keep")
    assert_memory_limit(box, r, tag)
    assert (box.ws / "keep").read_text() == "good\n"        # a limit run applies nothing


@pytest.mark.parametrize("code", ["b = bytearray(200 << 20)",
                                  "b = []\nwhile True: b.append(bytearray(1 << 20))"])
def test_the_peak_is_caught_when_the_run_ends_between_two_looks(box, code):
    """With the watch kept from looking while the command runs (a fault), a process
    that passed the cap and exited (at once, or at the backstop's MemoryError) is
    still a memory limit: its peak resident set, from wait4, is over the cap."""
    from .test_faults import driven

    prof = limited(box, memory_mb=64, timeout=60)
    r = driven(box, "watch_never_looks", "run", "-p", str(prof), "-w", str(box.ws), "-c",
               py(code, "rf-hog-peak"))
    assert_memory_limit(box, r, "rf-hog-peak")
    assert "seen as it ended" in r.stderr, r.stderr       # nothing was left to kill
    if not memory_cgroup():
        ok = driven(box, "watch_never_looks", "run", "-p", str(prof), "-w", str(box.ws),
                    "-c", py("b = bytearray(24 << 20)", "rf-ok"))
        assert ok.returncode == 0 and last_run(box)["state"] == "completed", ok.stderr


def test_a_hog_that_runs_into_the_address_space_backstop_is_a_memory_limit(box):
    """Appending as fast as it can: it may reach the per-process RLIMIT_AS backstop
    (MemoryError) before the watch looks; its peak is still over the cap."""
    tag = "rf-hog-loop"
    prof = limited(box, memory_mb=64, timeout=60)
    r = run(box, prof, py("b = []\nwhile True: b.append(bytearray(1 << 20))", tag))
    assert_memory_limit(box, r, tag)


def test_files_in_the_sandbox_tmpfs_count_toward_the_cap(box):
    """/tmp (B/2) and /dev/shm (B/4) each stay within their size, and the process
    stays under the cap, but together they are over it."""
    tag = "rf-hog-tmpfs"
    prof = limited(box, memory_mb=64, timeout=60)
    r = run(box, prof, "head -c 28000000 /dev/zero > /tmp/a && "
                       "head -c 14000000 /dev/zero > /dev/shm/b && "
                       + py("import time\nb = bytearray(36 << 20)\ntime.sleep(20)\n"
                            "print(\"survived\")", tag))
    assert_memory_limit(box, r, tag)


def test_shared_anonymous_memory_counts_toward_the_cap(box):
    """mmap(MAP_SHARED | MAP_ANONYMOUS) is shmem, not anonymous memory: counted too."""
    tag = "rf-hog-shm"
    prof = limited(box, memory_mb=64, timeout=60)
    r = run(box, prof, py("import mmap, time\nm = mmap.mmap(-1, 120 << 20)\n"
                          "for i in range(0, 120 << 20, 4096): m[i] = 1\n"
                          "time.sleep(20)\nprint(\"survived\")", tag))
    assert_memory_limit(box, r, tag)


def test_a_forked_hog_is_counted_across_processes(box):
    """Four processes of 24 MiB each: none alone is over the cap, together they are."""
    tag = "rf-hog-many"
    prof = limited(box, memory_mb=64, timeout=60)
    one = py("import time\nb = bytearray(24 << 20)\ntime.sleep(20)\nprint(\"survived\")", tag)
    r = run(box, prof, f"{one} & {one} & {one} & {one} & wait")
    assert_memory_limit(box, r, tag)


def test_a_run_under_the_cap_completes(box):
    """The cap is not hit by the sandbox's own processes, files it only reads, or a
    command well under it."""
    prof = limited(box, memory_mb=64, timeout=60)
    r = run(box, prof, py("import time\nb = bytearray(24 << 20)\ntime.sleep(1)", "rf-ok")
            + " && head -c 8000000 /dev/zero > /tmp/t"
              " && cat /usr/bin/* | head -c 100000000 > /dev/null; echo done > out")
    assert r.returncode == 0, r.stderr
    assert last_run(box)["state"] == "completed"
    assert (box.ws / "out").read_text() == "done\n"


def test_an_allocation_the_backstop_refuses_is_told_apart(box):
    """2000 MiB asked at once, never touched. Under a cgroup the kernel kills it (a
    memory limit). Without one the per-process RLIMIT_AS backstop refuses it: the
    command fails on its own (MemoryError), nothing was in use, so the run is
    `failed` and RF629 says the backstop may be why."""
    tag = "rf-hog-refused"
    prof = limited(box, memory_mb=64, timeout=60)
    r = run(box, prof, py("b = bytearray(2000 << 20)", tag))
    if memory_cgroup():
        assert_memory_limit(box, r, tag)
        return
    assert r.returncode == 1, r.stderr
    assert "MemoryError" in r.stderr and "RF629" in r.stderr, r.stderr
    row = last_run(box)
    assert row["state"] == "failed", row
    assert "RF629" in {n["code"] for n in row["degradations"]}
    assert left_behind(tag) == []
