"""Held changes: a sandboxed run's changes to host-obeyed files, waiting for a person.

When ``settle`` holds something (``ringfence/staging/judges.py`` could not judge it
harmless), the governor records ONE pending approval of kind ``stage`` for the
run, under the run's id: ``ringfence approvals list`` shows it with the held
paths and why, ``ringfence approve RUN_ID`` applies them into the workspace (the
same safe, no-symlink-following apply as every run), ``ringfence deny RUN_ID``
drops them. Until then they stay in the run's stage, in ringfence's private
state dir, where no sandbox and no host tool obeys them.
"""

from __future__ import annotations

import os

from ringfence.ledger import pending as ap


def stage_for(ledger, run_id: str, env=None):
    """The stage kept for a run (from its change record), or None."""
    from ringfence.staging import mount as stg
    from ringfence.rfcore.paths import state_dir

    run = ledger.get_run(run_id)
    changes = run.result("changes") if run is not None else None
    name = (changes or {}).get("stage") if isinstance(changes, dict) else None
    if not name or "/" in name or name.startswith("."):
        return None
    return stg.load(os.path.join(stg.stage_root(state_dir(env)), name))


def pend_held(req, ledger, streams, run_id: str, result) -> ap.Approval:
    held = list(result.held)
    reasons = [f"{h['path']}: {h['why']}" for h in held]
    a = ap.create(ledger, run_id=run_id,
                  command=f"apply {len(held)} held change(s) of run {run_id}: "
                          + ", ".join(h["path"] for h in held[:10])
                          + (" ..." if len(held) > 10 else ""),
                  keys=(), verdict_class="one_time", reasons=reasons, where="stage",
                  profile=req.profile.name, profile_source=getattr(req.profile, "source", None),
                  workspace=os.path.abspath(req.workspace), cwd=req.cwd or os.getcwd(),
                  session=req.session)
    from ringfence.session.request import safe

    if getattr(result, "status", None) == "limit" or getattr(result, "outcome", None) in (
            "timeout", "signal"):
        streams.say(f"ringfence: the run was killed ({result.outcome}): NONE of its "
                    f"{len(held)} change(s) were applied; they are HELD (run {run_id}):")
    else:
        streams.say(f"ringfence: {len(held)} change(s) to files the host obeys were HELD, "
                    f"not applied (run {run_id}); everything else was applied:")
    for h in held[:20]:
        streams.say(f"  held: {safe(h['path'])}: {safe(h['why'] or '')}")
    if len(held) > 20:
        streams.say(f"  ... and {len(held) - 20} more")
    streams.say(f"  review: ringfence approvals list   (diffs: ringfence approvals show {run_id})\n"
                f"  apply:  ringfence approve {run_id}\n"
                f"  drop:   ringfence deny {run_id}")
    return a


def diffs(ledger, approval: ap.Approval, env=None) -> list[tuple[str, str]]:
    """[(path, unified diff)] of a pending stage approval's held changes."""
    from ringfence.staging.settle import diff, held_plan

    stage = stage_for(ledger, approval.run_id, env)
    if stage is None:
        return []
    return [(a.path, diff(stage, a.path)) for a in held_plan(stage).actions
            if a.op != "mkdir"]


def approve_held(pending: ap.Approval, *, scope: str, ledger, streams) -> int:
    from ringfence.rfcore.errors import ApprovalError

    from ringfence.session.request import safe
    from ringfence.staging.settle import apply_held

    stage = stage_for(ledger, pending.run_id)
    if stage is None:
        raise ApprovalError(f"the held changes of run {pending.run_id} are gone from "
                            "ringfence's state dir; nothing was applied",
                            hint=f"drop the request with: ringfence deny {pending.run_id}")
    run = ledger.get_run(pending.run_id)
    state = run.state if run is not None else "completed"

    def _resume(conn, claimed) -> None:
        ledger.append_event_tx(conn, claimed.run_id, state, approval_id=claimed.id,
                               note=f"held changes approved by {claimed.decided_by}")

    claimed = ap.claim(ledger, pending.id, scope=scope, session="", on_claim=_resume)
    failed = apply_held(stage)
    for path, why in failed:
        streams.say(f"ringfence: RF643: {safe(path)}: not applied: {safe(why)}")
    streams.say(f"ringfence: applied the held changes of run {claimed.run_id}"
                + (f" except {len(failed)} (kept in {stage.path})" if failed else ""))
    if failed:
        ledger.append_event(claimed.run_id, state, approval_id=claimed.id,
                            note="not applied: " + ", ".join(p for p, _ in failed))
    return 0 if not failed else 1


def deny_held(pending: ap.Approval, *, ledger) -> ap.Approval:
    stage = stage_for(ledger, pending.run_id)
    run = ledger.get_run(pending.run_id)
    state = run.state if run is not None else "completed"

    def _record(conn, denied) -> None:
        ledger.append_event_tx(conn, denied.run_id, state, approval_id=denied.id,
                               note=f"held changes dropped by {denied.decided_by}")
    denied = ap.deny(ledger, pending.id, on_deny=_record)
    if stage is not None:
        stage.remove()
    return denied
