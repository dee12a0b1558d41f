"""Protected paths that do not exist yet: journal before, check after.

Why not mount something over a missing ``.envrc`` or ``.git/hooks``? bwrap
would have to create a mount point for it in the writable (bind-mounted)
workspace, i.e. a placeholder file on the HOST, which a SIGKILL of ringfence
would leave behind. So nothing is created. Instead:

1. before the run, a journal (``<state>/journal/<pid>-<n>.json``) records every
   protected path under a writable root: absent, or present with its identity
   (device, inode) so a rename-and-recreate is noticed too;
2. after the run, a protected path that now exists but did not before was
   created by the sandbox: it is reported (RF604) and moved out of the
   workspace into ``<state>/quarantine/`` (not deleted: nothing is lost, and
   the host never obeys it). A present path whose identity changed is reported
   (RF605);
3. a journal whose process died (SIGKILL) is processed by the next ringfence
   invocation and by ``doctor``, so even then nothing survives unreported.

The journal also names the run's private runtime dir (the staged launcher), which the
recovery removes.
"""

from __future__ import annotations

import glob
import json
import os
import shutil
import time
from ringfence.rfcore.records import field, record
from typing import Mapping

from .spec import Note, Protect, SandboxSpec


from ringfence.rfcore.paths import state_dir  # noqa: E402  (re-exported for callers)


def _identity(path: str) -> list[int] | None:
    # Not just (dev, inode): a removed file's inode is reused at once by the next
    # file created, so `rm .envrc; echo evil > .envrc` would keep the same number.
    # The type and the change time tell the two apart.
    try:
        st = os.lstat(path)
    except OSError:
        return None
    return [st.st_dev, st.st_ino, st.st_mode, st.st_ctime_ns]


def _proc_start(pid: int) -> str | None:
    """Start time of ``pid`` (field 22 of /proc/PID/stat): defeats pid reuse."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii", errors="replace") as fh:
            return fh.read().rsplit(")", 1)[1].split()[19]
    except (OSError, IndexError):
        return None


@record(frozen=False)
class Journal:
    path: str
    state: str
    entries: list[dict] = field(default_factory=list)
    runtime_dir: str | None = None

    def _write(self) -> None:
        data = {"pid": os.getpid(), "start": _proc_start(os.getpid()),
                "entries": self.entries, "runtime_dir": self.runtime_dir}
        tmp = self.path + ".tmp"
        with open(tmp, "w", encoding="utf-8") as fh:
            json.dump(data, fh)
        # No fsync: a SIGKILL of ringfence does not lose written data (it is in the
        # page cache); only a machine crash would, and that also ends the sandbox.
        os.replace(tmp, self.path)

    def set_runtime_dir(self, path: str) -> None:
        self.runtime_dir = path
        self._write()


def begin(spec: SandboxSpec, env: Mapping[str, str] | None = None) -> Journal:
    state = state_dir(env)
    jdir = os.path.join(state, "journal")
    os.makedirs(jdir, mode=0o700, exist_ok=True)
    entries = []
    for op in spec.of(Protect):
        if any(c in op.path for c in "*?["):
            found = sorted(glob.glob(op.path, recursive=True, include_hidden=True))
            entries.append({"path": op.path, "glob": True, "before": found})
        else:
            entries.append({"path": op.path, "glob": False, "before": _identity(op.path)})
    name = f"{os.getpid()}-{time.monotonic_ns()}.json"
    journal = Journal(os.path.join(jdir, name), state, entries)
    journal._write()
    return journal


def _quarantine(path: str, state: str) -> str:
    dest_root = os.path.join(state, "quarantine", time.strftime("%Y%m%dT%H%M%S"))
    dest = os.path.join(dest_root, path.lstrip("/"))
    os.makedirs(os.path.dirname(dest), mode=0o700, exist_ok=True)
    n = 0
    while os.path.lexists(dest):
        n += 1
        dest = f"{dest}.{n}"
    shutil.move(path, dest)     # moves a symlink itself, never its target
    return dest


def _check(entries: list[dict], state: str) -> list[Note]:
    notes: list[Note] = []
    for entry in entries:
        path = entry["path"]
        if entry["glob"]:
            now = sorted(glob.glob(path, recursive=True, include_hidden=True))
            created = [p for p in now if p not in set(entry["before"])]
        else:
            ident = _identity(path)
            created = [path] if entry["before"] is None and ident is not None else []
            if entry["before"] is not None and ident != entry["before"]:
                if ident is None:
                    notes.append(Note("RF605", f"protected path {path} was removed or "
                                      "moved away during the run"))
                else:
                    # Whatever sits there now is not what we protected: the sandbox
                    # put it there, so it leaves the workspace like a created one.
                    try:
                        where = _quarantine(path, state)
                        notes.append(Note("RF605", f"protected path {path} was replaced "
                                          f"during the run; the replacement was moved to {where}"))
                    except OSError as exc:
                        notes.append(Note("RF605", f"protected path {path} was replaced "
                                          f"during the run and could not be removed ({exc})"))
        for p in created:
            try:
                where = _quarantine(p, state)
                notes.append(Note("RF604", f"the sandbox created protected path {p}; "
                                  f"moved to {where}"))
            except OSError as exc:
                notes.append(Note("RF604", f"the sandbox created protected path {p} and "
                                  f"it could not be removed ({exc}); remove it by hand"))
    return notes


def finish(journal: Journal) -> list[Note]:
    notes = _check(journal.entries, journal.state)
    _cleanup_runtime(journal.runtime_dir)
    try:
        os.unlink(journal.path)
    except OSError:
        pass
    return notes


def _cleanup_runtime(path: str | None) -> None:
    if path and os.path.isdir(path):
        shutil.rmtree(path, ignore_errors=True)


def recover(env: Mapping[str, str] | None = None) -> list[Note]:
    """Process journals left by dead ringfence processes (e.g. after SIGKILL)."""
    state = state_dir(env)
    jdir = os.path.join(state, "journal")
    try:
        names = os.listdir(jdir)
    except OSError:
        return []
    notes: list[Note] = []
    for name in sorted(names):
        if not name.endswith(".json"):
            continue
        path = os.path.join(jdir, name)
        try:
            with open(path, encoding="utf-8") as fh:
                data = json.load(fh)
            pid = int(data["pid"])
        except (OSError, ValueError, KeyError, TypeError):
            continue
        if _proc_start(pid) is not None and _proc_start(pid) == data.get("start"):
            continue        # still running: not ours to touch
        found = _check(data.get("entries", []), state)
        notes.append(Note("RF615", f"recovered the journal of an interrupted run "
                          f"(pid {pid}); {len(found)} protected-path finding(s)"))
        notes.extend(found)
        _cleanup_runtime(data.get("runtime_dir"))
        try:
            os.unlink(path)
        except OSError:
            pass
    return notes
