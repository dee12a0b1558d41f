"""Limits that hold for root too (issue 23): a cgroup for the run's pids and memory,
and a watch that ends the run as ``limit`` when one is hit.

``RLIMIT_NPROC`` does not apply to root (the kernel exempts uid 0 and
CAP_SYS_RESOURCE), and ``RLIMIT_AS`` caps address space, not memory. So when
ringfence can create a cgroup (root, or a delegated cgroup v2 subtree) every run
gets its own, child of ringfence's own cgroup:

* ``pids.max`` = ``limits.pids``: a fork bomb is contained by the kernel;
* ``memory.max`` (v2) / ``memory.limit_in_bytes`` (v1) = ``limits.memory_mb``:
  a hog is OOM-killed inside the sandbox, never the host's processes;
* the run's processes are joined before bwrap is exec'd (first preexec step, before
  the stage's user namespace), so nothing of the sandbox escapes it;
* when the run ends, whatever is left in it is SIGKILLed and the cgroup removed.

Where no cgroup can be made (an unprivileged user without delegation),
``RLIMIT_NPROC`` is the hard cap on pids (it does apply to non-root) and the watch
counts the processes in the sandbox's pid namespace; memory is ringfence's own sum of
the sandbox's resident memory and tmpfs use (compiler/memwatch.py), with RLIMIT_AS at
``AS_BACKSTOP`` x the cap as a per-process backstop.

The watch (polled by the supervisor a few times a second, and once more when the run
ends) reports "pids" when the count reached the limit (``pids.events`` ``max`` > 0, or
the namespace count) and "memory" when the kernel OOM-killed a process of the run or
the sum (or, at the end, a process's peak) passed the cap; the supervisor then kills
the whole sandbox and the run is recorded as ``limit``.
"""

from __future__ import annotations

import functools
import os
import signal

from .memwatch import AS_BACKSTOP, MemoryWatch, ns_pids

_CG = "/sys/fs/cgroup"
# Processes of the sandbox that are not the command's: the outer bwrap and bwrap's
# init (pid 1 of the sandbox's pid namespace, among _ns_pids).
_SANDBOX_OWN = 2


def own_tasks() -> int:
    """Tasks (threads included) of our real uid now: RLIMIT_NPROC counts them all, so
    an unprivileged run's RLIMIT_NPROC is ``pids`` plus these (plus the sandbox's own
    two), or a user with a browser open could not start a run at ``pids = 8``."""
    uid, n = os.getuid(), 0
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                if os.stat(f"/proc/{name}").st_uid == uid:
                    n += len(os.listdir(f"/proc/{name}/task"))
            except OSError:
                pass
    return n


def _own_paths() -> dict[str, str]:
    """controller -> our cgroup path ("" key: the v2 unified hierarchy)."""
    out = {}
    try:
        with open("/proc/self/cgroup", encoding="ascii", errors="replace") as fh:
            for line in fh:
                _, ctrls, path = line.rstrip("\n").split(":", 2)
                for c in ctrls.split(",") if ctrls else [""]:
                    out[c] = path
    except (OSError, ValueError):
        pass
    return out


def _v1_mount(controller: str) -> str | None:
    d = os.path.join(_CG, controller)
    return d if os.path.isfile(os.path.join(d, "cgroup.procs")) else None


def _v2_mount() -> str | None:
    for d in (_CG, os.path.join(_CG, "unified")):
        if os.path.isfile(os.path.join(d, "cgroup.controllers")):
            return d
    return None


def _write(path: str, value: str) -> None:
    with open(path, "w", encoding="ascii") as fh:
        fh.write(value)


def _read(path: str) -> str:
    try:
        with open(path, encoding="ascii", errors="replace") as fh:
            return fh.read()
    except OSError:
        return ""


def _counter(text: str, key: str) -> int:
    for line in text.splitlines():
        parts = line.split()
        if len(parts) == 2 and parts[0] == key and parts[1].isdigit():
            return int(parts[1])
    return 0


