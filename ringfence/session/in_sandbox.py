"""Executing in the sandbox: hand the request to the runner (``ringfence.session.runner``),
record what it did on the run's ledger row, and tell a boundary failure from the
command's own (Host-Assisted escalates the first kind only).

Only stdlib + our packages: this sits on the ``ringfence run`` hot path.
"""

from __future__ import annotations

import re
import sys
import time
from ringfence.rfcore.lazyre import lazy
from ringfence.rfcore.records import asdict, is_record
from typing import Any

from ringfence.rfcore.errors import EXIT_UNSAFE, RingfenceError, SettleError

from ringfence.session.request import Outcome
from ringfence.ledger.store import tail

# A sandboxed failure "looks like the boundary" when its stderr says so. These are
# the kernel's words for EPERM/EACCES/EROFS, the proxy's refusal, and a socket the
# seccomp filter blocked. Anything else is the command's own failure: escalating it
# would turn every bug into a host request.
BOUNDARY_PATTERNS = lazy("|".join((
    r"Operation not permitted", r"Permission denied", r"Read-only file system",
    r"\bE(?:PERM|ACCES|ROFS)\b", r"Address family not supported",
    r"\b403\b[^\n]*\bproxy\b", r"\bproxy\b[^\n]*\b403\b", r"CONNECT tunnel failed",
    r"blocked by ringfence", r"refused by ringfence",
)), re.IGNORECASE)


def looks_like_boundary(result: Any) -> bool:
    """Did a sandboxed run fail the way a boundary fails (not the command's own bug)?"""
    if result is None:
        return False
    for n in getattr(result, "network", None) or ():
        allowed = n.get("allowed") if isinstance(n, dict) else getattr(n, "allowed", True)
        if allowed is False:
            return True
    return bool(BOUNDARY_PATTERNS.search(_text(getattr(result, "stderr_tail", None))))


def _text(value: Any) -> str:
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    return value or ""


def execute(req, ledger, deps, streams, run_id, keys, approval_id=None, approved=False):
    """Run ``req`` in its sandbox under the ledger row ``run_id``, already started.

    Returns ``(Outcome, runner result)``; the result is None when nothing ran."""
    # No walk of the workspace: a staged run reports its exact changes itself
    # (ringfence/staging/settle.py); only a run that was not staged falls back to this.
    before = None
    started = time.monotonic()
    from ringfence.compiler.cgprime import prime_attach

    # Only a Session loads compiler/spare.py; importing it here would tell
    # compiler/execute.py that a plain `ringfence run` is one, and its settle would
    # lose the prewarm that overlaps the command.
    spare = sys.modules.get("ringfence.compiler.spare")
    try:
        pool = spare.current() if spare is not None else None
        if pool is None or not pool.ready():
            prime_attach()  # as root: the run's cgroup join finds the kernel's lock warm
        result = _call_runner(req, deps, streams, keys,
                              approved=approved or approval_id is not None,
                              on_ran=_on_ran(ledger, run_id, started, approval_id))
    except SettleError as exc:
        # It ran; its writes are kept in the stage, unapplied. Recorded as failed.
        ledger.append_event(run_id, "failed", exit_code=EXIT_UNSAFE,
                            duration=time.monotonic() - started, note=str(exc),
                            approval_id=approval_id)
        streams.say(f"ringfence: {exc}")
        return Outcome(run_id, "failed", EXIT_UNSAFE), None
    except RingfenceError as exc:
        # Fail closed (SandboxError, a profile the compiler rejects, ...): the
        # command did not run. Record why, say so, exit 125.
        ledger.append_event(run_id, "sandbox_error", exit_code=EXIT_UNSAFE,
                            duration=time.monotonic() - started, note=str(exc),
                            approval_id=approval_id)
        streams.say(f"ringfence: could not run safely: {exc}")
        return Outcome(run_id, "sandbox_error", EXIT_UNSAFE), None
    except BaseException as exc:   # Ctrl-C, a bug: the run must not stay "running"
        ledger.append_event(run_id, "aborted", duration=time.monotonic() - started,
                            note=f"interrupted: {type(exc).__name__}: {exc}",
                            approval_id=approval_id)
        raise
    return _record_sandbox(req, ledger, streams, run_id, result, before, started,
                           approval_id)


