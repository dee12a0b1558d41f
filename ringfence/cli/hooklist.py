"""`ringfence ledger list --source hook`: the Claude Code hook's decisions."""

from __future__ import annotations

import json


def list_hook(limit: int, as_json: bool) -> None:
    from rich import box
    from rich.table import Table

    from ringfence.ledger.hook_rows import list_events
    from ringfence.ledger.store import Ledger
    from ringfence.views.render import visible

    from .output import console, short_when as _short_when

    with Ledger() as led:
        events = list_events(led, limit)
    if as_json:
        print(json.dumps(events, indent=2))
        return
    if not events:
        console.print("no hook decisions recorded yet")
        return
    table = Table(title=f"Claude Code hook decisions (latest {limit})", title_justify="left",
                  box=box.SIMPLE_HEAD, pad_edge=False)
    for col, width in (("at", 5), ("event", 18), ("decision", 8), ("session", None),
                       ("tool_use_id", None), ("command", None), ("note", None)):
        table.add_column(col, overflow="ellipsis" if width is None else "fold",
                         no_wrap=col not in ("note", "command"), min_width=width)
    for e in events:
        note = e["note"] or "; ".join(e["reasons"])
        table.add_row(_short_when(e["at"]), e["event"], e["decision"] or "-",
                      visible(e["session"] or "-"), visible(e["tool_use_id"] or "-"),
                      visible((e["command"] or "").splitlines()[0] if e["command"] else "-"),
                      visible(note or ""))
    console.print(table)
