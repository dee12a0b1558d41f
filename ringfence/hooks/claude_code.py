"""Claude Code hook: one command for every event (SPEC §6, issue 13).

``ringfence hook claude-code [--profile P] [--wrap] [--headless]`` reads one hook
payload on stdin and dispatches on ``hook_event_name``:

* ``PreToolUse`` (Bash): ``hookSpecificOutput.permissionDecision`` allow | ask |
  deny with a reason built from the findings. Without ``--wrap`` the command
  runs on the machine, so the gate judges it in the ``host`` context (helpers,
  granted or allow-ruled capabilities pass; deny rules deny; the rest asks).
  With ``--wrap`` it runs under ``ringfence run`` in the profile's sandbox
  (context ``sandbox``: only deny and ask rules matter), ``updatedInput``
  carrying every original field with ``command`` rewritten (see ``wrap.py``).
  An ``ask`` is remembered (``ledger.hook_rows.remember_ask``) with its ``tool_use_id``
  and what a yes may grant (``gate.grant_items``: keys, but for an ask rule or an
  irreversible action only its exact argv in this directory; issue 20).
  A call sent with ``dangerouslyDisableSandbox`` (``claude_input.unsandboxed``) is
  a host request: never wrapped, judged on the host with host grants only. With
  ``--wrap`` and no usable workspace (RF616) it asks with the fix instead of
  wrapping; an asked push the sandbox cannot reach says so (``advice.py``).
  With ``--headless`` (``claude -p``) an ask is answered ``defer``: the ask is
  remembered as above and is a pending approval, decided elsewhere with
  ``ringfence approve``/``deny``; the resumed call's Pre gets the decision (allow
  through the approval's claim and grants, deny, or defer again: ``claude_defer.py``).
  A deny stays a deny; an unreadable payload still asks.
* ``PostToolUse`` / ``PostToolUseFailure`` / ``PermissionRequest`` /
  ``PermissionDenied``: ``claude_events.py`` (the yes becomes a grant; the dialog
  is matched by session and command; an unanswered ask expires).
* Anything else, and other tools: no decision (empty output, exit 0: Claude Code's
  "no opinion"). ``defer`` is never that: it pauses a headless session for its
  caller, and only ``--headless`` answers it, for an ask (docs/claude-code.md).

Every Bash event is recorded in the ledger (``ledger list --source hook``).
Anything we cannot read or evaluate gets a safe ``ask``, never an allow
(``claude_input.py``: size, UTF-8, depth, types); the hook always exits 0 (a
crashing hook would leave Claude Code to its defaults).

Runs on every agent call: stdlib + tree-sitter + our packages only.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Mapping

from .claude_common import (DENIED, FAIL, PERM, POST, PRE, _command, _cwd, _load,  # noqa: F401
                            _reason, _str, output)
from .claude_input import MAX_PAYLOAD as MAX_HOOK_INPUT  # noqa: F401  (issue 23's name)

EVENTS = (PRE, POST, FAIL, PERM)
EVENT = PRE
# Modes in which Claude Code asks nobody: a Post there is no person's yes.
UNATTENDED_MODES = frozenset({"bypassPermissions", "dontAsk", "auto"})
# The hook process (``main(..., keep_open=True)``) leaves its ledger connection open
# and ``ringfence.fast`` ends it with os._exit: closing the last connection checkpoints the WAL and syncs
# twice (~10 ms of every agent command). Commits are as durable either way (WAL,
# synchronous=NORMAL); the next run, CLI or checkpoint folds them in.
_LINGER: list = []
_KEEP_OPEN = False


def __getattr__(name: str):
    # The --wrap helpers, re-exported: imported only when a call wraps.
    if name in ("profile_ref", "self_invocation", "wrap_command"):
        from . import wrap

        return getattr(wrap, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def session_for(payload: Mapping[str, object], env: Mapping[str, str]) -> str | None:
    """RINGFENCE_SESSION if set, else one ringfence session per Claude Code session."""
    if env.get("RINGFENCE_SESSION", "").strip():
        return env["RINGFENCE_SESSION"]
    sid = payload.get("session_id")
    if isinstance(sid, str) and sid.strip():
        return f"claude-{sid}"
    return None


class _Ledger:
    """The ledger, opened at most once per hook call; a broken one is a note."""

    def __init__(self, env: Mapping[str, str]) -> None:
        self.env, self.led, self.note = env, None, None

    def get(self):
        if self.led is None and self.note is None:
            try:
                from ringfence.ledger.store import Ledger

                self.led = Ledger(env=self.env, recover=False)   # recovery is run's job
            except Exception as exc:   # a broken ledger must never become an allow
                self.note = f"ledger unavailable ({exc}); nothing granted or recorded"
        return self.led

    def close(self) -> None:
        if self.led is not None:
            if _KEEP_OPEN:
                _LINGER.append(self.led)
            else:
                self.led.close()


def respond(payload: object, *, profile: str | None = None, wrap: bool = False,
            env: Mapping[str, str] | None = None, headless: bool = False) -> dict | None:
    """The hook's answer for one payload, or None for "no decision"."""
    env = os.environ if env is None else env
    if not isinstance(payload, dict):
        return output("ask", "ringfence: hook input is not a JSON object; asking to be safe")
    event = payload.get("hook_event_name", PRE)
    if event not in (*EVENTS, DENIED) or payload.get("tool_name") != "Bash":
        return None
    led = _Ledger(env)
    try:
        if event == PRE:
            return _pre(payload, profile, wrap, env, led, headless)
        if event == PERM:
            return _permission_request(payload, profile, env, led)
        _after(payload, event, led)
        return None
    finally:
        led.close()


