"""What a warm process removes off a run's critical path: settled stages and empty
cgroups go to one worker thread, and the caller gets its Result first (a Session
only; a one-shot ``ringfence run`` removes them before it exits)."""

from __future__ import annotations

import threading

_TRASH = None                      # a queue.SimpleQueue once the worker started
_TRASH_LOCK = threading.Lock()


def stage_later():
    """From now on in this thread, a settled stage's removal (~15 ms of overlayfs
    rmdirs) and a run's empty cgroups' go to the worker. The stage is renamed out of
    the way at once (ringfence/staging/mount.py), so nothing ever reads it as a run's
    stage. Returns the token for ``stage_now``."""
    from ringfence.staging import mount as stage

    global _TRASH
    with _TRASH_LOCK:
        if _TRASH is None:
            import queue

            _TRASH = queue.SimpleQueue()
            threading.Thread(target=_empty_trash, args=(_TRASH,), daemon=True,
                             name="ringfence-stage-trash").start()
    return stage.remove_later(_TRASH.put)


def stage_now(token) -> None:
    from ringfence.staging import mount as stage

    stage.reset_later(token)


def _empty_trash(q) -> None:
    from ringfence.staging import mount as stage

    while True:
        item = q.get()
        try:
            if callable(item):
                item()      # a run's empty cgroup (compiler/limits.py)
            else:
                stage.remove_trash(item)
        except OSError:
            pass        # left for the next recover() / _sweep, which remove a dead
            #             process's trash and cgroups
