"""Shared rich consoles for the CLI. Only CLI and render modules import rich."""

from __future__ import annotations

from rich.console import Console

console = Console()
err_console = Console(stderr=True)


def error(message: str) -> None:
    err_console.print(f"[bold red]error:[/] {message}", highlight=False, markup=True)
