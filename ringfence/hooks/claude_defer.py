"""``hook claude-code --headless``: ``defer`` where the hook would ask (issue 20 §8).

In ``claude -p`` nobody sees a dialog, so an ``ask`` of a Bash call is answered
``defer``: Claude Code stops (``stop_reason: "tool_deferred"``) and its caller gets
the call. The ask is recorded as today (``hook_rows.remember_ask``, with its
``tool_use_id`` and what a yes may grant, ``gate.grant_items``) and is also a
pending approval (``ledger.hook_defer``), decided from any process by
``ringfence approve ID [--scope S]`` (``--defer`` or not: nothing runs on the
approver's side) or ``ringfence deny ID``. The reason names the id and the
commands. When the caller resumes (``claude -p --resume``), PreToolUse runs again
for the same call and gets the decision:

* once / session / always -> ``allow``: the approval is claimed
  (``pending.claim``, the grants of ``gate.grant_items``: for an ask rule or an
  irreversible action only the exact command); with ``--wrap`` the answer carries
  a fresh consent token for the rewrite, bound to the ask as an ask's is. The run
  is handed over (``hook_defer.hand_over``: ``running``, no pid), never
  ``completed`` here: Claude Code runs it, and its Post says how it ended;
* deny -> ``deny``, with who denied it;
* undecided -> ``defer`` again, same approval id;
* expired (``hook_defer.TTL``), or resumed in another directory or under a changed
  profile -> the old approval is ``expired`` and the call is deferred anew.

A call that cannot be recorded (no ledger, no ``session_id`` or ``tool_use_id``,
a command with a lone surrogate, which the ledger would store as its escaped
spelling, an id already settled or held by another command) is answered ``ask`` with why:
a defer nobody can decide would stop the session for nothing.

Runs on every agent call that would ask: stdlib + our packages only.
"""

from __future__ import annotations

import shlex

from ringfence.rfcore.visible import visible

from .claude_common import PRE, _cwd, _reason_parts, _str, output


def answer(payload, led, *, command, decision, verdict, prof, workspace, session, updated,
           run_text, consent, items, reason) -> dict:
    """The headless answer to a call the gate asks about (module docstring)."""
    ledger = led.get()
    # The findings quote the model's command: no control character of it reaches the
    # caller (a newline or escape could draw a fake approval line), and the real
    # approval id comes first (_deferred), before anything the command wrote.
    reason = visible(reason)
    sid, tid = _str(payload, "session_id"), _str(payload, "tool_use_id")
    call = _Call(payload, ledger, sid, tid, command, decision, verdict, prof, workspace,
                 session, reason)
    if ledger is None:
        return output("ask", f"{reason}; cannot defer without the ledger: asking")
    if not (sid and tid and session):
        return call.ask("the payload has no session_id or tool_use_id to resume by")
    from ringfence.ledger import hook_defer as hd
    from ringfence.ledger.store import storable, transaction

    if storable(command) != command:
        # The ledger keeps a lone surrogate as a backslash escape: this command would be
        # stored, shown and matched as another one (the literal `\xff` spelling).
        return call.ask("the command is not valid Unicode text (a lone surrogate), so "
                        "no approval can name it exactly")

    found = hd.find(ledger.conn, sid, tid, command)
    if found is not None:
        why = "expired" if found["state"] == "expired" else None
        if found["state"] in ("waiting", "decided"):
            why = _changed(found, prof, call.cwd, run_text)
        if why is not None:
            with transaction(ledger.conn) as c:
                hd.expire(ledger, c, found["approval_id"], found["ap_run_id"],
                          f"{why}: the resumed call was deferred anew")
        elif found["state"] == "denied":
            return call.deny(found)
        elif found["state"] == "decided":
            return call.allow(found, items, updated, run_text, consent)
        else:
            call.record("defer", f"still waiting: approval {found['approval_id']}")
            return output("defer", _deferred(found["approval_id"], sid, reason, again=True))
    why = hd.stored_elsewhere(ledger.conn, sid, tid, command)
    if why is not None:
        return call.ask(why)
    return call.defer_new(items, run_text)


