"""A spare sandbox: the next run's bwrap, set up ahead of time (issue 24 item 4).

After a Session run, its pool's maker thread sets up the *next* sandbox for the
same compiled spec (``compiler/startup.py``: stage, overlay, seccomp/env/config
memfds, proxy, cgroup) and starts bwrap with a tiny launcher as its command: bash
blocked reading the real argv from a pipe (``LAUNCHER``). The next run does all
of its deciding as before (classify, gate, ledger row, compile), and uses the
spare only when it is provably the sandbox a cold start would build now
(``compiler/sparecheck.py``):

* the spec's digest, the environment bwrap sets (``env_args``), bwrap, the
  interpreter and the arch are the same;
* every host path the spec mounts from or onto (bind sources and targets, masks,
  sanitized sources, the workspace, the working directory) and each of their
  ancestors has the same (st_dev, st_ino, st_mtime_ns, st_ctime_ns) now as
  sampled before the spare was set up and again once its launcher said it was
  ready; no sampled time was within ``RACY_NS`` of the first sample
  (``compiler/factcache.py``'s rule). A mask is a mount on a *dentry*: a ``.env``
  replaced by ``rename(2)`` since is a new dentry the mask does not cover, and
  its directory's times say so;
* the spare is alive and younger than ``MAX_AGE``.

Never for: a credential broker (its tokens live only while its run lives), a
stdin that is not /dev/null, an unsandboxed spec, an argv over ``MAX_ARGV``
bytes (bash reads a pipe bytewise), or a command that is not ``bash -c``.
Anything else: the spare is killed and the run starts cold, as it would have.

The launcher runs nothing but the argv it is handed, whole: a count first, then
exactly that many NUL-terminated words, else it exits. A spare that is not used
is killed (bwrap, and with ``--die-with-parent`` the whole sandbox), its stage
removed, its proxy stopped: when the pool is closed, the Session collected, or
the process exits (atexit; ``--die-with-parent`` is tied to the maker *thread*
that forked bwrap, which lives as long as the pool). A dead process's spare stage
(state ``spare``) is removed by the next ``recover()`` (staging/stale.py).

Only stdlib + our packages. The Session owns the pool (``session/api.py``) and
activates it for its runs; ``compiler/execute.py`` asks ``current()``.
"""

from __future__ import annotations

import atexit
import os
import select
import subprocess
import threading
import time
import weakref
from contextlib import contextmanager
from contextvars import ContextVar

from .secretmasks import RACY_NS
from .sparecheck import (MAX_ARGV, VARS, _racy, _sets_ours, fits, key, paths,  # noqa: F401
                         sample, stage_space)

MAX_AGE = 600.0             # seconds a spare may wait before it is replaced
READY_WAIT = 10.0           # seconds a launcher has to say it is ready
RACY_WAIT = 3.0             # seconds the maker waits for a racy sample to settle
SETTLE = 0.03               # seconds between a run's end and its spare's set-up


def launcher(r: int, w: int) -> str:
    """The spare's command (run by ``bash -p``): say ready on ``w``, then read a count and exactly that
    many NUL-terminated words from ``r``, close both, and exec them; anything short
    (EOF: the spare was discarded) runs nothing."""
    n, a, x = VARS[:3]
    return (f'printf . >&{w}; exec {w}>&-; IFS= read -r -d "" {n} <&{r} || exit 0; '
            f'{a}=(); while [ ${{#{a}[@]}} -lt "${n}" ] && IFS= read -r -d "" {x} <&{r}; '
            f'do {a}+=("${x}"); done; [ ${{#{a}[@]}} -eq "${n}" ] || exit 0; exec {r}<&-; '
            f'exec "${{{a}[@]}}"')


_CURRENT: ContextVar["Pool | None"] = ContextVar("ringfence_spare", default=None)
_POOLS: "weakref.WeakSet[Pool]" = weakref.WeakSet()


def current() -> "Pool | None":
    return _CURRENT.get()


def pool_for(owner, wanted: bool | None, env) -> "Pool | None":
    """A pool for ``owner`` (a Session), closed when it is collected; None when
    ``wanted`` is False, or None and ``RINGFENCE_SPARE`` is 0/off/no."""
    if wanted is None:
        wanted = env.get("RINGFENCE_SPARE", "1").strip().lower() not in ("0", "off", "no")
    if not wanted:
        return None
    pool = Pool()
    weakref.finalize(owner, pool.close)
    return pool


@contextmanager
def active(pool: "Pool | None"):
    """``pool`` is the current one while the block runs (a Session's run); the
    caller then ``kick``s it once its Result is ready."""
    if pool is not None:
        pool.used, pool.why_not = False, None
    handle = _CURRENT.set(pool)
    try:
        yield pool
    finally:
        _CURRENT.reset(handle)


class SpareGone(Exception):
    """The spare died as it was handed its argv: nothing ran; the run starts cold."""


