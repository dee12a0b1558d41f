"""Claude Code PreToolUse hook (SPEC §6).

Input (stdin): ``{"session_id", "transcript_path", "cwd", "permission_mode",
"hook_event_name": "PreToolUse", "tool_name": "Bash", "tool_input": {"command",
"description", "timeout", "run_in_background"}, "tool_use_id"}``.

Output (stdout): ``{"hookSpecificOutput": {"hookEventName": "PreToolUse",
"permissionDecision": "allow" | "ask" | "deny", "permissionDecisionReason": ...,
"updatedInput": {...}}}``; ``updatedInput`` replaces the whole tool input, so it
carries every original field with only ``command`` rewritten.

Decision. Without ``--wrap`` the command runs on the machine, so the gate judges
it in the ``host`` context: a helper, or a capability that is granted or allowed
by a rule -> allow; a deny rule -> deny; anything else -> ask, with the findings'
codes and messages as the reason. With ``--wrap`` the command runs inside the
profile's sandbox under ``ringfence run``, so it is judged in the ``sandbox``
context: the sandbox is the boundary, deny rules still deny, and ask rules (e.g.
``git push`` under Build) still ask; asking about everything the sandbox already
contains would only teach people to click "yes". Other tools get no decision (empty output). Anything we
cannot read or evaluate gets a safe ``ask`` with the reason, never an allow.

Runs on every agent command: stdlib + tree-sitter + our packages only.
"""

from __future__ import annotations

import json
import os
import shlex
import sys
from typing import Any, Mapping

EVENT = "PreToolUse"


def output(decision: str, reason: str, updated: dict | None = None) -> dict:
    out: dict[str, Any] = {"hookEventName": EVENT, "permissionDecision": decision,
                           "permissionDecisionReason": reason}
    if updated is not None:
        out["updatedInput"] = updated
    return {"hookSpecificOutput": out}


def session_for(payload: Mapping[str, Any], env: Mapping[str, str]) -> str | None:
    """RINGFENCE_SESSION if set, else one session per Claude Code session."""
    if env.get("RINGFENCE_SESSION", "").strip():
        return env["RINGFENCE_SESSION"]
    sid = payload.get("session_id")
    if isinstance(sid, str) and sid.strip():
        return f"claude-{sid}"
    return None


def profile_ref(profile) -> str:
    src = profile.source or ""
    return src.split(":", 1)[1] if src.startswith("builtin:") else (src or profile.name)


def self_invocation() -> list[str]:
    """How to run this very ringfence again, independent of the agent's PATH.

    A bare `ringfence` would be looked up on the agent's PATH, where it may be
    missing (a venv install) or shadowed by something else.
    """
    script = sys.argv[0] if sys.argv else ""
    if os.path.basename(script) == "ringfence":
        import shutil

        found = script if os.sep in script else shutil.which(script)
        if found:
            return [os.path.abspath(found)]
    return [sys.executable, "-m", "ringfence"]


def wrap_command(command: str, profile, session: str | None,
                 prog: list[str] | None = None) -> str:
    """The same command run under `ringfence run`; bash reads it back exactly."""
    # --no-stdin: the wrapped command is an agent's, not a person's at a terminal.
    parts = [*(prog or ["ringfence"]), "run", "--no-stdin", "--profile", profile_ref(profile)]
    if session:
        parts += ["--session", session]
    return shlex.join(parts + ["-c", command])


def _grants(session: str | None, env: Mapping[str, str]) -> tuple[frozenset[str], str | None]:
    if not session:
        return frozenset(), None
    try:
        from ringfence.rfcore.paths import state_dir

        # No ledger yet: nothing was ever granted. Checked before loading the
        # ledger machinery (sqlite3), which every hook call would otherwise pay.
        db = os.path.join(state_dir(env), "ledger.db")
        if not os.path.exists(db):
            return frozenset(), None
        from ringfence.grants import active_keys
        from ringfence.ledger import Ledger

        with Ledger(db, recover=False) as led:   # a read; recovery is run's job
            return active_keys(led, session), None
    except Exception as exc:   # a broken ledger must not turn into an allow
        return frozenset(), f"grants unavailable ({exc}); treating nothing as granted"


