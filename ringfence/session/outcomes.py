"""The two outcomes that run nothing, recorded and said: refused (77 ``denied``) and
pending (75 ``waiting_for_approval``, with the approval to decide), and why a
request waits. ``f`` is the governor's ``Flow``.

Only stdlib + our packages: this sits on the ``ringfence run`` hot path.
"""

from __future__ import annotations

import os

from ringfence.rfcore.errors import EXIT_DENIED, EXIT_WAITING

from ringfence.ledger import pending as ap
from ringfence.session.request import Outcome, safe, shorten


def record_refusal(f) -> Outcome:
    """77 denied: the run row says why; nothing ran."""
    req, reasons, decision = f.req, f.reasons, f.decision
    run_id = f.start_run(
        "denied", decision.to_json() if decision else {"decision": "deny",
                                                       "reasons": list(reasons)},
        exit_code=EXIT_DENIED, note="; ".join(reasons))
    f.streams.say(f"ringfence: denied by profile {req.profile.name!r} (run {run_id})")
    for r in reasons:
        f.streams.say(f"  reason: {safe(r)}")
    return Outcome(run_id, "denied", EXIT_DENIED, reasons=tuple(reasons))


def record_pending(f) -> Outcome:
    """75 waiting_for_approval: the run row and its pending approval; nothing ran yet."""
    req, where, reasons = f.req, f.kind, f.reasons
    decision = f.decision.to_json() if f.decision else None
    run_id = f.start_run("waiting_for_approval", decision, exit_code=EXIT_WAITING)
    a = ap.create(f.ledger, run_id=run_id, command=req.text, argv=req.argv,
                  keys=f.verdict.keys, verdict_class=f.verdict.verdict, reasons=reasons,
                  where=where, profile=req.profile.name, profile_source=req.profile.source,
                  profile_digest=getattr(req.profile, "digest", None) or None,
                  workspace=os.path.abspath(req.workspace), cwd=req.cwd or os.getcwd(),
                  session=req.session)
    place = "on the host" if where == "host" else "in its sandbox"
    f.streams.say(f"ringfence: waiting_for_approval {a.id} (run {run_id}): needs approval "
                  f"under profile {req.profile.name!r} to run {place}: "
                  f"{safe(shorten(req.text, where=f'ledger show {run_id}'))}")
    for r in reasons:
        f.streams.say(f"  reason: {safe(r)}")
    f.streams.say(f"  approve: ringfence approve {a.id} [--scope once|session|always]\n"
                  f"  deny:    ringfence deny {a.id}")
    return Outcome(run_id, "waiting_for_approval", EXIT_WAITING, a.id, reasons)


def pending_reasons(verdict, decision, grants) -> tuple[str, ...]:
    """Why this waits: a one-line summary, then the gate's reasons, then any finding
    the gate did not already spell out. No reason is printed twice."""
    gate = [r for r in (decision.reasons if decision else ())]
    out: list[str] = []
    if verdict.verdict == "one_time":
        out.append("one-time request: no standing grant may cover it")
    else:
        missing = [k for k in verdict.keys if k not in grants]
        if missing:
            out.append("not granted: " + ", ".join(missing))
    out.extend(r for r in gate if r not in out)
    for f in verdict.findings:
        text = f"{f.code} {f.message}"
        if not any(text in r for r in out):
            out.append(text)
    return tuple(out)
