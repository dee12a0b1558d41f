"""Settle a staged run: record its changes, apply the harmless ones, hold the rest.

``settle(stage, profile, env)`` runs after the sandbox is gone. It builds the
host-obeyed registry for this workspace from its PRE-run state (the workspace is
still the overlay's untouched lower layer: ``core.hooksPath`` and include targets
are read from the config the host obeys now, never from the sandbox's), plans
from the upper dir, applies what is harmless, and keeps the stage (with
``meta.json``) when something is held, for ``ringfence approve RUN_ID`` /
``ringfence deny RUN_ID``.

The change record keeps the ledger's shape (``created``/``modified``/``deleted``
lists of workspace-relative paths, ``capped``, ``unreadable_dirs``) and adds
``staged: true``, ``held`` (``[{path, op, why}]``), ``stage`` (the stage id) and
``not_applied`` (``[{path, why}]``, what could not be applied safely, RF643).
"""

from __future__ import annotations

import os
from typing import Mapping

from ringfence.staging import mount as stg
from ringfence.rfcore.notes import Note
from ringfence.rfcore.records import record

# apply/obeyed are imported where used: a run that wrote nothing (most of them)
# settles without loading them.


@record
class Settled:
    changes: dict
    held: tuple = ()
    notes: tuple = ()
    stage: str | None = None          # the stage dir, kept while something is held
    limit: str | None = None          # "stage" | "file_size": the stage broke a limit


def prewarm() -> None:
    """Load what settling a run that wrote something needs (the judges, the git
    readers, the registry's name tables): a fresh ``ringfence run`` process pays
    about 30 ms for it on first use. Called in a background thread while the
    command is still running (``compiler/execute.py``), so a run that wrote files
    does not pay it after the command ended; settling itself never depends on it."""
    from ringfence.staging import apply, entry, judges, links, place, shadow  # noqa: F401
    from ringfence.staging.git import (config, discovery, file_judges, hookdirs,  # noqa: F401
                                       index, keys, repo_judges)

    judges._tables()


# While a staged command runs, its upper dir is looked at this often (seconds); once
# it holds something, what settles those writes is loaded meanwhile, on the core
# the command leaves idle. A run that writes nothing (`true`, `ls`) never pays.
PREWARM_EVERY = 0.01


def prewarm_soon(upper: str):
    """Start watching ``upper`` for a first write, then ``prewarm``, in a daemon
    thread; call ``.done()`` on the returned watcher when the command ended, before
    settling: it stops the watch and waits for a load under way, so settle never
    imports a module another thread is importing (the import system can refuse
    that as a deadlock). None when already loaded (a warm Session, the MCP server)."""
    import sys

    done = sys.modules.get("ringfence.staging.judges")
    if done is not None and done._TABLES and "ringfence.staging.git.repo_judges" in sys.modules:
        return None
    return _Watch(upper)


class _Watch:
    def __init__(self, upper: str) -> None:
        import threading

        self.upper, self.stop = upper, threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True,
                                       name="ringfence-prewarm")
        self.thread.start()

    def _run(self) -> None:
        try:
            while not self.stop.wait(PREWARM_EVERY):
                with os.scandir(self.upper) as it:
                    if next(it, None) is not None:
                        prewarm()
                        return
        except Exception:    # noqa: BLE001 - a hint only: settle imports what it needs
            pass

    def done(self) -> None:
        self.stop.set()
        self.thread.join()


def _inside(path: str, root: str) -> str | None:
    path = os.path.normpath(path)
    if path == root:
        return ""
    if path.startswith(root.rstrip("/") + "/"):
        return path[len(root.rstrip("/")) + 1:]
    return None


def registry_for(workspace: str, profile=None, env: Mapping[str, str] | None = None,
                 secret_hits=()):
    """The registry (``obeyed.Registry``), with the pre-run config's hooksPath/include
    targets and the profile's write_protect entries and ringfence's private dirs in
    the workspace."""
    from ringfence.staging.judges import Registry

    env = os.environ if env is None else env
    extra: dict[str, tuple[str, str]] = {}
    globs: list[str] = []
    home = env.get("HOME") or os.path.expanduser("~")
    xdg = env.get("XDG_CONFIG_HOME") or os.path.join(home, ".config")
    from ringfence.staging.git.discovery import View
    from ringfence.staging.git.hookdirs import Owners, add_rows, targets

    configs = [os.path.join(home, ".gitconfig"), os.path.join(xdg, "git", "config")]
    add_rows(extra, workspace, targets(workspace, home, configs), View(None, workspace))
    if profile is not None:
        for entry in getattr(profile.filesystem, "write_protect", ()):
            entry = entry.rstrip("/")
            if entry.startswith("{workspace}/"):
                entry = entry[len("{workspace}/"):]
            elif entry.startswith(("/", "~")):
                rel = _inside(os.path.expanduser(entry) if entry.startswith("~") else entry,
                              workspace)
                if not rel:
                    continue
                entry = rel
            if any(c in entry for c in "*?["):
                globs.append(entry)
            elif extra.get(entry, ("",))[0] != "hook":     # an include target too: held
                extra[entry] = ("held", "the profile write-protects it (filesystem.write_protect)")
    from ringfence.rfcore.paths import private_dirs

    for d in private_dirs(env):
        rel = _inside(os.path.realpath(d), workspace)
        if rel:
            extra[rel] = ("held", "ringfence's own state: a sandbox must never write it")
    for rel in secret_hits:
        # A file the run wrote with a brokered credential in it (compiler/broker.py):
        # never applied without a person, who sees where the token went (RF653).
        extra[rel] = ("held", "it holds a brokered credential's value (RF653)")
    reg = Registry(workspace, extra, tuple(globs))
    # repositories nothing records (untracked clones): found up from what the run wrote
    reg.owners = Owners(home, configs)
    reg.host_path = env.get("PATH", "")
    reg.guarded = _guarded(profile, env, home)
    return reg


