"""CLI command: ``ringfence mcp``, the stdio MCP server on a Session (issue 24).

The SDK loads here only, when the server starts: never on the hook/check/run paths.
"""

from __future__ import annotations

import os
from typing import Optional

import typer

from . import options


def start(profile: Optional[str], workspace: Optional[str], session: Optional[str],
          forms: bool = True) -> int:
    from ringfence.ledger.store import new_id
    from ringfence.rfcore.errors import UsageError
    from ringfence.rfcore.workspace import find_workspace
    from ringfence.session.api import Session

    try:
        from ringfence.mcp.server import serve
    except ImportError as exc:
        raise UsageError(f"the MCP server needs the official 'mcp' SDK 2.x ({exc})",
                         hint="make setup installs it; or: pip install 'ringfence[mcp]'") \
            from None
    ws, _why = find_workspace(env=os.environ, explicit=workspace)
    # A named session (not a per-process one): a person's `session` decision on a
    # form grants for this server's life, and its requests show under this name.
    name = session or os.environ.get("RINGFENCE_SESSION") or new_id("mcp-")
    return serve(Session(profile=profile, workspace=ws, session=name), forms=forms)


def register(app: typer.Typer) -> None:
    @app.command()
    def mcp(profile: Optional[str] = options.profile(),
            workspace: Optional[str] = options.workspace(
                "Workspace the agent works in (default: the git root, else the cwd)."),
            session: Optional[str] = options.session(
                "Session name for grants and the ledger (default: RINGFENCE_SESSION, "
                "else a fresh mcp-… name)."),
            no_forms: bool = typer.Option(
                False, "--no-forms",
                help="Never ask by an approval form (for a client that may answer forms "
                     "without a person); every approval goes through "
                     "`ringfence approve ID --defer`.")) -> None:
        """Serve MCP over stdio: tools shell, check and await_approval on a Session.

        Approvals are a person's: a form inside the call where the client supports
        elicitation, else `ringfence approve ID --defer` and the agent's await_approval.

        Example: ringfence mcp --profile build --workspace .
        """
        raise typer.Exit(start(profile, workspace, session, forms=not no_forms))
