"""CLI commands: init claude-code (install the hook and the exported settings)."""

from __future__ import annotations

import json
import os
from typing import Optional

import typer


def init_claude_code(*, scope: str, profile: Optional[str], wrap: bool, dry_run: bool,
                     workspace: Optional[str], out=print) -> int:
    from ringfence.compiler.export import render as export_render
    from ringfence.hooks import install
    from ringfence.hooks.wrap import self_invocation
    from ringfence.profiles.load import load_profile, resolve_active
    from ringfence.rfcore.workspace import find_workspace

    ws, ws_why = find_workspace(env=os.environ, explicit=workspace)
    if profile:
        prof = load_profile(profile, workspace=ws)
    else:
        prof, _why = resolve_active(None, env=os.environ, workspace=ws)
    export = json.loads(export_render(prof, "claude-code", workspace=ws).text)
    if wrap:
        # ringfence is the sandbox: a Claude Code sandbox around `ringfence run`
        # could neither start bwrap nor write the ledger.
        export.pop("sandbox", None)
    ref = profile or None
    command = install.hook_command(self_invocation(), ref, wrap)
    path = install.settings_path(scope, ws, os.environ)
    before = install.read_settings(path)
    after = install.merge(before, export, command, user=scope == "user", workspace=ws)
    old = install.render(before) if path.exists() else ""
    new = install.render(after)
    out(f"ringfence init claude-code: {path} (workspace {ws}, chosen by: {ws_why}; "
        f"profile {prof.name})")
    if wrap:
        out("  --wrap: Claude Code's own sandbox block is not written (ringfence runs "
            "each command in its sandbox)")
    if old == new:
        out("  already up to date; nothing to change")
        return 0
    out(install.diff(path, old, new).rstrip("\n"))
    if dry_run:
        out("  --dry-run: nothing was written")
        return 0
    install.write(path, new)
    out(f"  wrote {path}")
    return 0


def register(app: typer.Typer) -> None:
    """Add this module's commands to the app."""
    init_app = typer.Typer(help="Install ringfence into an agent's settings.\n\n"
                                "Example: ringfence init claude-code --project --dry-run",
                           no_args_is_help=True)
    app.add_typer(init_app, name="init")

    @init_app.command("claude-code")
    def claude_code(
        project: bool = typer.Option(False, "--project",
                                     help="Write <project>/.claude/settings.json (default)."),
        user: bool = typer.Option(False, "--user", help="Write ~/.claude/settings.json."),
        profile: Optional[str] = typer.Option(None, "--profile", help="Profile to judge by."),
        wrap: bool = typer.Option(False, "--wrap",
                                  help="Run each Bash command under 'ringfence run'."),
        dry_run: bool = typer.Option(False, "--dry-run", help="Show the diff; write nothing."),
        workspace: Optional[str] = typer.Option(None, "--workspace",
                                                help="Project directory (default: "
                                                "CLAUDE_PROJECT_DIR, git root, cwd)."),
    ) -> None:
        """Merge the hook (every event) and the profile's exported sandbox settings
        into Claude Code's settings.json: idempotent, shows a diff, keeps your keys.

        Example: ringfence init claude-code --project --profile build --dry-run
        """
        if project and user:
            from ringfence.rfcore.errors import UsageError

            raise UsageError("give --project or --user, not both")
        raise typer.Exit(init_claude_code(scope="user" if user else "project",
                                          profile=profile, wrap=wrap, dry_run=dry_run,
                                          workspace=workspace, out=typer.echo))