class Spare:
    """A started sandbox whose launcher waits for its argv (the module doc)."""

    def __init__(self, setup, proc, argv_w: int, ident: tuple, names, sig, notes) -> None:
        self.setup, self.proc, self.argv_w = setup, proc, argv_w
        self.key, self.names, self.sig, self.notes = ident, names, sig, tuple(notes)
        self.born = time.monotonic()
        self._argv: list[str] = []
        self.pool: "Pool | None" = None     # the pool that handed it to a run

    def done(self) -> None:
        """The run that took it is over (or never started): its maker may end now."""
        pool, self.pool = self.pool, None
        if pool is not None:
            with pool._cond:
                pool._inuse -= 1
                pool._cond.notify_all()

    def usable(self, ident: tuple) -> str | None:
        """Why this spare is not the sandbox a cold start would build now (None: it is)."""
        if self.proc.poll() is not None:
            return "its sandbox died"
        if time.monotonic() - self.born > MAX_AGE:
            return "it is older than MAX_AGE"
        if ident != self.key:
            return "the compiled sandbox differs"
        if sample(self.names) != self.sig:
            return "a path it mounts changed since it was set up"
        return stage_space(self.setup.stage)

    def release(self):
        """Hand the argv over; returns the running bwrap's Popen (supervise)."""
        argv = self._argv
        data = b"".join(a.encode("utf-8", "surrogateescape") + b"\0"
                        for a in [str(len(argv))] + list(argv))
        if self.setup.stage is not None:
            self.setup.stage.mark_taken()       # a run's stage from now on (state running)
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(self.argv_w, view):]
        except OSError:         # EPIPE: the launcher died; it ran nothing (not all words)
            self.proc.kill()
            self.proc.wait()
            for pipe in (self.proc.stdout, self.proc.stderr):
                pipe.close()
            raise SpareGone() from None
        finally:
            os.close(self.argv_w)
            self.argv_w = None
        return self.proc

    def kill(self) -> None:
        """Kill it (the whole sandbox with bwrap), remove its stage, stop its proxy."""
        from .reap import _reap, child_pid

        if self.argv_w is not None:
            os.close(self.argv_w)       # EOF: the launcher would run nothing
            self.argv_w = None
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait()
        status = b""
        try:
            os.set_blocking(self.setup.status_r, False)
            status = os.read(self.setup.status_r, 4096)
        except OSError:
            pass
        pid = child_pid(status)
        if pid is not None:
            _reap(pid, grace=1.0)       # only if it came to us (a subreaper was on)
        for pipe in (self.proc.stdout, self.proc.stderr):
            pipe.close()
        self.setup.close(ran=False)