def _guarded(profile, env, home: str) -> tuple[str, ...]:
    """Real paths no new link may reach: the profile's writable roots other than
    the workspace (the tooling dir) and ringfence's private dirs."""
    from ringfence.rfcore.paths import private_dirs

    out = [os.path.realpath(d) for d in private_dirs(env)]
    if profile is not None and getattr(profile, "sandbox", False):
        from ringfence.profiles.roots import _tooling_dir, _writable_templates, expand

        from ringfence.rfcore.paths import tooling_dir

        ctx = {"workspace": None, "tooling": _tooling_dir(profile, home, tooling_dir(env)),
               "home": home}
        out += [os.path.realpath(p) for t in _writable_templates(profile)
                if "{workspace}" not in t and (p := expand(t, **ctx))]
    return tuple(out)


def _record(stage: stg.Stage, created=(), modified=(), deleted=(), held=(), failed=()) -> dict:
    return {"created": sorted(created), "modified": sorted(modified),
            "deleted": sorted(deleted), "capped": False, "unreadable_dirs": 0,
            "staged": True, "stage": stage.id, "held": list(held),
            "not_applied": [{"path": x, "why": y} for x, y in failed]}


SETTLE_SECONDS = 120.0       # planning bound; RINGFENCE_SETTLE_SECONDS overrides


def _bound(env: Mapping[str, str] | None) -> float:
    raw = (os.environ if env is None else env).get("RINGFENCE_SETTLE_SECONDS", "")
    try:
        return max(0.0, float(raw)) if raw else SETTLE_SECONDS
    except ValueError:
        return SETTLE_SECONDS


def settle(stage: stg.Stage, profile=None, env: Mapping[str, str] | None = None,
           secret_hits=(), hold_all: str | None = None, limits=None) -> Settled:
    """Never raises: a stage that cannot be planned or applied is kept whole, the
    error recorded (RF644 in the change record's ``settle_error``), and ``doctor``
    lists it. ``hold_all``: the run was killed (a limit, its timeout, a signal): a
    file may be half-written, so NOTHING is applied; every change is held for a
    person, with this reason (RF627), and listed in ``not_applied``. ``limits`` (the
    profile's, when no other limit was hit): a stage over ``stage_mb`` apparent bytes
    or with a file cut at ``file_size_mb`` is a limit hit (``Settled.limit``), found
    on the plan's own walk, and then held like a killed run."""
    try:
        return _settle(stage, profile, env, secret_hits, hold_all, limits)
    except Exception as exc:      # noqa: BLE001 - a settle bug must not lose the run
        from ringfence.staging.apply import Overrun

        what = (str(exc) if isinstance(exc, Overrun)
                else f"{type(exc).__name__}: {exc}")
        msg = (f"RF644: could not settle the run's staged writes ({what}); nothing was "
               f"applied; they are kept in {stage.path} (ringfence doctor lists it)")
        try:
            stage.write_meta(state="settle_error", error=msg)
        except OSError:
            pass
        changes = _record(stage)
        changes.update(capped=True, settle_error=msg)
        return Settled(changes, (), (Note("RF644", msg[len("RF644: "):]),), stage.path,
                       _limit_anyway(stage, limits))


def _limit_anyway(stage: stg.Stage, limits) -> str | None:
    """The limit a stage whose plan failed breaks (nothing of it was applied): a
    run over its limits is recorded as one whatever else went wrong."""
    if limits is None:
        return None
    try:
        from ringfence.staging.apply import stage_limit

        return stage_limit(stage.upper, limits)
    except Exception:       # noqa: BLE001 - the error being recorded is the other one
        return None