def _changed(found, prof, cwd, run_text) -> str | None:
    """Why a decision does not fit this call (the approval binds what was decided)."""
    from ringfence.ledger.pending import dir_identity
    from ringfence.ledger.store import storable

    # Where it runs is part of what was decided: a yes to a call --wrap runs in the
    # sandbox does not cover the same text sent with dangerouslyDisableSandbox (or
    # with the workspace made unusable), which runs unwrapped on the host.
    if (found["run_text"] or None) != (storable(run_text) if run_text else None):
        return ("it would run " + ("in the profile's sandbox" if run_text else
                                   "unwrapped, on the host") +
                ", not where the approval was requested")
    if found["ap_cwd_id"] != dir_identity(cwd):
        return "its working directory is not the one the approval was for"
    if (found["ap_profile_digest"] or None) != (getattr(prof, "digest", None) or None):
        return f"profile {prof.name!r} changed since the approval was requested"
    return None


def _deferred(approval_id: str, sid: str, reason: str, again: bool = False) -> str:
    """The defer's reason: the approval id and how to decide it first, then why."""
    return f"{_hint(approval_id, sid, again)} {reason}"


def _hint(approval_id: str, sid: str, again: bool = False) -> str:
    return (f"[deferred{' again' if again else ''}: approval {approval_id} waits for a "
            f"person: `ringfence approve {approval_id} [--scope once|session|always]` (or "
            f"`ringfence approve {approval_id} --defer`; either only records the decision, "
            f"Claude Code runs the call) or `ringfence deny {approval_id}`, then "
            f"`claude -p --resume {shlex.quote(sid)}`; it expires 15 minutes after the defer]")


