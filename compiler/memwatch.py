"""The memory limit without a cgroup (issue 23 item 7): ringfence's own count of what
the sandbox holds in memory, and a kill when it passes ``limits.memory_mb``.

An unprivileged user without a delegated cgroup has no kernel cap on a run's memory;
RLIMIT_AS caps one process's address space, not the sum, and a refused allocation is
the command's own error (MemoryError), not a limit. So the supervisor's watch
(compiler/limits.py, a few looks a second) sums, for the sandbox:

* every process of its pid namespace (found as the pids count finds them): its
  anonymous and shared-memory resident pages, ``RssAnon + RssShmem`` of
  ``/proc/PID/status`` (heap, stacks, ``MAP_SHARED|MAP_ANONYMOUS``, mapped memfd and
  /dev/shm pages). File pages it maps (libraries, an mmapped input) are page cache a
  kernel can drop, and are not counted;
* what its own writable tmpfs mounts hold (``/tmp``, ``/dev/shm``, the masked home,
  ``/run``, masked dirs): the rw tmpfs of its mount namespace whose filesystem is not
  one of the host's (a host tmpfs bound in is the host's, not the run's), measured
  with statvfs through ``/proc/INIT/root``.

Over the cap, the run is killed (SIGKILL to bwrap; ``--die-with-parent`` takes the pid
namespace) and recorded as ``limit``/``memory``. A process that passes the cap and
exits between two looks is caught when the run ends: the peak resident set of the
sandbox's processes (``ru_maxrss`` of bwrap and of its init, from wait4, which holds
the largest of each one's reaped descendants) over the cap is a memory limit too;
that peak counts mapped file pages, unlike the looks.

RLIMIT_AS stays as a per-process backstop at ``AS_BACKSTOP`` x the cap, high enough
that the watch normally fires first (and that runtimes reserving large address ranges
still start). An allocation it refuses outright (nothing touched, the peak under the
cap) fails the command by itself; that run stays ``failed`` and, when its error output
names an out-of-memory error, RF629 says the backstop may be why. docs/sandbox.md
("Memory without a cgroup") states what this does not see.
"""

from __future__ import annotations

import os
import re
import time

AS_BACKSTOP = 4             # RLIMIT_AS = this x memory_mb when no cgroup caps memory
COST_SHARE = 20             # after a sum that took t seconds, the next waits 20 t
_KEYS = (b"RssAnon:", b"RssShmem:")
_OOM = re.compile(rb"MemoryError|Cannot allocate memory|out of memory|bad_alloc|"
                  rb"OutOfMemory|memory allocation of \d+ bytes failed|ENOMEM", re.I)


def ns_pids(pidns: str) -> list[int]:
    """Host pids of every process in the pid namespace ``pidns`` (its link text)."""
    out = []
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                if os.readlink(f"/proc/{name}/ns/pid") == pidns:
                    out.append(int(name))
            except OSError:
                pass
    return out


def resident(pids, stop_at: int | None = None) -> int:
    """Bytes of anonymous and shared-memory pages the processes hold (a zombie or a
    process gone meanwhile holds none). Stops adding once over ``stop_at``."""
    total = 0
    for pid in pids:
        try:
            with open(f"/proc/{pid}/status", "rb") as fh:
                text = fh.read()
        except OSError:
            continue
        for line in text.splitlines():
            if line.startswith(_KEYS):
                parts = line.split()
                if len(parts) >= 2 and parts[1].isdigit():
                    total += int(parts[1]) * 1024
        if stop_at is not None and total > stop_at:
            break
    return total


def _mounts(pid: int | str) -> list[tuple[str, str, str, str]]:
    """(device, mount point, fstype, mount options) of ``pid``'s mount namespace."""
    out = []
    try:
        with open(f"/proc/{pid}/mountinfo", "rb") as fh:
            lines = fh.read().decode("utf-8", "surrogateescape").splitlines()
    except OSError:
        return out
    for line in lines:
        left, _, right = line.partition(" - ")
        a, b = left.split(), right.split()
        if len(a) >= 6 and b:
            point = re.sub(r"\\([0-7]{3})", lambda m: chr(int(m.group(1), 8)), a[4])
            out.append((a[2], point, b[0], a[5]))
    return out


class MemoryWatch:
    """One run's memory count against ``cap`` bytes (see the module doc)."""

    def __init__(self, cap: int) -> None:
        self.cap = cap
        self.host_devs = {dev for dev, *_ in _mounts("self")}
        self.tmpfs: list[str] | None = None      # the run's tmpfs, once set up
        self.next_sum = 0.0
        self.seen = 0                            # the most the looks counted
        self.peak: int | None = None             # the largest process peak, at the end

    def over(self, init_pid: int, pids: list[int]) -> bool:
        """Does the sandbox hold more than the cap now? ``pids``: its processes."""
        now = time.monotonic()
        if now < self.next_sum:
            return False
        used = resident(pids, stop_at=self.cap)
        if used <= self.cap and len(pids) >= 2:
            # bwrap forks the command only once its mounts are final: before that the
            # namespace may still show the host's (under /oldroot).
            if not self.tmpfs:                   # kept once found: mounts are fixed
                self.tmpfs = self._own_tmpfs(init_pid)
            used += self._tmpfs_used(init_pid)
        # The sum costs ~35 us a process: with thousands of them (a fork bomb under a
        # large pids limit) it is taken less often, at most 1/COST_SHARE of a core.
        self.next_sum = now + (time.monotonic() - now) * COST_SHARE
        self.seen = max(self.seen, used)
        return used > self.cap

    def peak_over(self, peak: int | None) -> bool:
        """The run's largest process peak (wait4's ru_maxrss, bytes) over the cap."""
        if peak is not None:
            self.peak = peak
        return peak is not None and peak > self.cap

    def _own_tmpfs(self, init_pid: int) -> list[str]:
        seen, out = set(), []
        for dev, point, fstype, opts in _mounts(init_pid):
            if fstype != "tmpfs" or "rw" not in opts.split(",") or dev in self.host_devs \
                    or dev in seen:
                continue
            seen.add(dev)
            out.append(point)
        return out

    def _tmpfs_used(self, init_pid: int) -> int:
        total = 0
        for point in self.tmpfs or ():
            try:
                st = os.statvfs(f"/proc/{init_pid}/root{point}")
            except OSError:
                continue
            total += (st.f_blocks - st.f_bfree) * st.f_frsize
        return total

    def backstop_note(self, exit_code: int, stderr_tail: bytes):
        """RF629 for a failed run whose error output names an out-of-memory error: the
        backstop may have refused an allocation. Not a limit: nothing passed the cap."""
        found = _OOM.search(stderr_tail or b"") if exit_code != 0 else None
        if found is None:
            return None
        from .spec import Note

        mib = self.cap >> 20
        held = max(self.seen, self.peak or 0) >> 20
        return Note("RF629", f"the command failed with an out-of-memory error "
                             f"({found.group().decode('ascii', 'replace')!r}) while the "
                             f"sandbox stayed under its memory limit ({mib} MiB; {held} MiB "
                             f"the most seen in use): without a cgroup each process's "
                             f"address space is capped at {AS_BACKSTOP} x the limit "
                             f"({AS_BACKSTOP * mib} MiB, RLIMIT_AS), which refuses a large "
                             "allocation outright; the run is the command's own failure")