class Pool:
    """One Session's spare, and the maker thread that sets it up (the module doc)."""

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._slot: Spare | None = None
        self._wanted = None
        self._next = None               # asked for by the run going on (want, kick)
        self._building = False
        self._epoch = 0                 # runs that asked for a spare
        self._fail: str | None = None   # why the maker made none, last time
        self._closed = False
        self._thread: threading.Thread | None = None
        # Spares handed to runs still going: their bwrap dies with the maker thread
        # (--die-with-parent is per thread), so it outlives close() until they end.
        self._inuse = 0
        self.used = False               # did the last run use a spare?
        self.why_not: str | None = None     # ... and if not, why (tests, docs)
        _POOLS.add(self)

    def want(self, spec, host, env) -> None:
        """Set up a spare for the next run of this spec, once this run is over
        (``kick``): made meanwhile, it would slow the run's settle and Result."""
        self._next = (spec, host, dict(env))

    def kick(self) -> None:
        """The run is over: the maker thread sets up what ``want`` asked for."""
        with self._cond:
            wanted, self._next = self._next, None
            if self._closed or wanted is None:
                return
            self._wanted = wanted
            if self._thread is None:
                self._thread = threading.Thread(target=self._make, daemon=True,
                                                name="ringfence-spare")
                self._thread.start()
            self._cond.notify_all()

    def ready(self) -> bool:
        """A spare is set up (or being set up) for the next run: its cgroup was
        joined then, so the run need not warm the join (compiler/cgprime.py)."""
        return self._slot is not None or self._building

    def take(self, spec, argv, host, env) -> Spare | None:
        """The spare, if it is provably this run's sandbox; else None (cold)."""
        self.used = False
        with self._cond:
            self._epoch += 1
            self._cond.notify_all()
            end = time.monotonic() + READY_WAIT
            while self._building and not self._closed and time.monotonic() < end:
                self._cond.wait(end - time.monotonic())
            spare, self._slot = self._slot, None
        if spare is None:
            fail, self._fail = self._fail, None
            self.why_not = "no spare was ready" + (f" ({fail})" if fail else "")
            return None
        ident = key(spec, host, env)
        why = spare.usable(ident)
        if why is None and _sets_ours(ident[1]):
            why = "the environment sets a variable the launcher uses"
        if why is not None:
            self.why_not = why
            spare.kill()
            return None
        spare._argv = list(argv)
        with self._cond:
            self._inuse += 1
            spare.pool = self
        self.used, self.why_not = True, None
        return spare

    def close(self) -> None:
        with self._cond:
            self._closed = True
            spare, self._slot = self._slot, None
            self._cond.notify_all()
            thread, busy = self._thread, self._inuse > 0
        if spare is not None:
            spare.kill()
        if thread is not None and thread is not threading.current_thread() and not busy:
            thread.join(READY_WAIT + RACY_WAIT + 5)

    # --- the maker thread ---------------------------------------------------------

    def _expired(self) -> bool:
        return self._slot is not None and time.monotonic() - self._slot.born > MAX_AGE

    def _make(self) -> None:
        while True:
            old = wanted = None
            with self._cond:
                self._cond.wait_for(lambda: self._closed or self._wanted is not None
                                    or self._expired(), MAX_AGE / 4)
                if self._wanted is not None and not self._closed:
                    # Let the caller deliver its Result first (an MCP reply): the set-up
                    # holds the GIL for a few ms. A run meanwhile starts cold at once.
                    epoch = self._epoch
                    self._cond.wait_for(lambda: self._closed or self._epoch != epoch,
                                        SETTLE)
                    if self._epoch != epoch:
                        self._wanted = None
                        continue
                if self._closed:
                    # Not before a run on one of our spares ends: bwrap's parent is
                    # this thread, and its end would SIGKILL that run's sandbox.
                    self._cond.wait_for(lambda: self._inuse <= 0)
                    return
                if self._wanted is not None:
                    wanted, self._wanted = self._wanted, None
                    old, self._slot = self._slot, None
                    self._building = True
                elif self._expired():
                    old, self._slot = self._slot, None
            if old is not None:
                old.kill()
            if wanted is None:
                continue
            made = None
            try:
                made = self._build(*wanted)
            except Exception as exc:       # noqa: BLE001 - the next run starts cold, as ever
                self._fail = f"setting a spare up failed: {exc}"
            with self._cond:
                self._building = False
                if made is not None and not self._closed and self._wanted is None:
                    self._slot, made = made, None
                self._cond.notify_all()
            if made is not None:
                made.kill()             # closed meanwhile, or a newer spec is wanted

    def _build(self, spec, host, env) -> Spare | None:
        from .host import HOST_ENV
        from .startup import Setup

        names = paths(spec)
        sig = sample(names)
        late = _racy(sig, time.time_ns())
        if late:
            wait = (late + RACY_NS - time.time_ns()) / 1e9 + 0.01
            if wait > RACY_WAIT:
                self._fail = "a path it mounts changed too recently"
                return None
            with self._cond:
                # Not "building" while it waits: a run meanwhile starts cold at once.
                epoch, self._building = self._epoch, False
                self._cond.notify_all()
                self._cond.wait_for(lambda: self._closed or self._wanted is not None
                                    or self._epoch != epoch, wait)
                if self._closed or self._wanted is not None or self._epoch != epoch:
                    return None
                self._building = True
            sig = sample(names)
            if _racy(sig, time.time_ns()):
                self._fail = "a path it mounts changed too recently"
                return None
        notes: list = []
        argv_r, argv_w = os.pipe()
        ready_r, ready_w = os.pipe()
        s = None
        proc = None
        try:
            # bwrap passes inherited fds through: the launcher reads the pipes there.
            s = Setup.build(spec, ["bash", "-p", "-c", launcher(argv_r, ready_w)], host=host,
                            env=env, degradations=notes, shown=None, stage_state="spare")
            proc = subprocess.Popen(s.bargv, env=dict(HOST_ENV), stdin=subprocess.DEVNULL,
                                    stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                    pass_fds=s.pass_fds() + (argv_r, ready_w),
                                    preexec_fn=s.pre)
        except BaseException:
            for fd in (argv_r, argv_w, ready_r, ready_w):
                os.close(fd)
            if s is not None:
                s.close(ran=False)
            raise
        finally:
            if s is not None and s.status_w is not None:
                os.close(s.status_w)
                s.status_w = None
            if s is not None and s.stage_w is not None:
                os.close(s.stage_w)
                s.stage_w = None
        os.close(argv_r)
        os.close(ready_w)
        spare = Spare(s, proc, argv_w, key(spec, host, env), names, sig, notes)
        try:
            ready, _, _ = select.select([ready_r], [], [], READY_WAIT)
            ok = bool(ready) and os.read(ready_r, 1) == b"."
        finally:
            os.close(ready_r)
        if not ok:
            self._fail = "its launcher never said it was ready"
        elif sample(names) != sig:
            self._fail = "a path it mounts changed while it was set up"
        else:
            return spare
        spare.kill()
        return None


@atexit.register
def _close_all() -> None:
    for pool in list(_POOLS):
        try:
            pool.close()
        except Exception:       # noqa: BLE001 - exiting; --die-with-parent still holds
            pass
