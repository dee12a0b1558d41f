"""CLI commands: check, explain, rule, rules."""

from __future__ import annotations

import typer


def register(app: typer.Typer) -> None:
    """Add this module's commands to the app."""

    @app.command()
    def check(command: str = typer.Argument(..., help="The exact `bash -c` string.")) -> None:
        """Classify a command and print a readable verdict.

        Example: ringfence check 'longbridge news FIG.US 2>&1 | head -30'
        """
        from ringfence.cli.output import console

        console.print("not implemented yet")
