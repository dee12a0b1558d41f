"""A cancel switch for one run, seen by whatever starts its process (issue 24).

``ringfence.Session.cancel(run_id)`` and an MCP ``shell`` call the client cancels
must kill the whole sandbox, not leave it running behind a caller that gave up. The
code that starts the process (``compiler/supervise.py`` for a sandbox,
``session/on_host`` for the host) is deep below the Session, so the switch travels
in a context variable instead of through every signature: ``activate(token)`` in
the caller's thread, ``current()`` where the process starts. A context variable is
per thread (and per task), so concurrent runs never see each other's switch.

Only stdlib: ``supervise`` sits on the ``ringfence run`` hot path.
"""

from __future__ import annotations

import threading
from contextvars import ContextVar

_CURRENT: ContextVar["CancelToken | None"] = ContextVar("ringfence_cancel", default=None)


class CancelToken:
    """Set once; kills the attached process now, or the next one attached."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._kill = None
        self.cancelled = False
        self.run_id: str | None = None       # set by the Session once the run row exists

    def attach(self, kill) -> None:
        """``kill()`` ends the started process (and with it the sandbox)."""
        with self._lock:
            self._kill = kill
            late = self.cancelled
        if late:
            kill()

    def detach(self) -> None:
        with self._lock:
            self._kill = None

    def cancel(self) -> None:
        with self._lock:
            self.cancelled = True
            kill = self._kill
        if kill is not None:
            kill()


def current() -> CancelToken | None:
    return _CURRENT.get()


def activate(token: CancelToken | None):
    """Make ``token`` the current switch; returns what ``deactivate`` needs."""
    return _CURRENT.set(token)


def deactivate(handle) -> None:
    _CURRENT.reset(handle)
