"""Shared rich consoles for the CLI. Only CLI and render modules import rich."""

from __future__ import annotations

import sys
import time

from rich.console import Console

console = Console()
err_console = Console(stderr=True)


def error(message: str) -> None:
    """One error, said once. To a terminal in colour; to a pipe or a file as plain
    lines, never hard-wrapped at 80 columns (a log reader or a test greps whole lines)."""
    if not err_console.is_terminal:
        print(f"error: {message}", file=sys.stderr, flush=True)
        return
    from rich.markup import escape

    # escape: a message's own brackets ("[limits.timeout]") are text, not markup.
    err_console.print(f"[bold red]error:[/] {escape(message)}", highlight=False, markup=True)


def short_when(ts: float | None) -> str:
    """HH:MM for today, the date for older runs: narrow enough that every column
    fits 80 terminal columns (rich drops whole columns that do not fit)."""
    if ts is None:
        return "-"
    local = time.localtime(ts)
    today = time.localtime()[:3] == local[:3]
    return time.strftime("%H:%M" if today else "%m-%d", local)
