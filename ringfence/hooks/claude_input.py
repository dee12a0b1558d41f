"""Reading one Claude Code hook payload without ever failing open (issue 20 §6).

Claude Code falls back to its own defaults when a hook crashes, prints nothing or
exits non-zero, so every payload the hook cannot read is answered ``ask`` with
the reason, exit 0: bytes over :data:`MAX_PAYLOAD`, invalid UTF-8, JSON that is
invalid or nested deeper than Python's parser goes (a 100k-deep array raises
RecursionError in ``json.loads``), numbers too long to convert, and fields of
the wrong type (a ``tool_name`` or ``hook_event_name`` that is not a string, a
``tool_input`` that is not an object).

``unsandboxed`` names the fields of a Bash call that make Claude Code run it
outside its own sandbox (``dangerouslyDisableSandbox``, and any other
``*sandbox*`` field that is set, so a renamed flag is never silently ignored):
such a call is judged as a host request (issue 20 §2).

Runs on every agent call: stdlib only.
"""

from __future__ import annotations

import json

# The largest payload the hook reads (bytes on stdin, issue 23): a payload carries a
# tool call and, after it, its response (a long output); past this it is not read
# whole, and the answer is a safe ask.
MAX_PAYLOAD = 16 * 1024 * 1024
_OFF = (None, False, 0, "", "false", "False", "0", "no")


def read_payload(stream) -> tuple[object, str | None]:
    """``(payload, None)``, or ``(None, why)`` when it cannot be read."""
    try:
        raw = stream.read(MAX_PAYLOAD + 1)
    except (OSError, ValueError) as exc:
        return None, f"cannot read stdin ({type(exc).__name__})"
    if isinstance(raw, str):
        raw = raw.encode("utf-8", "surrogateescape")
    if len(raw) > MAX_PAYLOAD:
        return None, (f"hook input is more than {MAX_PAYLOAD // (1024 * 1024)} MiB "
                      "(the documented maximum)")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        return None, f"hook input is not UTF-8 (byte {exc.start})"
    try:
        return json.loads(text), None
    except RecursionError:
        return None, "hook input JSON is nested too deeply to read"
    except ValueError as exc:   # JSONDecodeError, and int conversion limits
        return None, f"hook input is not valid JSON ({type(exc).__name__}: {str(exc)[:80]})"


def shape_problem(payload: object) -> str | None:
    """Why a parsed payload cannot be judged, or None. Optional fields may be
    absent; present fields must have their documented type."""
    if not isinstance(payload, dict):
        kind = {list: "an array", str: "a string", type(None): "null"}.get(
            type(payload), f"a {type(payload).__name__}")
        return f"hook input is not a JSON object ({kind})"
    for key in ("hook_event_name", "tool_name"):
        if key in payload and not isinstance(payload[key], str):
            return f"`{key}` is a {type(payload[key]).__name__}, not a string"
    if payload.get("tool_name") == "Bash" and "tool_input" in payload \
            and not isinstance(payload["tool_input"], dict):
        return "`tool_input` is not an object"
    return None


def unsandboxed(tool_input: object) -> str | None:
    """The field that asks Claude Code to run this call outside its sandbox, or None."""
    if not isinstance(tool_input, dict):
        return None
    for key, value in tool_input.items():
        if "sandbox" in str(key).lower() and not _off(value):
            return str(key)
    return None


def _off(value: object) -> bool:
    try:
        return value in _OFF and not isinstance(value, float)
    except TypeError:            # an unhashable value: set to something, so "on"
        return False


__all__ = ["MAX_PAYLOAD", "read_payload", "shape_problem", "unsandboxed"]