def _settle(stage: stg.Stage, profile, env, secret_hits=(), hold_all=None,
            limits=None) -> Settled:
    import time

    if stage.untouched():
        # Nothing was written: nothing to plan, apply or hold.
        changes = _record(stage)
        stage.discard()
        return Settled(changes, (), (), None)
    from ringfence.staging.apply import apply_plan, plan

    ws = stage.workspace
    deadline = time.monotonic() + _bound(env)
    stage.write_meta(state="settling")
    stage.clear_work()
    reg = registry_for(ws, profile, env, secret_hits)
    try:
        p = plan(stage.upper, ws, reg, deadline, limits)
    except OSError as exc:
        stage.write_meta(state="unreadable")
        note = Note("RF643", f"could not read the run's staged writes ({exc}); nothing "
                    f"was applied; they are kept in {stage.path}")
        return Settled({"created": [], "modified": [], "deleted": [], "capped": True,
                        "unreadable_dirs": 1, "staged": True, "stage": stage.id,
                        "settle_error": f"RF643: {note.message}"},
                       (), (note,), stage.path, _limit_anyway(stage, limits))
    if p.limit:     # a limit wins over a timeout or a signal, as in runner._killed
        hold_all = f"its {p.limit} limit was hit"
    if hold_all:
        from ringfence.rfcore.records import replace

        p.actions = [a if a.held else replace(a, held=hold_all) for a in p.actions]
    failed = apply_plan(p, stage.upper, ws, journal=os.path.join(stage.path, stg.APPLY_JOURNAL))
    notes = [Note("RF643", f"{path}: not applied: {why}; kept in the stage {stage.path}")
             for path, why in failed]
    held = [{"path": a.path, "op": a.op, "why": a.held} for a in p.held]
    unapplied = failed
    if hold_all:
        unapplied = failed + [(x, hold_all) for x in sorted(
            {*p.created, *p.modified, *p.deleted} - {f for f, _ in failed})]
        notes.append(Note("RF627", f"the run was killed ({hold_all}): none of its "
                                   f"{len(unapplied)} change(s) were applied; they are "
                                   "held for review"))
    changes = _record(stage, p.created, p.modified, p.deleted, held, unapplied)
    if held or failed:
        stage.write_meta(state="held", held=[_action_json(a) for a in p.held],
                         not_applied=[x for x, _ in failed])
        for h in held if not hold_all else ():
            notes.append(Note("RF641", f"held for review: {h['path']} ({h['why']})"))
        return Settled(changes, tuple(held), tuple(notes), stage.path, p.limit)
    stage.discard()
    return Settled(changes, (), tuple(notes), None, p.limit)


def _action_json(a) -> dict:
    return {"op": a.op, "path": a.path, "held": a.held, "kind": a.kind}


def held_plan(stage: stg.Stage):
    """The held changes kept in ``stage``'s meta, as an ``apply.Plan``."""
    from ringfence.staging.apply import Action, Plan

    p = Plan()
    for item in stage.meta().get("held", []):
        p.actions.append(Action(item["op"], item["path"], item.get("held") or "held",
                                item.get("kind")))
    return p


def apply_held(stage: stg.Stage) -> list[tuple[str, str]]:
    """A person approved: apply the held changes; remove the stage when done."""
    # mkdir parents of held entries that were never created (a held new dir)
    from ringfence.staging.apply import apply_plan

    p = held_plan(stage)
    failed = apply_plan(p, stage.upper, stage.workspace, held=True,
                        journal=os.path.join(stage.path, stg.APPLY_JOURNAL))
    if not failed:
        stage.remove()
    else:
        stage.write_meta(state="held", not_applied=[x for x, _ in failed])
    return failed


def diff(stage: stg.Stage, rel: str, limit: int = 4000) -> str:
    """A unified diff of one held change (workspace before -> staged after)."""
    import difflib

    def read(path: str) -> list[str]:
        import stat

        if os.path.islink(path):
            return [f"-> {os.readlink(path)}\n"]
        if os.path.isdir(path):
            return [f"{e}\n" for e in sorted(os.listdir(path))]
        try:
            if not stat.S_ISREG(os.lstat(path).st_mode):
                return ["(a FIFO, socket or device node: not opened)\n"]
        except OSError:
            return []
        try:
            with open(path, encoding="utf-8", errors="replace") as fh:
                return fh.readlines()
        except OSError:
            return []

    up = os.path.join(stage.upper, rel)
    st = os.lstat(up) if os.path.lexists(up) else None
    new = [] if st is None or (st.st_mode & 0o170000 == 0o020000 and st.st_rdev == 0) else read(up)
    old = read(os.path.join(stage.workspace, rel))
    text = "".join(difflib.unified_diff(old, new, f"a/{rel}", f"b/{rel}"))
    return text if len(text) <= limit else text[:limit] + "\n... (diff truncated)\n"


def recover(env: Mapping[str, str] | None = None) -> list[Note]:
    """Stages of dead runs that never settled (``staging.stale.recover``)."""
    from ringfence.rfcore.paths import state_dir

    from ringfence.staging.stale import recover

    return recover(state_dir(env))