def _pre(payload, profile, wrap, env, led, headless=False) -> dict:
    command = _command(payload)
    if command is None:
        return output("ask", "ringfence: Bash tool input has no command string; asking")
    from ringfence.rfcore.errors import RingfenceError

    try:
        prof, workspace, _ws_why = _load(payload, profile, env)
    except RingfenceError as exc:
        return output("ask", f"ringfence: cannot load the profile ({exc}); asking")
    from ringfence.classifier import classify
    from ringfence.session.gate import decide, grant_items

    from .claude_input import unsandboxed

    session = session_for(payload, env)
    # A call Claude Code is asked to run outside its sandbox is a host request:
    # never wrapped, judged on the host, covered only by host grants (issue 20 §2).
    outside = unsandboxed(payload.get("tool_input"))
    kind, prefix, body = ("state", command, "") if (not wrap or outside) else _plan(command)
    wrapped = kind == "wrap"
    problem = None
    if wrapped:
        from .advice import unusable_workspace

        # Wrapping would fail every time (RF616): judge it unwrapped and ask, with
        # why and the fix, rather than wrap a command that cannot run (issue 20 §7).
        problem = unusable_workspace(prof, workspace, env)
        if problem is not None:
            wrapped, prefix = False, ""
    judged = body if wrapped else command
    # Unwrapped, the call runs on the machine (Claude's own sandbox is not ours to
    # trust): a host request, covered by host grants only, a yes a host grant.
    place = "sandbox" if wrapped else "host"
    grants = frozenset()
    if led.get() is not None and session:
        from ringfence.ledger.grants import active_keys

        grants = active_keys(led.led, session, place=place)
    note = led.note
    verdict = classify(judged)
    # An exact grant (an ask rule's yes) binds its directory: after a hoisted `cd`
    # that directory is not the cwd Claude reports, so none applies or is stored.
    cwd = _cwd(payload) if not prefix or not wrapped else None
    decision = decide(verdict, prof, grants=grants, context="sandbox" if wrapped else "host",
                      cwd=cwd, workspace=workspace, home=env.get("HOME"))
    reason = _reason(verdict, decision, prof.name, note)
    if outside:
        reason += (f" [`{outside}`: runs outside Claude Code's sandbox, so it is judged as a "
                   "host request; only host grants and allow rules cover it]")
    updated, consent = None, None
    if problem is not None and decision.decision != "deny":
        decision = type(decision)("ask", (*decision.reasons, problem), decision.matched)
        reason += f"; {problem}; a yes runs it unwrapped, on the host"
    if decision.decision == "ask" and wrapped:
        from .advice import blocked_hosts

        hint = blocked_hosts(verdict, prof, workspace)
        if hint:
            reason += "; " + hint
    if decision.decision != "deny" and wrapped:
        if decision.decision == "ask":
            from ringfence.ledger.hook_rows import new_token

            consent = new_token()
        from .wrap import self_invocation, wrap_command

        text = wrap_command(body, prof, session, workspace=workspace, consent=consent,
                            prefix=prefix, prog=self_invocation())
        updated = dict(payload["tool_input"], command=text)
        reason += " [runs under 'ringfence run']"
    mark = "[sandbox] " if wrapped else ""
    items = () if problem else tuple(mark + k for k in grant_items(verdict, prof, cwd))
    if headless and decision.decision == "ask":
        # claude -p: the ask waits as a pending approval; the resumed call gets its
        # decision (claude_defer.py). A deny stays a deny, an allow an allow.
        from .claude_defer import answer

        return answer(payload, led, command=command, decision=decision, verdict=verdict,
                      prof=prof, workspace=workspace, session=session, updated=updated,
                      run_text=body if wrapped else None, consent=consent, items=items,
                      reason=reason)
    _record_pre(payload, led, command, decision, verdict, prof, workspace, session,
                updated, body if wrapped else None, consent, env, items)
    return output(decision.decision, reason, updated)


