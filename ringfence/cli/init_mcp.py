"""CLI commands: ``init codex|gemini|goose --mcp`` and ``init claude-code --mcp``:
register ``ringfence mcp`` in the client's config (ringfence/mcp/clients.py), with a
diff first and ``--dry-run``, as ``init claude-code`` does for the hook."""

from __future__ import annotations

import os
from typing import Optional

import typer

from . import options


def init_mcp(client: str, *, scope: str, profile: Optional[str], dry_run: bool,
             workspace: Optional[str], out=print) -> int:
    from ringfence.hooks import install
    from ringfence.hooks.wrap import self_invocation
    from ringfence.mcp import clients
    from ringfence.rfcore.workspace import find_workspace

    ws, _why = find_workspace(env=os.environ, explicit=workspace)
    if profile:
        from ringfence.profiles.load import load_profile

        load_profile(profile, workspace=ws)          # a typo fails now, not in the client
    argv = [*self_invocation(), "mcp", *(["--profile", profile] if profile else [])]
    path = clients.config_path(client, scope, ws, os.environ)
    try:
        old = path.read_text(encoding="utf-8") if path.exists() else ""
    except (OSError, UnicodeDecodeError) as exc:
        from ringfence.rfcore.errors import UsageError

        raise UsageError(f"cannot read {path}: {exc}; nothing was changed") from None
    new = clients.merge(client, old, argv, path)
    out(f"ringfence init {client} --mcp: {path} (server: {' '.join(argv)})")
    out("  the workspace is where the client starts the server (its git root, else its "
        "directory)")
    if old == new:
        out("  already up to date; nothing to change")
    else:
        out(install.diff(path, old, new).rstrip("\n"))
        if dry_run:
            out("  --dry-run: nothing was written")
        else:
            install.write(path, new)
            out(f"  wrote {path}")
    out(f"  then {clients.SHELL_OFF[client]}")
    return 0


def register(init_app: typer.Typer) -> None:
    for client, label in (("codex", "Codex"), ("gemini", "Gemini CLI"), ("goose", "Goose")):
        _client_command(init_app, client, label)


def _client_command(init_app: typer.Typer, client: str, label: str) -> None:
    def command(
        mcp: bool = typer.Option(False, "--mcp", help="Register `ringfence mcp` (required)."),
        project: bool = typer.Option(False, "--project",
                                     help="The project's config file, not your user one."),
        profile: Optional[str] = options.profile(),
        dry_run: bool = typer.Option(False, "--dry-run", help="Show the diff; write nothing."),
        workspace: Optional[str] = options.workspace(
            "Project directory (default: the git root, else the cwd)."),
    ) -> None:
        from ringfence.rfcore.errors import UsageError

        if not mcp:
            raise UsageError(f"ringfence reaches {label} through MCP only",
                             hint=f"ringfence init {client} --mcp")
        raise typer.Exit(init_mcp(client, scope="project" if project else "user",
                                  profile=profile, dry_run=dry_run, workspace=workspace,
                                  out=typer.echo))
    command.__doc__ = (f"Register the ringfence MCP server in {label}'s config: shows a "
                       f"diff, keeps your other settings, and says how to turn {label}'s "
                       f"own shell off.\n\nExample: ringfence init {client} --mcp --dry-run")
    init_app.command(client)(command)
