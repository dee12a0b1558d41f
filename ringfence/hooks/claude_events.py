"""The hook's events after PreToolUse (issue 13, issue 20 §8).

* ``PostToolUse`` / ``PostToolUseFailure``: Claude Code ran the call, so the person
  said yes to the ask of the same ``tool_use_id`` and session (``store.settle_ask``);
  a deferred ask (``--headless``) was granted by its approval, so its Post grants nothing.
  The grant items were fixed at Pre time (``gate.grant_items``: a key, or for an ask
  rule or irreversible action its exact argv; ``[sandbox] `` when the call ran in a
  sandbox).
* ``PermissionDenied`` settles the ask as denied (auto mode only: Claude Code sends
  nothing when a person answers No in the dialog, so an unanswered ask expires
  after ``store.ASK_TTL`` and a later Pre of the same command supersedes it).
* ``PermissionRequest`` carries no ``tool_use_id``: it is matched to its Pre's open
  ask by session and command text (the original or its --wrap rewrite). A ringfence
  deny stays a deny (``decision.behavior``); otherwise the dialog is the person's.

Runs on every agent call: stdlib + tree-sitter + our packages only.
"""

from __future__ import annotations

from .claude_common import DENIED, PERM, _command, _load, _reason, _str


def after(payload, event, led) -> None:
    """Post / PostFailure: the person's yes becomes an approval (and maybe a grant)."""
    ledger = led.get()
    if ledger is None:
        return
    from ringfence.ledger.store import transaction

    from ringfence.ledger.hook_rows import record_event, settle_ask

    sid, tid = _str(payload, "session_id"), _str(payload, "tool_use_id")
    command = _command(payload)
    status = "denied" if event == DENIED else "approved"
    with transaction(ledger.conn) as c:
        outcome, ask = ("none", None) if not (sid and tid) else settle_ask(
            c, sid, tid, command=command, status_if_match=status)
        note, decision, granted = None, None, []
        if outcome == "expired":
            decision = "expired"
            note = "the ask expired before this Post (no answer seen in time); nothing granted"
        elif outcome == "mismatch":
            decision = "mismatch"
            note = "the command that ran is not the one asked about; nothing granted"
        elif outcome == "approved":
            decision = "approved"
            if ask.get("approval_id"):
                # --headless: a person decided it with `ringfence approve`; the resumed
                # call's claim stored its grants (claude_defer.py), a Post adds none.
                note = (f"deferred call, decided by approval {ask['approval_id']}: "
                        "its grants were stored when the resumed call was allowed")
            elif ask["verdict"] != "capability":
                note = f"{ask['verdict']} verdict: approved once, never granted"
            elif ask["grant_scope"] != "session":
                note = "profile hook.grant = once: approved for this call only"
            elif ask["keys"]:
                granted, where = _grant(ledger, ask["keys"], ask["rf_session"])
                note = (f"granted for session {ask['rf_session']} ({where}): "
                        + ", ".join(granted))
            else:
                note = ("an ask rule or irreversible action that cannot be granted exactly "
                        "here: approved for this call only")
        elif outcome == "denied":
            decision = "denied"
        record_event(ledger, event=event, session=sid, tool_use_id=tid, tool_name="Bash",
                     command=command, decision=decision, reasons=(),
                     verdict=ask["verdict"] if ask else None,
                     keys=granted, profile=ask["profile"] if ask else None,
                     note=note, conn=c)


def _grant(ledger, items, rf_session) -> tuple[list[str], str]:
    """Store a yes's grant items (a ``[sandbox] `` one was earned in a sandbox);
    returns the keys, readable, and where they were earned."""
    from ringfence.ledger.grants import SANDBOX_MARK, add_grants

    from ..session.ask_grants import describe

    n = len(SANDBOX_MARK)
    boxed = [k[n:] for k in items if k.startswith(SANDBOX_MARK)]
    host = [k for k in items if not k.startswith(SANDBOX_MARK)]
    for keys, place in ((boxed, "sandbox"), (host, "host")):
        if keys:
            add_grants(ledger, keys, "session", rf_session, in_transaction=True, place=place)
    where = "host grant" if host else "sandbox grant: never covers a call run unsandboxed"
    return [describe(k) for k in boxed + host], where


def permission_request(payload, profile, env, led) -> dict | None:
    """A ringfence deny stays a deny; anything else is the person's dialog."""
    command = _command(payload)
    if command is None:
        return None
    from ringfence.rfcore.errors import RingfenceError

    try:
        prof, workspace, _ = _load(payload, profile, env)
    except RingfenceError:
        return None
    from ringfence.classifier import classify
    from ringfence.session.gate import decide

    from .claude_input import unsandboxed

    sid = _str(payload, "session_id")
    ledger = led.get()
    ask = None
    if ledger is not None and sid:
        from ringfence.ledger.hook_rows import ask_for_request

        ask = ask_for_request(ledger.conn, sid, command)
    # The dialog may show the --wrap rewrite: judge the command that was asked about.
    judged = ask["command"] if ask else command
    verdict = classify(judged)
    outside = unsandboxed(payload.get("tool_input"))
    decision = decide(verdict, prof, context="host" if outside else "sandbox")
    if ledger is not None:
        from ringfence.ledger.hook_rows import record_event

        note = (f"the dialog of the PreToolUse ask {ask['tool_use_id']}" if ask else
                "no open ask of this command in this session (PermissionRequest carries "
                "no tool_use_id; matched by session and command)")
        record_event(ledger, event=PERM, session=sid,
                     tool_use_id=ask["tool_use_id"] if ask else _str(payload, "tool_use_id"),
                     tool_name="Bash", command=command,
                     decision="deny" if decision.decision == "deny" else None,
                     reasons=decision.reasons, verdict=verdict.verdict, keys=verdict.keys,
                     profile=prof.name, workspace=workspace, note=note)
    if decision.decision != "deny":
        return None
    return {"hookSpecificOutput": {"hookEventName": PERM, "decision": {
        "behavior": "deny", "message": _reason(verdict, decision, prof.name, None)}}}
