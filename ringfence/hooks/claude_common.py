"""What every hook event reads: the event names, the payload's fields, the profile
and workspace of a call, and the reason text (shared by ``claude_code`` and
``claude_events``). Runs on every agent call: stdlib + our packages only."""

from __future__ import annotations

import os
from collections.abc import Mapping

PRE, POST, FAIL, PERM, DENIED = ("PreToolUse", "PostToolUse", "PostToolUseFailure",
                                 "PermissionRequest", "PermissionDenied")


def _str(payload: Mapping[str, object], key: str) -> str | None:
    v = payload.get(key)
    return v if isinstance(v, str) and v else None


def output(decision: str, reason: str, updated: dict | None = None) -> dict:
    """A PreToolUse answer: allow | ask | deny | defer, with its reason."""
    out: dict[str, object] = {"hookEventName": PRE, "permissionDecision": decision,
                              "permissionDecisionReason": reason}
    if updated is not None:
        out["updatedInput"] = updated
    return {"hookSpecificOutput": out}


def _reason_parts(verdict, decision, note: str | None) -> list[str]:
    parts = list(dict.fromkeys(decision.reasons))
    # Every finding's code and message appears once, whether or not the gate said it.
    for f in verdict.findings:
        text = f"{f.code} {f.message}"
        if not any(text in p for p in parts):
            parts.append(text)
    if note:
        parts.append(note)
    return parts


def _reason(verdict, decision, profile_name: str, note: str | None) -> str:
    # Findings quote the command: a newline or escape in it must not draw a line
    # in Claude Code's dialog that ringfence did not write (rfcore/visible.py).
    from ringfence.rfcore.visible import visible

    return visible(f"ringfence ({profile_name}, {verdict.verdict}): "
                   + "; ".join(_reason_parts(verdict, decision, note)))


def _cwd(payload) -> str:
    """The call's working directory: Claude's ``cwd`` when it is one, else ours."""
    cwd = _str(payload, "cwd")
    return cwd if cwd and os.path.isdir(cwd) else os.getcwd()


def _load(payload, profile, env):
    """(profile, workspace, why) or raises RingfenceError."""
    from ringfence.profiles.load import resolve_active
    from ringfence.rfcore.workspace import find_workspace

    workspace, ws_why = find_workspace(_cwd(payload), env)
    prof, _why = resolve_active(profile, env=env, workspace=workspace)
    return prof, workspace, ws_why


def _command(payload) -> str | None:
    tool_input = payload.get("tool_input")
    command = tool_input.get("command") if isinstance(tool_input, dict) else None
    return command if isinstance(command, str) and command.strip() else None
