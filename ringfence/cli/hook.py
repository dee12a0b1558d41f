"""CLI commands: hook (help listing only).

The real ``ringfence hook`` runs on the fast path (``ringfence.fast.hook``),
which ``__main__`` dispatches before typer is ever imported. This entry exists
so that ``ringfence --help`` lists the command.
"""

from __future__ import annotations

from typing import Optional

import typer

from . import options


def register(app: typer.Typer) -> None:
    """Add this module's commands to the app."""

    @app.command(context_settings={"allow_extra_args": True,
                                   "ignore_unknown_options": True})
    def hook(integration: str = typer.Argument(..., help="claude-code"),
             profile: Optional[str] = options.profile("Profile to judge by."),
             wrap: bool = typer.Option(False, "--wrap",
                                       help="Rewrite the command to run under 'ringfence run'."),
             headless: bool = typer.Option(False, "--headless",
                                           help="claude -p: answer defer instead of ask; "
                                                "decide with ringfence approve/deny, then "
                                                "resume the session.")
             ) -> None:
        """Claude Code hook for every event: hook JSON on stdin, allow | ask | deny out.

        A yes in Claude (Pre ask, then Post) becomes a session grant of a capability.
        With --headless an ask is a defer: a pending approval the resumed session gets.

        Example: ringfence hook claude-code --profile build < payload.json
        """
        from ringfence.fast.hook import main

        args = [integration] + (["--profile", profile] if profile else []) + (
            ["--wrap"] if wrap else []) + (["--headless"] if headless else [])
        raise typer.Exit(main(args))
