"""`doctor`'s checks of ringfence's own state (issue 23): the state dir, the ledger,
the stage's free space and the stages left behind.

Each check names what is wrong and the fix; none raises. A state dir that is a
file, missing and not creatable, or read-only, and a ledger that is corrupt or
newer than this ringfence, are named failures, never a traceback.
"""

from __future__ import annotations

import os


def _mib(n: int) -> str:
    return f"{n / (1024 * 1024):.1f} MiB"


def state_dir_check(Check, state: str):
    """(check, usable): whether ringfence can keep its ledger and stages in ``state``."""
    name = "state dir"
    env_name = "RINGFENCE_HOME" if os.environ.get("RINGFENCE_HOME") else "XDG_STATE_HOME"
    fix_other = f"or point {env_name} at a writable directory"
    if os.path.lexists(state) and not os.path.isdir(state):
        return Check(name, False, True, f"{state} exists but is not a directory",
                     f"remove or rename {state}, {fix_other}"), False
    if not os.path.isdir(state):
        try:
            os.makedirs(state, mode=0o700)
        except OSError as exc:
            return Check(name, False, True, f"{state} is missing and cannot be created: "
                         f"{exc.strerror}", f"create it (mkdir -p -m 700 {state}), "
                         f"{fix_other}"), False
        detail = f"{state} (created now)"
    else:
        detail = state
    probe = os.path.join(state, f".doctor-{os.getpid()}")
    try:
        os.close(os.open(probe, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600))
        os.unlink(probe)
    except OSError as exc:
        return Check(name, False, True, f"{state} is not writable: {exc.strerror} (runs "
                     "cannot be recorded or staged; ledger list/show/export still read it)",
                     f"make it writable (chmod u+w {state}; a read-only mount: remount it), "
                     f"{fix_other}"), False
    return Check(name, True, True, detail), True


def ledger_check(Check, state: str):
    import sqlite3

    from ringfence.ledger.readonly import open_readonly
    from ringfence.rfcore.errors import LedgerError

    path = os.path.join(state, "ledger.db")
    name = "ledger"
    if not os.path.lexists(path):
        return Check(name, True, True, f"{path} (none yet; the first run creates it)")
    aside = f"mv {path} {path}.broken  (ringfence starts a new ledger; keep the old one " \
            "for the record)"
    try:
        led = open_readonly(path)
    except LedgerError as exc:
        fix = exc.hint or aside
        if "schema" not in exc.message:
            fix = aside
        return Check(name, False, True, exc.message, fix)
    try:
        bad = [r[0] for r in led.conn.execute("PRAGMA quick_check").fetchall()]
    except sqlite3.Error as exc:
        bad = [str(exc)]
    finally:
        led.close()
    if bad != ["ok"]:
        return Check(name, False, True, f"{path} is corrupt: {'; '.join(bad)[:200]}", aside)
    return Check(name, True, True, f"{path} (integrity ok)")


def stage_space_check(Check, state: str):
    from ringfence.staging import mount as staging

    root = staging.stage_root(state)
    at = root if os.path.isdir(root) else state
    try:
        free, inodes = staging.free_space(at)
    except OSError as exc:
        return Check("stage space", False, True, f"cannot stat {at}: {exc.strerror}",
                     "see the state dir line")
    need = staging.STAGE_MIN_FREE_MB * 1024 * 1024
    ok = free >= need and inodes > 0
    detail = (f"{_mib(free)} and {inodes} inodes free in {at} (a run's writes are staged "
              f"there; minimum {staging.STAGE_MIN_FREE_MB} MiB)")
    return Check("stage space", ok, True, detail, "" if ok else
                 "free space there (see 'stages left behind'), or point RINGFENCE_HOME at a "
                 "filesystem with room for the workspace's writes (RF622)")


def leftover_check(Check, state: str):
    from ringfence.staging import mount as staging, stale
    from ringfence.staging.settle import recover

    try:
        recover()                       # marks dead runs' stages interrupted (RF642)
    except OSError:
        pass
    stages = [s for s in stale.leftovers(state) if s["state"] != "running now"]
    if not stages:
        return Check("stages left behind", True, False, "none")
    total = sum(s["bytes"] for s in stages)
    kinds: dict[str, int] = {}
    for s in stages:
        kinds[s["state"]] = kinds.get(s["state"], 0) + 1
    what = ", ".join(f"{n} {k}" for k, n in sorted(kinds.items()))
    return Check("stages left behind", False, False,
                 f"{len(stages)} ({what}), {_mib(total)} in {staging.stage_root(state)}",
                 "held ones: 'ringfence approve RUN_ID' or 'ringfence deny RUN_ID'; "
                 "interrupted ones hold writes that were never applied: inspect, then "
                 "remove the dir")


def state_checks(Check, state: str) -> tuple[list, bool]:
    """The state checks, and whether the state dir is usable for the trial overlay."""
    first, usable = state_dir_check(Check, state)
    out = [first]
    if os.path.isdir(state):
        out.append(ledger_check(Check, state))
        out.append(stage_space_check(Check, state))
        out.append(leftover_check(Check, state))
        out.append(unsettled_check(Check, state))
    return out, usable


def unsettled_check(Check, state: str):
    """Stages kept because settling them failed (RF644) or was cut short (RF642)."""
    from ringfence.staging import stale

    kept = stale.unsettled(state)
    return Check("unsettled stages", not kept, False,
                 "none" if not kept else "; ".join(f"{p}: {why}" for p, why in kept),
                 "" if not kept else "nothing of them was applied: inspect the stage dir, "
                 "then remove it")
