"""Stages left behind: what `doctor` lists and what the next run recovers.

A stage outlives its run when ringfence is killed mid-run, when settle fails
(RF644) or when a killed run's writes are held. ``leftovers`` lists them all
with their state, ``unsettled`` the ones that need a person, and ``recover``
(the next run, RF642) reports a dead run's stage once and removes its trash.
Split from ``mount.py`` (the overlay itself), which it reads.
"""

from __future__ import annotations

import os

from ringfence.rfcore.fsops import remove_tree  # noqa: F401 - used by recover

from .mount import (OWN, TRASH, Stage, alive, load, proc_start, remove_trash,  # noqa: F401
                    stage_root)

def leftovers(state: str) -> list[dict]:
    """Every stage dir present (doctor): path, state, pid, bytes (held ones included)."""
    root = stage_root(state)
    try:
        names = sorted(os.listdir(root))
    except OSError:
        return []
    out = []
    for name in names:
        path = os.path.join(root, name)
        meta = Stage(path, "").meta()
        st = meta.get("state") or "unknown"
        if st in ("running", "settling") and alive(meta):
            st = "running now"
        size = 0
        stack = [path]                  # iterative: a stage may be any depth
        while stack:
            try:
                with os.scandir(stack.pop()) as it:
                    for e in it:
                        try:
                            est = e.stat(follow_symlinks=False)
                        except OSError:
                            continue
                        size += est.st_blocks * 512
                        if e.is_dir(follow_symlinks=False):
                            stack.append(e.path)
            except OSError:
                pass
        out.append({"path": path, "state": st, "pid": meta.get("pid"), "bytes": size})
    return out


def recover(state: str) -> list:
    """Stages of dead runs that never settled (ringfence was SIGKILLed): their
    writes were never applied; say so (RF642), and remove their proxy runtime dirs.
    Costs one ``listdir`` when there are none."""
    from ringfence.rfcore.notes import Note

    root = stage_root(state)
    try:
        names = sorted(os.listdir(root))
    except OSError:
        return []
    notes = []
    for name in names:
        if name.startswith(TRASH):
            _remove_dead_trash(root, name)
            continue
        if os.path.join(root, name) in OWN:
            continue                # a warm Session's spare, or a run going on here
        s = load(os.path.join(root, name))
        if s is None:
            continue
        meta = s.meta()
        if meta.get("state") == "spare" and not alive(meta):
            # A spare sandbox's stage (compiler/spare.py) whose process died before a
            # run used it: nothing ever ran in it, so nothing to report.
            if meta.get("runtime_dir"):
                remove_tree(meta["runtime_dir"])
            s.remove()
            continue
        if meta.get("state") not in ("running", "settling") or alive(meta):
            continue
        if meta.get("runtime_dir"):
            remove_tree(meta["runtime_dir"])
        from ringfence.staging.copyin import replay_journal

        applied = replay_journal(s.path, s.workspace)
        s.write_meta(state="interrupted", runtime_dir=None, applied=applied)
        if applied:
            shown = ", ".join(applied[:10]) + (f" and {len(applied) - 10} more"
                                               if len(applied) > 10 else "")
            notes.append(Note("RF642", f"an interrupted run (pid {meta.get('pid')}) was "
                              f"killed while its writes were being applied: partly applied "
                              f"to {s.workspace} ({len(applied)} path(s): {shown}); the rest "
                              f"is kept, not applied, in {s.path}"))
        else:
            what = ("never applied to" if meta.get("state") == "running" else
                    "killed while being applied to, before any reached")
            notes.append(Note("RF642", f"an interrupted run (pid {meta.get('pid')}) left "
                              f"its staged writes, {what} {s.workspace}, in {s.path}"))
    return notes


def unsettled(state: str) -> list[tuple[str, str]]:
    """[(stage dir, why)] of stages kept because settling them failed (RF644) or
    their run was interrupted (RF642): ``doctor`` lists them."""
    root = stage_root(state)
    try:
        names = sorted(os.listdir(root))
    except OSError:
        return []
    out = []
    for name in names:
        s = load(os.path.join(root, name))
        meta = s.meta() if s is not None else {}
        if meta.get("state") in ("settle_error", "unreadable", "interrupted"):
            out.append((s.path, meta.get("error") or meta["state"]))
    return out


def _remove_dead_trash(root: str, name: str) -> None:
    pid = name[len(TRASH):].split("-", 1)[0]
    if pid.isdigit() and int(pid) != os.getpid() and proc_start(int(pid)) is None:
        remove_trash(os.path.join(root, name))
