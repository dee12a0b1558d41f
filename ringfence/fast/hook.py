"""Fast path for `ringfence hook INTEGRATION ...` (stdlib + tree-sitter only)."""

from __future__ import annotations

import sys

from ringfence.rfcore.errors import UsageError

HELP = """usage: ringfence hook claude-code [-p|--profile P] [--wrap] [--headless]

Claude Code hook for every event (dispatches on hook_event_name): PreToolUse
prints hookSpecificOutput.permissionDecision (allow | ask | deny) with a reason;
PostToolUse/PostToolUseFailure after an ask record the person's yes and grant a
capability for the Claude session (profile hook.grant); PermissionRequest keeps
a ringfence deny. --wrap also rewrites tool_input.command to run under
'ringfence run' (asked once; shell state stays in Claude's shell).
--headless (claude -p): answer defer instead of ask; the call waits as a pending
approval (ringfence approve ID | ringfence deny ID) and the resumed session
(claude -p --resume) gets the decision.

Install: ringfence init claude-code [--project|--user] [--profile P]
  (--wrap is the default, --no-wrap runs on the host; docs/claude-code.md)
Example (settings.json; the same entry for PostToolUse, PostToolUseFailure,
PermissionRequest and PermissionDenied):
  {"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command",
    "command": "ringfence hook claude-code --profile build"}]}]}}
"""


def main(argv: list[str]) -> int:
    if not argv or argv[0] in ("-h", "--help"):
        sys.stdout.write(HELP)
        return 0 if argv else 2
    if argv[0] != "claude-code":
        raise UsageError(f"unknown hook integration {argv[0]!r}",
                         hint="ringfence hook claude-code [--profile P] [--wrap] [--headless]")
    if any(a in ("-h", "--help") for a in argv[1:]):
        sys.stdout.write(HELP)
        return 0
    from ringfence.hooks.claude_code import main as claude_main

    # -p is --profile here too, as in every other command (issue 14 §3).
    rest = ["--profile" if a == "-p" else a for a in argv[1:]]
    return claude_main(rest, keep_open=True)
