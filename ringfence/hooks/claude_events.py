"""The hook's events after PreToolUse (issue 13, issue 20 §8).

* ``PostToolUse`` / ``PostToolUseFailure``: Claude Code ran the call, so the person
  said yes to the ask of the same ``tool_use_id`` and session (``store.settle_ask``);
  a deferred ask (``--headless``) was granted by its approval, so its Post grants nothing.
  The grant items were fixed at Pre time (``gate.grant_items``: a key, or for an ask
  rule or irreversible action its exact argv; ``[sandbox] `` when the call ran in a
  sandbox). A deferred call's run, handed to Claude Code when it was allowed, ends
  with what Claude Code reports (:func:`_reported`): PostToolUse ``completed``
  (``failed`` if its ``tool_response`` says ``interrupted`` or has a non-zero
  ``exit_code``/``exitCode``; ``aborted``, outcome ``background``, for a call run in
  the background, whose Post comes at its start), PostToolUseFailure ``failed`` (the exit status from
  its ``error``, "Exit code N", ``is_interrupt``), PermissionDenied ``denied``; a
  Post for another command ends it ``aborted`` (the approved one's result is unknown).
* ``PermissionDenied`` settles the ask as denied (auto mode only: Claude Code sends
  nothing when a person answers No in the dialog, so an unanswered ask expires
  after ``store.ASK_TTL`` and a later Pre of the same command supersedes it).
* ``PermissionRequest`` carries no ``tool_use_id``: it is matched to its Pre's open
  ask by session and command text (the original or its --wrap rewrite). A ringfence
  deny stays a deny (``decision.behavior``); otherwise the dialog is the person's.

Runs on every agent call: stdlib + tree-sitter + our packages only.
"""

from __future__ import annotations

from .claude_common import DENIED, FAIL, PERM, _command, _load, _reason, _str


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
        if ask is not None and ask.get("approval_id"):     # a deferred call's result
            from ringfence.ledger.hook_defer import report
            from ringfence.ledger.hook_rows import ran_as_asked

            if outcome == "expired" and not ran_as_asked(ask, command):
                outcome = "mismatch"        # late, and another command: not its result
            state, why, result = _reported(payload, event, outcome)
            run_id = report(ledger, c, ask["approval_id"], state, why, **result)
            if run_id is not None:
                note = f"{note + '; ' if note else ''}run {run_id}: {state}, {why}"
        record_event(ledger, event=event, session=sid, tool_use_id=tid, tool_name="Bash",
                     command=command, decision=decision, reasons=(),
                     verdict=ask["verdict"] if ask else None,
                     keys=granted, profile=ask["profile"] if ask else None,
                     note=note, conn=c)


def _reported(payload, event, outcome) -> tuple[str, str, dict]:
    """(state, note, result fields) of what Claude Code reported for an allowed call."""
    from ringfence.ledger.store import storable

    said = f"reported by Claude Code ({event})"
    if outcome == "mismatch":
        return "aborted", (f"{said} for another command under this tool_use_id: the "
                           "approved command's result is unknown"), {}
    if event == DENIED:
        return "denied", f"{said}: it refused the call after ringfence allowed it", {}
    result: dict = {}
    if event == FAIL:
        error = _str(payload, "error")
        if payload.get("is_interrupt") is True:
            result["outcome"] = "interrupted"
        if error:
            import re

            m = re.match(r"Exit code (-?[0-9]{1,9})\b", error)
            if m:
                result["exit_code"] = int(m.group(1))
            result["stderr_tail"] = storable(error)
            first = error.strip().splitlines()[0][:200] if error.strip() else ""
            said += f": {storable(first)}" if first else ""
        return "failed", said, result
    response = payload.get("tool_response")
    response = response if isinstance(response, dict) else {}
    tool_input = payload.get("tool_input")
    if ((isinstance(tool_input, dict) and tool_input.get("run_in_background") is True)
            or response.get("backgroundTaskId") or response.get("background_task_id")):
        # The model asked for it: the Post comes when it starts, and its result is
        # never reported to a hook. Not `completed`: nobody saw it end.
        return "aborted", (f"{said}: started in the background (run_in_background); "
                           "Claude Code reports no result for it, so how it ended is "
                           "unknown"), {"outcome": "background"}
    for key in ("stdout", "stderr"):
        if isinstance(response.get(key), str) and response[key]:
            result[f"{key}_tail"] = storable(response[key])
    code = next((v for k in ("exit_code", "exitCode") if type(v := response.get(k)) is int
                 and -2**31 <= v < 2**31), None)
    if code is not None:
        result["exit_code"] = code
    if response.get("interrupted") is True:
        result["outcome"] = "interrupted"
        return "failed", f"{said}: interrupted", result
    if code:
        return "failed", f"{said}: exit status {code}", result
    return "completed", said, result


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
