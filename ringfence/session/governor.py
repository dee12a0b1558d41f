"""The governor: SPEC §5 around the runner. Every crossing is seen, approved, recorded.

``govern(request)`` is a small state machine from a request to its outcome. Each
state is one function below; it does its work and names the next state::

    CLASSIFIED ─► UNSANDBOXED       profile sandbox = off: full host access, said
               ─► HOST_REQUEST      run --host
               ─► SANDBOX_REQUEST   everything else
    UNSANDBOXED     ─► REFUSED | HOST_RUN           (a deny rule still holds)
    HOST_REQUEST    ─► REFUSED | HOST_RUN | PENDING
    SANDBOX_REQUEST ─► REFUSED | PENDING | SANDBOX_RUN
    SANDBOX_RUN     ─► RECORDED | ESCALATED         (Host-Assisted: a boundary failure)
    ESCALATED       ─► HOST_REQUEST                 (linked to the sandboxed run)
    REFUSED, PENDING, HOST_RUN ─► RECORDED          (77, 75, the command's own status)

* host request: Strict (``profile.host == "deny"``) -> 77 ``denied``; ``helper``
  -> runs on the host; ``capability`` -> runs when the gate (context ``host``,
  with this session's grants) allows, else a pending approval (75); ``one_time``
  -> always a pending approval: a grant never covers it, whatever the gate says.
* sandboxed request: the gate (context ``sandbox``) says deny -> 77, ask ->
  pending approval to run *in the sandbox* (75), allow -> ``ringfence.session.runner``.

Executing lives beside it: ``on_host`` (on the host), ``in_sandbox`` (in
the sandbox, and what a boundary failure looks like), ``approve``
(``approve``/``deny`` of a pending request); the records are ``request``.

Only stdlib + our packages: this sits on the ``ringfence run`` hot path.
"""

from __future__ import annotations

import os
from enum import Enum
from ringfence.rfcore.records import record
from typing import Any

from ringfence.session.outcomes import pending_reasons, record_pending, record_refusal
from ringfence.session.request import Deps, Outcome, Request, Streams, default_deps, safe
from ringfence.ledger.grants import active_keys
from ringfence.ledger.store import Ledger
from ringfence.session.ask_grants import is_exact


class State(Enum):
    CLASSIFIED = "classified"
    UNSANDBOXED = "unsandboxed"
    HOST_REQUEST = "host_request"
    SANDBOX_REQUEST = "sandbox_request"
    ESCALATED = "escalated"
    REFUSED = "refused"
    PENDING = "pending"
    HOST_RUN = "host_run"
    SANDBOX_RUN = "sandbox_run"
    RECORDED = "recorded"


@record(frozen=False)
class Flow:
    """One request on its way through the states: what each state found out."""

    req: Request
    verdict: Any
    ledger: Ledger
    deps: Deps
    streams: Streams
    parent_id: str | None = None       # the sandboxed run a host request escalates from
    kind: str = "sandbox"              # where the request asks to run: host | sandbox
    decision: Any = None
    grants: frozenset = frozenset()
    reasons: tuple[str, ...] = ()
    note: str | None = None
    approved: bool = False             # a Claude Code consent approved this sandboxed run
    escalated_from: str | None = None  # the sandboxed run's id, once escalated
    outcome: Outcome | None = None

    def decide(self, context: str):
        req = self.req
        self.decision = self.deps.decide(self.verdict, req.profile, grants=self.grants,
                                         context=context, cwd=req.cwd or os.getcwd(),
                                         workspace=req.workspace, home=os.environ.get("HOME"))
        return self.decision.decision

    def refuse(self, reasons: tuple[str, ...] | None = None) -> State:
        self.reasons = tuple(self.decision.reasons) if reasons is None else reasons
        return State.REFUSED

    def finish(self, outcome: Outcome) -> State:
        if self.escalated_from is not None:   # the sandboxed run leads; the host run links
            outcome = Outcome(self.escalated_from, outcome.state, outcome.exit_code,
                              outcome.approval_id, outcome.reasons,
                              escalated_run_id=outcome.run_id)
        self.outcome = outcome
        return State.RECORDED

    def start_run(self, state: str, decision: dict | None, **event) -> str:
        req = self.req
        return self.ledger.start_run(
            kind=self.kind, command=req.text, argv=req.argv, state=state,
            profile=req.profile.name, spec_digest=getattr(req.profile, "digest", None),
            workspace=req.workspace, cwd=req.cwd or os.getcwd(),
            verdict=self.verdict.to_json(), decision=decision, session=req.session,
            parent_id=self.parent_id, **event)


# --- the states ------------------------------------------------------------------------

def classified(f: Flow) -> State:
    if not getattr(f.req.profile, "sandbox", True):
        return State.UNSANDBOXED
    return State.HOST_REQUEST if f.req.host else State.SANDBOX_REQUEST


def unsandboxed(f: Flow) -> State:
    # --sandbox off: explicit full host access for this scope; recorded, no
    # approvals. A deny rule in such a profile still holds.
    f.kind = "host"
    if f.decide("host") == "deny":
        return f.refuse()
    # Say so every time: full host access must never be mistaken for a sandbox.
    name = f.req.profile.name
    f.streams.say(f"ringfence run: RF612 sandbox off (profile {name!r}): the "
                  "command runs directly on the host with full access; recorded")
    f.note = f"sandbox off (profile {name!r}): full host access"
    return State.HOST_RUN