def _reason(verdict, decision, profile_name: str, note: str | None) -> str:
    parts = list(dict.fromkeys(decision.reasons))
    # Every finding's code and message appears once, whether or not the gate said it.
    for f in verdict.findings:
        text = f"{f.code} {f.message}"
        if not any(text in p for p in parts):
            parts.append(text)
    if note:
        parts.append(note)
    return f"ringfence ({profile_name}, {verdict.verdict}): " + "; ".join(parts)


def respond(payload: Any, *, profile: str | None = None, wrap: bool = False,
            env: Mapping[str, str] | None = None) -> dict | None:
    """The hook's answer for one payload, or None for "no decision"."""
    env = os.environ if env is None else env
    if not isinstance(payload, dict):
        return output("ask", "ringfence: hook input is not a JSON object; asking to be safe")
    event = payload.get("hook_event_name", EVENT)
    if event != EVENT or payload.get("tool_name") != "Bash":
        return None
    tool_input = payload.get("tool_input")
    command = tool_input.get("command") if isinstance(tool_input, dict) else None
    if not isinstance(command, str) or not command.strip():
        return output("ask", "ringfence: Bash tool input has no command string; asking")
    cwd = payload.get("cwd") if isinstance(payload.get("cwd"), str) else os.getcwd()
    from ringfence.rfcore.errors import RingfenceError

    try:
        from ringfence.profiles.load import resolve_active

        prof, _why = resolve_active(profile, env=env,
                                    workspace=cwd if os.path.isdir(cwd) else None)
    except RingfenceError as exc:
        return output("ask", f"ringfence: cannot load the profile ({exc}); asking")
    from ringfence.classifier import classify
    from ringfence.gate import decide

    session = session_for(payload, env)
    grants, note = _grants(session, env)
    verdict = classify(command)
    decision = decide(verdict, prof, grants=grants, context="sandbox" if wrap else "host")
    reason = _reason(verdict, decision, prof.name, note)
    if decision.decision == "deny" or not wrap:
        return output(decision.decision, reason)
    updated = dict(tool_input, command=wrap_command(command, prof, session,
                                                    prog=self_invocation()))
    return output(decision.decision, reason + " [runs under 'ringfence run']", updated)


def main(argv: list[str], stdin=None, stdout=None, stderr=None,
         env: Mapping[str, str] | None = None) -> int:
    """`ringfence hook claude-code [--profile P] [--wrap]`: always exit 0 with JSON
    (or nothing); a hook that crashes would leave Claude Code to its defaults."""
    stdin = stdin or sys.stdin.buffer
    stdout = stdout or sys.stdout
    stderr = stderr or sys.stderr
    profile, wrap = _parse(argv)
    raw = stdin.read()
    try:
        payload = json.loads(raw.decode("utf-8") if isinstance(raw, bytes) else raw)
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        print(f"ringfence hook claude-code: cannot read hook JSON on stdin: {exc}",
              file=stderr)
        answer: dict | None = output("ask", "ringfence: unreadable hook input "
                                     f"({type(exc).__name__}); asking to be safe")
    else:
        try:
            answer = respond(payload, profile=profile, wrap=wrap, env=env)
        except Exception as exc:   # fail safe: a bug of ours asks, it never allows
            if (env if env is not None else os.environ).get("RINGFENCE_DEBUG"):
                raise
            print(f"ringfence hook claude-code: internal error: {type(exc).__name__}: "
                  f"{exc}", file=stderr)
            answer = output("ask", f"ringfence: internal error ({type(exc).__name__}); "
                            "asking to be safe")
    if answer is not None:
        stdout.write(json.dumps(answer) + "\n")
        stdout.flush()
    return 0


def _parse(argv: list[str]) -> tuple[str | None, bool]:
    from ringfence.rfcore.errors import UsageError

    profile, wrap, i = None, False, 0
    while i < len(argv):
        a = argv[i]
        if a == "--wrap":
            wrap = True
        elif a == "--profile" and i + 1 < len(argv):
            profile, i = argv[i + 1], i + 1
        elif a.startswith("--profile="):
            profile = a.split("=", 1)[1]
        else:
            raise UsageError(f"unknown argument {a!r} for 'ringfence hook claude-code'",
                             hint="ringfence hook claude-code [--profile P] [--wrap]")
        i += 1
    return profile, wrap
