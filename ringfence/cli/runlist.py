"""`ringfence ledger list`: the runs, one line each, fitting the terminal's width."""

from __future__ import annotations

import json
import os
import time

from .output import short_when as _short_when



STATE_STYLE = {"completed": "green", "failed": "red", "waiting_for_approval": "bold yellow",
               "denied": "magenta", "aborted": "red", "sandbox_error": "bold red",
               "limit": "red", "running": "cyan"}


def _ledger():
    # Read-only commands work on a ledger they cannot write (issue 23).
    from ringfence.ledger.readonly import open_for_reading

    return open_for_reading(os.environ)


def _t(value) -> "Text":
    from rich.text import Text

    from ringfence.views.render import visible

    return Text(visible("" if value is None else str(value), keep_newlines=True))


def _state(state: str):
    from rich.text import Text

    return Text(state, style=STATE_STYLE.get(state.split(" ", 1)[0], ""))


def _when(ts: float | None) -> str:
    return "-" if ts is None else time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(ts))


def list_runs(limit: int, as_json: bool, *, state=None, session=None, since=None) -> None:
    from rich.table import Table

    from .output import console

    with _ledger() as led:
        runs = led.list_runs(limit=limit, state=state, session=session, since=since)
    if as_json:
        print(json.dumps([r.to_json() for r in runs], indent=2))
        return
    if not runs:
        filters = " ".join(f"{flag} {value}" for flag, value in (
            ("--state", state), ("--session", session),
            ("--since", None if since is None else _when(since))) if value is not None)
        if filters:
            with _ledger() as led:
                total = len(led.list_runs(limit=1))
            console.print(f"no runs match {filters}" + (
                "" if total else " (no runs recorded yet)"), highlight=False, markup=False)
        else:
            console.print("no runs recorded yet")
        return
    from rich import box

    table = Table(title=f"ringfence ledger (latest {limit})", title_justify="left",
                  box=box.SIMPLE_HEAD, pad_edge=False, padding=(0, 1), collapse_padding=True)
    # One line per run: every column but the command keeps its width; the command
    # takes what is left and ends in "…" (`ledger show ID` has it in full).
    rows = []
    for r in runs:
        dur = r.result("duration")
        code = r.result("exit_code")
        outcome = r.result("outcome")     # e.g. "aborted (timeout)": SPEC's state + why
        rows.append((r.id, _short_when(r.created_at),
                     # a deferred Claude Code call (hook --headless) runs in Claude Code
                     r.kind if r.kind in ("host", "claude-code") else (r.profile or "sandbox"),
                     r.state + (f" ({outcome})" if outcome else ""),
                     "-" if code is None else str(code),
                     "-" if dur is None else f"{dur:.1f}s", r.command))
    fixed = ("id", "at", "where", "state", "exit", "time")
    widths = [max(len(col), *(len(row[n]) for row in rows)) for n, col in enumerate(fixed)]
    for col, width in zip(fixed, widths):
        table.add_column(col, no_wrap=True, width=width)
    # The command gets exactly what is left (two spaces between columns), cut by
    # us: left to itself, rich would drop whole columns instead.
    room = max(5, console.width - sum(widths) - 2 * len(fixed) - 3)   # gaps and edges
    table.add_column("command", no_wrap=True, width=room)
    for *cells, state, code, dur, command in ((*row[:3], *row[3:]) for row in rows):
        shown = command if len(command) <= room else command[:room - 1] + "…"
        table.add_row(*cells, _state(state), code, dur, _t(shown))
    console.print(table)
