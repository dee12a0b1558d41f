"""`ringfence ledger list --source hook`: the Claude Code hook's decisions."""

from __future__ import annotations

import json


def list_hook(limit: int, as_json: bool) -> None:
    from rich import box
    from rich.table import Table

    from ringfence.ledger.hook_rows import list_events
    from ringfence.views.render import visible

    from .output import console, short_when as _short_when

    from ringfence.ledger.readonly import open_for_reading

    with open_for_reading() as led:
        events = list_events(led, limit)
    if as_json:
        print(json.dumps(events, indent=2))
        return
    if not events:
        console.print("no hook decisions recorded yet")
        return
    # One line per decision, fitting the terminal (80 columns too): the fixed columns
    # keep their width, the command (and the note, after " - ") takes what is left,
    # cut with "…". Session and tool_use_id are in --json.
    table = Table(title=f"Claude Code hook decisions (latest {limit})", title_justify="left",
                  box=box.SIMPLE_HEAD, pad_edge=False, padding=(0, 1), collapse_padding=True)
    rows = []
    for e in events:
        note = e["note"] or "; ".join(e["reasons"])
        command = (e["command"] or "").splitlines()[0] if e["command"] else "-"
        rows.append((_short_when(e["at"]), _EVENTS.get(e["event"], e["event"] or "-"),
                     e["decision"] or "-", visible(command + (f" - {note}" if note else ""))))
    fixed = ("at", "event", "decision")
    widths = [max(len(col), *(len(r[n]) for r in rows)) for n, col in enumerate(fixed)]
    for col, width in zip(fixed, widths):
        table.add_column(col, no_wrap=True, width=width)
    room = max(5, console.width - sum(widths) - 2 * len(fixed) - 3)
    table.add_column("command - note", no_wrap=True, width=room)
    for *cells, text in rows:
        table.add_row(*cells, text if len(text) <= room else text[:room - 1] + "…")
    console.print(table)


_EVENTS = {"PreToolUse": "pre", "PostToolUse": "post", "PostToolUseFailure": "post-fail",
           "PermissionRequest": "permission"}