def _plan(command: str) -> tuple[str, str, str]:
    from .wrap import plan

    return plan(command)


def _record_pre(payload, led, command, decision, verdict, prof, workspace, session,
                updated, run_text, consent, env, items) -> None:
    ledger = led.get()
    if ledger is None:
        return
    from ringfence.ledger.store import transaction

    from ringfence.ledger.hook_rows import record_event, remember_ask

    sid, tid = _str(payload, "session_id"), _str(payload, "tool_use_id")
    mode = _str(payload, "permission_mode")
    note = None
    with transaction(ledger.conn) as c:
        if decision.decision == "ask" and sid and tid and session:
            if mode in UNATTENDED_MODES:
                note = f"permission_mode {mode}: nobody is asked, so no grant follows"
            else:
                remember_ask(ledger, session=sid, tool_use_id=tid, rf_session=session,
                             command=command, wrapped=updated["command"] if updated else None,
                             run_text=run_text, verdict=verdict.verdict, keys=items,
                             grant_scope=prof.hook_grant, profile=prof.name,
                             consent=consent, conn=c)
        record_event(ledger, event=PRE, session=sid, tool_use_id=tid, tool_name="Bash",
                     command=command, decision=decision.decision, reasons=decision.reasons,
                     verdict=verdict.verdict, keys=verdict.keys, profile=prof.name,
                     workspace=workspace, note=note, conn=c)


def _after(payload, event, led) -> None:
    from .claude_events import after

    after(payload, event, led)


def _permission_request(payload, profile, env, led) -> dict | None:
    from .claude_events import permission_request

    return permission_request(payload, profile, env, led)


def main(argv: list[str], stdin=None, stdout=None, stderr=None,
         env: Mapping[str, str] | None = None, keep_open: bool = False) -> int:
    """`ringfence hook claude-code [--profile P] [--wrap] [--headless]`: always exit 0
    with JSON (or nothing); a hook that crashes would leave Claude Code to its defaults.
    Anything it cannot read is answered ask, with the reason (``claude_input``)."""
    global _KEEP_OPEN
    _KEEP_OPEN = keep_open
    stdin = stdin or sys.stdin.buffer
    stdout = stdout or sys.stdout
    stderr = stderr or sys.stderr
    from .claude_input import read_payload, shape_problem

    profile, wrap, headless = _parse(argv)    # a bad install is a usage error (exit 125)
    payload, problem = read_payload(stdin)
    if problem is None:
        problem = shape_problem(payload)
    if problem is not None:
        print(f"ringfence hook claude-code: cannot read hook JSON on stdin: {problem}; "
              "answering ask", file=stderr)
        answer: dict | None = output("ask", f"ringfence: unreadable hook input ({problem}); "
                                     "asking to be safe")
    else:
        try:
            answer = respond(payload, profile=profile, wrap=wrap, env=env, headless=headless)
        except Exception as exc:   # fail safe: a bug of ours asks, it never allows
            if (env if env is not None else os.environ).get("RINGFENCE_DEBUG"):
                raise
            print(f"ringfence hook claude-code: internal error: {type(exc).__name__}: "
                  f"{exc}", file=stderr)
            event = payload.get("hook_event_name")
            answer = None if event not in (None, PRE) else output(
                "ask", f"ringfence: internal error ({type(exc).__name__}); asking to be safe")
    if answer is not None:
        stdout.write(json.dumps(answer) + "\n")
        stdout.flush()
    return 0


def _parse(argv: list[str]) -> tuple[str | None, bool, bool]:
    from ringfence.rfcore.errors import UsageError

    profile, wrap, headless, i = None, False, False, 0
    while i < len(argv):
        a = argv[i]
        if a == "--wrap":
            wrap = True
        elif a == "--headless":
            headless = True
        elif a == "--profile" and i + 1 < len(argv):
            profile, i = argv[i + 1], i + 1
        elif a.startswith("--profile="):
            profile = a.split("=", 1)[1]
        else:
            raise UsageError(f"unknown argument {a!r} for 'ringfence hook claude-code'",
                             hint="ringfence hook claude-code [--profile P] [--wrap] "
                                  "[--headless]")
        i += 1
    return profile, wrap, headless