class RunLimits:
    """One run's cgroup(s) and its watch. ``dirs``: the cgroup dirs made (maybe none)."""

    def __init__(self, pids: int | None, memory: int | None, stage: int | None = None) -> None:
        self.pids, self.memory, self.stage = pids, memory, stage
        self.stage_at: str | None = None
        self.stage_free0 = 0
        self.stage_min_free: int | None = None     # the least free seen while running
        self.dirs: list[str] = []
        self.pids_dir = self.mem_dir = None
        self.v2 = False
        self.pidns: str | None = None
        self.mem: MemoryWatch | None = None     # the count without a memory cgroup
        if pids is None and memory is None:
            return
        self._cgroups(pids, memory)
        if memory is not None and self.mem_dir is None:
            self.mem = MemoryWatch(memory)

    @classmethod
    def of(cls, spec) -> "RunLimits":
        from .spec import Rlimit

        by = {r.kind: r.value for r in spec.of(Rlimit)}
        return cls(by.get("nproc"), by.get("as"), stage=by.get("stage"))

    def _cgroups(self, pids: int | None, memory: int | None) -> None:
        name = f"ringfence-{os.getpid()}-{os.urandom(4).hex()}"
        own = _own_paths()
        v2 = _v2_mount()
        if v2 is not None and "" in own and _v1_mount("pids") is None:
            d = self._make(os.path.join(v2, own[""].lstrip("/"), name))
            if d is not None:
                self.v2 = True
                ok = (self._set(d, "pids.max", None if pids is None else pids + _SANDBOX_OWN)
                      and self._set(d, "memory.max", memory))
                if memory is not None:
                    self._set(d, "memory.swap.max", 0)
                if ok:
                    self.pids_dir = d if pids is not None else None
                    self.mem_dir = d if memory is not None else None
            return
        for ctrl in ("pids", "memory"):
            want = pids if ctrl == "pids" else memory
            mount = _v1_mount(ctrl)
            if want is None or mount is None or ctrl not in own:
                continue
            d = self._make(os.path.join(mount, own[ctrl].lstrip("/"), name))
            if d is None:
                continue
            key = "pids.max" if ctrl == "pids" else "memory.limit_in_bytes"
            if self._set(d, key, want + _SANDBOX_OWN if ctrl == "pids" else want):
                if ctrl == "pids":
                    self.pids_dir = d
                else:
                    self.mem_dir = d
                    self._set(d, "memory.memsw.limit_in_bytes", want)   # no swap escape

    def _make(self, d: str) -> str | None:
        _sweep(os.path.dirname(d))
        try:
            os.mkdir(d, 0o755)
        except OSError:
            return None
        self.dirs.append(d)
        return d

    @staticmethod
    def _set(d: str, key: str, value) -> bool:
        if value is None:
            return True
        try:
            _write(os.path.join(d, key), str(value))
            return True
        except OSError:
            return False

    @property
    def active(self) -> bool:
        return bool(self.pids or self.memory or self.stage_at)

    def watch_stage(self, upper: str) -> None:
        """Watch the stage's filesystem from now: its growth against the stage cap (the
        staged writes, and anything else writing there, which only makes the cap
        stricter), and the least free space seen, so a filesystem that filled up and
        was freed again during the run is still known to have cut a write."""
        try:
            st = os.statvfs(upper)
        except OSError:
            return
        self.stage_at, self.stage_free0 = upper, st.f_bavail * st.f_frsize
        self.stage_min_free = self.stage_free0

    def rlimits(self) -> dict[str, int | None]:
        """The rlimits the child gets where they are not the spec's values (None: not
        set). RLIMIT_NPROC counts every task of the user (root is exempt): ``pids``
        plus those, so only the command's own processes count against it. RLIMIT_AS:
        none under a memory cgroup (it breaks runtimes that reserve large virtual
        ranges: V8, the JVM, Go); else a backstop at AS_BACKSTOP x the cap, above
        which the watch's sum normally fires first (compiler/memwatch.py)."""
        out: dict[str, int | None] = {}
        if self.pids is not None and os.geteuid() != 0:
            out["nproc"] = self.pids + own_tasks() + _SANDBOX_OWN
        if self.memory is not None:
            out["as"] = None if self.mem_dir else self.memory * AS_BACKSTOP
        return out

    def after(self, result) -> tuple:
        """Notes on how the run ended that only the limits can tell (RF629: a failure
        that the address-space backstop may explain), printed and returned."""
        if self.mem is None or result.limit or not result.sandboxed:
            return ()
        note = self.mem.backstop_note(result.exit_code, result.stderr_tail)
        if note is None:
            return ()
        from .supervise import warn

        warn(note)
        return (note,)

    def no_cgroup_note(self):
        """RF626 when a pids or memory limit has no cgroup: weaker limits are never
        silent (the executor prints it for root and records it always)."""
        missing = [k for k, want in (("pids", self.pids), ("memory", self.memory))
                   if want is not None and k not in self.enforced]
        if not missing:
            return None
        from .spec import Note

        return Note("RF626", f"no cgroup for the run ({', '.join(missing)}): pids are "
                             "RLIMIT_NPROC and a count of the sandbox's pid namespace; "
                             "memory is ringfence's polled sum of the sandbox's memory and "
                             f"tmpfs use, RLIMIT_AS at {AS_BACKSTOP} x the cap per process, "
                             "and sized tmpfs mounts (docs/sandbox.md)")

    @property
    def enforced(self) -> tuple[str, ...]:
        return tuple(k for k, d in (("pids", self.pids_dir), ("memory", self.mem_dir)) if d)

    def preexec(self, then=None):
        """The child's first step: join the run's cgroup(s), then ``then``."""
        procs = [os.path.join(d, "cgroup.procs") for d in dict.fromkeys(
            x for x in (self.pids_dir, self.mem_dir) if x)]
        if not procs:
            return then

        def join() -> None:
            pid = str(os.getpid()).encode()
            for p in procs:
                fd = os.open(p, os.O_WRONLY)
                try:
                    os.write(fd, pid)
                finally:
                    os.close(fd)
            if then is not None:
                then()
        return join

    def watch(self, child_pid: int | None, peak: int | None = None) -> str | None:
        """"pids", "memory" or "stage" once a limit was hit, else None. Cheap: a few
        reads and one statvfs; without cgroups one scan of /proc and a status read per
        sandbox process. ``peak``: when the run has ended, its largest process's peak
        resident set (bytes)."""
        if self.stage_at is not None:
            try:
                st = os.statvfs(self.stage_at)
                free = st.f_bavail * st.f_frsize
                if st.f_favail == 0:
                    free = 0                    # out of inodes: as full
                self.stage_min_free = min(self.stage_min_free, free)
                if self.stage is not None and self.stage_free0 - free > self.stage:
                    return "stage"
            except OSError:
                pass
        if self.mem_dir:
            text = _read(os.path.join(self.mem_dir, "memory.events" if self.v2
                                      else "memory.oom_control"))
            if _counter(text, "oom_kill"):
                return "memory"
        if self.pids_dir:
            if _counter(_read(os.path.join(self.pids_dir, "pids.events")), "max"):
                return "pids"
        procs = self._ns_pids(child_pid) if child_pid and (
            self.mem is not None or (self.pids is not None and not self.pids_dir)) else []
        # The command's processes: the namespace's, but bwrap's init.
        if self.pids is not None and not self.pids_dir and len(procs) - 1 >= self.pids:
            return "pids"
        if self.mem is not None:
            if self.mem.peak_over(peak) or (procs and self.mem.over(child_pid, procs)):
                return "memory"
        return None

    def _ns_pids(self, child_pid: int) -> list[int]:
        if self.pidns is None:
            try:
                self.pidns = os.readlink(f"/proc/{child_pid}/ns/pid")
            except OSError:
                return []
        return ns_pids(self.pidns)

    def close(self) -> None:
        """Kill whatever is left in the run's cgroup(s), then remove them.

        In a long-lived process (a Session: ``staging.mount.later``) a cgroup already
        empty is removed by its worker thread instead: removing a v1 memory cgroup
        costs ~1.5 ms (its pages are reparented), and nothing is left in it to kill
        or to write. One that dies first leaves ``ringfence-PID-*``, which the next
        run's ``_sweep`` removes."""
        from ringfence.staging.mount import later

        defer = later()
        for d in reversed(self.dirs):
            if defer is not None and not _read(os.path.join(d, "cgroup.procs")).split():
                defer(functools.partial(_remove, d))
            else:
                _remove(d)
        self.dirs = []


def _remove(d: str) -> None:
    for _ in range(50):
        for p in _read(os.path.join(d, "cgroup.procs")).split():
            try:
                os.kill(int(p), signal.SIGKILL)
            except (OSError, ValueError):
                pass
        try:
            os.rmdir(d)
            return
        except FileNotFoundError:
            return
        except OSError:
            import time

            time.sleep(0.02)


def _sweep(parent: str) -> None:
    """Remove the cgroups of runs whose ringfence died (SIGKILL): ``ringfence-PID-*``
    with PID gone. What is left inside is the dead run's, so it is killed."""
    try:
        names = os.listdir(parent)
    except OSError:
        return
    for name in names:
        parts = name.split("-")
        if len(parts) != 3 or parts[0] != "ringfence" or not parts[1].isdigit():
            continue
        try:
            os.kill(int(parts[1]), 0)
            continue                    # that ringfence is alive (or the pid reused)
        except ProcessLookupError:
            pass
        except OSError:
            continue
        _remove(os.path.join(parent, name))