def host_request(f: Flow) -> State:
    f.kind, profile = "host", f.req.profile
    if profile.host == "deny":
        f.decision = None
        return f.refuse((f"host requests are denied under profile {profile.name!r}",))
    if f.verdict.verdict == "helper":
        f.decision = None
        return State.HOST_RUN
    # Host grants only: a yes to something that ran in a sandbox never covers the host.
    f.grants = active_keys(f.ledger, f.req.session, place="host")
    decision = f.decide("host")
    if decision == "deny":
        return f.refuse()
    if f.verdict.verdict == "capability" and decision == "allow":
        return State.HOST_RUN
    # one_time is always a pending approval: no grant and no allow rule covers it.
    f.reasons = pending_reasons(f.verdict, f.decision, f.grants)
    return State.PENDING


def sandbox_request(f: Flow) -> State:
    f.kind, f.parent_id = "sandbox", None   # a sandboxed request starts its own run
    f.grants = active_keys(f.ledger, f.req.session, place="sandbox")
    if f.decide("sandbox") == "deny":
        return f.refuse()
    decision = f.decision
    if decision.decision == "ask" and f.req.consent:
        # The person approved this exact command in Claude Code (hook --wrap): the
        # token is bound to the command text, the tool_use_id and the session, and
        # is spent by this one run. Anything else falls through to a pending approval.
        from ringfence.ledger.hook_rows import consume_consent

        note = consume_consent(f.ledger, f.req.consent, command=f.req.text,
                               session=f.req.session)
        if note is not None:
            f.decision = type(decision)("allow", (*decision.reasons, note),
                                        decision.matched)
            f.approved = True
        else:
            f.streams.say("ringfence: the Claude Code consent token does not match this "
                          "command, session or is spent; asking instead")
    if f.decision.decision == "ask":
        f.reasons = (tuple(f.decision.reasons)
                     or pending_reasons(f.verdict, f.decision, f.grants))
        return State.PENDING
    return State.SANDBOX_RUN


def sandbox_run(f: Flow) -> State:
    from ringfence.session.in_sandbox import execute, looks_like_boundary

    run_id = f.start_run("running", f.decision.to_json())
    keys = (*f.verdict.keys, *filter(is_exact, f.grants))   # the runner re-checks the gate
    outcome, result = execute(f.req, f.ledger, f.deps, f.streams, run_id, keys,
                              approved=f.approved)
    if (f.req.profile.host == "escalate" and outcome.state == "failed"
            and looks_like_boundary(result)):
        f.outcome = outcome
        return State.ESCALATED
    return f.finish(outcome)


def escalated(f: Flow) -> State:
    run_id, code, req = f.outcome.run_id, f.outcome.exit_code, f.req
    f.streams.say(f"ringfence: the sandboxed run {run_id} failed at the boundary "
                  f"(exit {code}); escalating to a host request (Host-Assisted)")
    # Say it before anything runs on the host: the sandboxed attempt already
    # ran, so a host run repeats every side effect the command had in there.
    f.streams.say("ringfence: note: the sandboxed attempt already ran; what it changed "
                  "in the workspace stays, and a host run repeats the whole command")
    f.req = Request(profile=req.profile, command=req.command, argv=req.argv,
                    workspace=req.workspace, cwd=req.cwd, host=True, session=req.session,
                    interactive=req.interactive)
    f.parent_id = f.escalated_from = run_id
    f.decision, f.note, f.outcome = None, None, None
    return State.HOST_REQUEST


def refused(f: Flow) -> State:
    return f.finish(record_refusal(f))


def pending(f: Flow) -> State:
    return f.finish(record_pending(f))


def host_run(f: Flow) -> State:
    from ringfence.session.on_host import run_on_host

    return f.finish(run_on_host(f))


STEPS = {State.CLASSIFIED: classified, State.UNSANDBOXED: unsandboxed,
         State.HOST_REQUEST: host_request, State.SANDBOX_REQUEST: sandbox_request,
         State.SANDBOX_RUN: sandbox_run, State.ESCALATED: escalated,
         State.REFUSED: refused, State.PENDING: pending, State.HOST_RUN: host_run}


# --- entry point -------------------------------------------------------------------

def govern(req: Request, *, ledger: Ledger, deps: Deps | None = None,
           streams: Streams | None = None, parent_id: str | None = None,
           trace: list | None = None) -> Outcome:
    """Drive ``req`` from CLASSIFIED to RECORDED; ``trace`` collects the states."""
    deps = deps or default_deps()
    streams = streams or Streams()
    flow = Flow(req, deps.classify(req.text), ledger, deps, streams, parent_id)
    state = State.CLASSIFIED
    while True:
        if trace is not None:
            trace.append(state)
        if state is State.RECORDED:
            return flow.outcome
        state = STEPS[state](flow)


# approve/deny and host execution are reached lazily: `ringfence run` in its sandbox
# never pays for threads or the approval executor.
_LAZY = {"approve": "approve", "deny": "approve", "exec_host": "on_host",
         "HostResult": "on_host", "looks_like_boundary": "in_sandbox",
         "BOUNDARY_PATTERNS": "in_sandbox"}


def __getattr__(name: str):
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from importlib import import_module

    return getattr(import_module(f"{__package__}.{module}"), name)


__all__ = ["Request", "Outcome", "Deps", "Streams", "govern", "approve", "deny",
           "looks_like_boundary", "exec_host", "default_deps", "safe", "State"]