def _on_ran(ledger, run_id, started, approval_id):
    """Record that the command ran (its exit code) BEFORE its staged writes are
    settled: a settle that is killed or fails still leaves what ran in the ledger."""
    def on_ran(res) -> None:
        ledger.append_event(run_id, "running", exit_code=getattr(res, "exit_code", None),
                            duration=time.monotonic() - started, approval_id=approval_id,
                            note="the command exited; settling its staged writes")
    return on_ran


def _call_runner(req, deps, streams, keys, approved=False, on_ran=None):
    # The runner re-checks the gate itself. We have already decided (with this
    # session's grants, or a person's approval), so the keys of what we run are
    # passed as grants: ask rules no longer hold it, deny rules still do.
    return deps.run_sandbox(list(req.argv) if req.argv is not None else None,
                            command=req.command if req.argv is None else None,
                            profile=req.profile, workspace=req.workspace,
                            timeout=req.timeout, grants=frozenset(keys),
                            out=streams.out, err=streams.err, cwd=req.cwd,
                            approved=approved, **_stdin_kw(req),
                            **({"on_ran": on_ran} if on_ran is not None and getattr(
                                deps.run_sandbox, "accepts_on_ran", False) else {}))


def _stdin_kw(req) -> dict:
    # Only when it differs from the default, so injected runners keep their signature.
    if req.interactive:
        return {}
    import subprocess

    return {"stdin": subprocess.DEVNULL}


def _record_sandbox(req, ledger, streams, run_id, result, before, started, approval_id):
    code = int(getattr(result, "exit_code", EXIT_UNSAFE))
    status = getattr(result, "status", None)
    if status in ("denied", "waiting_for_approval"):
        # The runner's own gate disagreed with ours: it ran nothing. Fail closed
        # and say so rather than guess which decision was right.
        note = (f"the runner refused ({status}): "
                + "; ".join(getattr(result, "reasons", ()) or ()))
        ledger.append_event(run_id, "sandbox_error", exit_code=EXIT_UNSAFE, note=note,
                            approval_id=approval_id)
        streams.say(f"ringfence: could not run safely: {note}")
        return Outcome(run_id, "sandbox_error", EXIT_UNSAFE), None
    state = status if status in ("completed", "failed", "aborted", "limit") else (
        "completed" if code == 0 else "failed")
    ledger.append_event(
        run_id, state, exit_code=code,
        duration=getattr(result, "duration", None) or time.monotonic() - started,
        stdout_tail=tail(getattr(result, "stdout_tail", None)),
        stderr_tail=tail(getattr(result, "stderr_tail", None)),
        changes=_changes(before, req.workspace, result), network=_jsonable(
            getattr(result, "network", None)),
        degradations=_jsonable(getattr(result, "degradations", None)),
        outcome=getattr(result, "outcome", None), approval_id=approval_id)
    if getattr(result, "held", None):
        from ringfence.session.held import pend_held

        pend_held(req, ledger, streams, run_id, result)
    return Outcome(run_id, state, code), result


def _changes(before, workspace, result=None) -> dict | None:
    staged = getattr(result, "changes", None) if result is not None else None
    if staged is not None:
        return staged
    if before is None:
        return None       # not staged (Observe: nothing writable), nothing to diff
    from ringfence.ledger.hostdiff import diff, snapshot

    return diff(before, snapshot(workspace)).to_json()


def _jsonable(value: Any) -> Any:
    if value is None:
        return None
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    if hasattr(value, "to_json"):
        return value.to_json()
    if is_record(value):
        return asdict(value)
    return value if isinstance(value, (dict, str, int, float, bool)) else str(value)