class _Call:
    """One headless PreToolUse that the gate asks about."""

    def __init__(self, payload, ledger, sid, tid, command, decision, verdict, prof,
                 workspace, session, reason) -> None:
        self.ledger, self.sid, self.tid, self.command = ledger, sid, tid, command
        self.decision, self.verdict, self.prof = decision, verdict, prof
        self.workspace, self.session, self.reason = workspace, session, reason
        self.cwd = _cwd(payload)

    def record(self, decision: str, note: str | None, conn=None) -> None:
        from ringfence.ledger.hook_rows import record_event

        record_event(self.ledger, event=PRE, session=self.sid, tool_use_id=self.tid,
                     tool_name="Bash", command=self.command, decision=decision,
                     reasons=self.decision.reasons, verdict=self.verdict.verdict,
                     keys=self.verdict.keys, profile=self.prof.name,
                     workspace=self.workspace, note=note, conn=conn)

    def ask(self, why: str) -> dict:
        self.record("ask", f"cannot defer: {why}")
        return output("ask", f"{self.reason}; cannot defer ({why}): asking")

    def defer_new(self, items, run_text) -> dict:
        from ringfence.ledger import hook_defer as hd
        from ringfence.ledger import pending as ap
        from ringfence.ledger.hook_rows import remember_ask
        from ringfence.ledger.store import transaction

        prof, digest = self.prof, getattr(self.prof, "digest", None) or None
        run_id = self.ledger.start_run(
            kind=hd.WHERE, command=self.command, state="waiting_for_approval",
            profile=prof.name, spec_digest=digest, workspace=self.workspace, cwd=self.cwd,
            verdict=self.verdict.to_json(), decision=self.decision.to_json(),
            session=self.session,
            note=f"Claude Code call {self.tid} (session {self.sid}) deferred for a person")
        a = ap.create(self.ledger, run_id=run_id, command=self.command,
                      keys=self.verdict.keys, verdict_class=self.verdict.verdict,
                      reasons=_reason_parts(self.verdict, self.decision, None),
                      where=hd.WHERE, profile=prof.name, profile_source=prof.source,
                      profile_digest=digest, workspace=self.workspace, cwd=self.cwd,
                      session=self.session)
        with transaction(self.ledger.conn) as c:
            stored = remember_ask(self.ledger, session=self.sid, tool_use_id=self.tid,
                                  rf_session=self.session, command=self.command,
                                  wrapped=None, run_text=run_text,
                                  verdict=self.verdict.verdict, keys=items,
                                  grant_scope=prof.hook_grant, profile=prof.name,
                                  consent=None, conn=c, approval_id=a.id)
            if not stored:        # settled or swapped meanwhile: nothing may decide it
                hd.expire(self.ledger, c, a.id, run_id, "its ask could not be stored")
            self.record("defer" if stored else "ask", f"approval {a.id}" if stored else
                        "cannot defer: the ask of this tool_use_id changed meanwhile", c)
        if not stored:
            return output("ask", f"{self.reason}; cannot defer (the ask of this "
                                 "tool_use_id changed meanwhile): asking")
        return output("defer", _deferred(a.id, self.sid, self.reason))

    def deny(self, found) -> dict:
        from ringfence.ledger import hook_defer as hd
        from ringfence.ledger.store import transaction

        note = (f"denied by {found['ap_decided_by'] or '?'} "
                f"(ringfence deny {found['approval_id']})")
        with transaction(self.ledger.conn) as c:
            hd.settle_denied(c, found["session"], found["tool_use_id"])
            self.record("deny", note, c)
        return output("deny", f"{self.reason}; {note}")

    def allow(self, found, items, updated, run_text, consent) -> dict:
        from ringfence.ledger import hook_defer as hd
        from ringfence.ledger import pending as ap
        from ringfence.ledger.grants import SANDBOX_MARK
        from ringfence.ledger.hook_rows import token_digest
        from ringfence.rfcore.errors import ApprovalError

        scope, aid = found["decision"], found["approval_id"]
        n = len(SANDBOX_MARK)
        boxed = any(k.startswith(SANDBOX_MARK) for k in items)
        keys = [k[n:] if k.startswith(SANDBOX_MARK) else k for k in items]
        if scope == "once":
            granted = "allowed for this call only"
            keys = []
        elif found["grant_scope"] != "session":
            granted = "profile hook.grant = once: allowed for this call only"
            keys = []
        elif keys:
            from ringfence.session.ask_grants import describe

            granted = (f"granted ({scope}, {'sandbox' if boxed else 'host'} grant): "
                       + ", ".join(describe(k) for k in keys))
        else:
            granted = ("an ask rule or irreversible action that cannot be granted exactly "
                       "here: allowed for this call only")
        note = f"approval {aid} decided `{scope}` by {found['d_by'] or '?'}; {granted}"
        tid = found["tool_use_id"]
        if tid != self.tid and hd.has_ask(self.ledger.conn, found["session"], self.tid):
            return self.ask(f"tool_use_id {self.tid} already has an ask of its own")

        def _claimed(c, claimed) -> None:
            # Claude Code runs it, not ringfence: a hand-over, not an outcome. Its
            # Post (claude_events.after) or the clock (hook_defer.expire_stale) ends it.
            hd.hand_over(self.ledger, c, claimed.run_id, claimed.id,
                         f"{scope} by {found['d_by'] or '?'}: allowed to Claude Code "
                         f"(tool_use_id {self.tid}), which runs it; waiting for Claude "
                         "Code to report the result")
            if tid != self.tid:     # its Post comes under this call's id: ends the run
                hd.rebind(c, found["session"], tid, self.tid)
            hd.reopen(c, found["session"], self.tid,
                      wrapped=updated["command"] if updated else None, run_text=run_text,
                      consent_digest=token_digest(consent) if consent else None)
            self.record("allow", note, c)

        try:
            ap.claim(self.ledger, aid, scope=scope,
                     session=found["d_session"] or found["rf_session"], grant_keys=keys,
                     place="sandbox" if boxed else "host", on_claim=_claimed)
        except ApprovalError as exc:          # claimed or decided again meanwhile
            return self.ask(f"approval {aid} could not be used: {exc.message}")
        return output("allow", f"{self.reason}; {note}", updated)
