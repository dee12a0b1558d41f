"""Reap the sandbox's init, which bwrap leaves behind (issue 10 §8).

bwrap's outer process exits as soon as its init reports the command's exit
status, without waiting for that init: the init then exits an instant later as
an orphan, reparented to pid 1 (``[bwrap] <defunct>``). Under an init that never
reaps (a container without ``--init``) those pile up.
"""

from __future__ import annotations

import json
import os
import signal
import time


_LIBC: list = []


class Subreaper:
    """For one run: ringfence is a child subreaper and reaps the sandbox's init.

    For the run, ringfence is a child subreaper, so the orphan comes to it, and it waits for
    exactly that pid (``child-pid`` on the json-status fd), never for any other
    child. The init reaps everything else in its pid namespace as it dies. The
    previous subreaper setting is restored afterwards.
    """

    PR_SET, PR_GET = 36, 37      # PR_SET_CHILD_SUBREAPER, PR_GET_CHILD_SUBREAPER

    def __init__(self) -> None:
        import ctypes

        self._ctypes = ctypes
        if not _LIBC:                   # one handle per process (a warm Session's runs)
            _LIBC.append(ctypes.CDLL(None, use_errno=True))
        self._libc = _LIBC[0]
        prev = ctypes.c_int(0)
        self._libc.prctl(self.PR_GET, ctypes.byref(prev), 0, 0, 0)
        self._prev = prev.value
        self._on = self._prev != 0 or self._libc.prctl(self.PR_SET, 1, 0, 0, 0) == 0

    def release(self) -> None:
        if self._on and not self._prev:
            self._libc.prctl(self.PR_SET, 0, 0, 0, 0)
        self._on = False

    def reap(self, pid: int | None) -> int | None:
        """Reap the init; its peak resident set (bytes, wait4's ``ru_maxrss``: its own
        or its reaped descendants', the command's among them), if we reaped it."""
        try:
            if pid is not None and self._on:
                return _reap(pid)
            return None
        finally:
            self.release()


def _reap(pid: int, grace: float = 5.0) -> int | None:
    """Wait for ``pid`` if it is our child; SIGKILL it after ``grace`` seconds.

    Only a pid that waitpid says is our own, not yet reaped child is ever
    signalled, so a recycled pid can never be hit (an unreaped child keeps its
    pid). The wait is a poll on a pidfd, so it ends the instant the init exits.
    """
    try:
        done, _, usage = os.wait4(pid, os.WNOHANG)
    except ChildProcessError:
        return None             # reaped by bwrap itself, or never ours
    if done:
        return usage.ru_maxrss * 1024
    _wait_exit(pid, grace)
    try:
        done, _, usage = os.wait4(pid, os.WNOHANG)
        if not done:
            os.kill(pid, signal.SIGKILL)
            _, _, usage = os.wait4(pid, 0)
        return usage.ru_maxrss * 1024
    except ChildProcessError:
        return None


def _wait_exit(pid: int, timeout: float) -> None:
    """Block until ``pid`` (our unreaped child) exits, or ``timeout`` seconds."""
    import select

    try:
        fd = os.pidfd_open(pid)
    except OSError:              # no pidfd (Linux < 5.3): poll waitpid instead
        end = time.monotonic() + timeout
        try:
            while time.monotonic() < end and os.waitpid(pid, os.WNOHANG)[0] == 0:
                time.sleep(0.002)
        except ChildProcessError:
            pass
        return
    try:
        poller = select.poll()
        poller.register(fd, select.POLLIN)
        poller.poll(int(timeout * 1000))
    finally:
        os.close(fd)


def child_pid(status: bytes) -> int | None:
    """The host pid of the sandbox's init, from bwrap's json-status fd."""
    for line in status.decode("utf-8", "replace").splitlines():
        try:
            doc = json.loads(line)
        except ValueError:
            continue
        if isinstance(doc, dict) and isinstance(doc.get("child-pid"), int):
            return doc["child-pid"]
    return None
