"""CLI commands: init claude-code (install the hook and the exported settings)."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Optional

import typer


def init_claude_code(*, scope: str, profile: Optional[str], wrap: bool, dry_run: bool,
                     workspace: Optional[str], out=print, headless: bool = False) -> int:
    """Install the hook (``--wrap`` by default; ``--headless`` for ``claude -p``) and
    the profile's settings (see ``ringfence/hooks/portable.py`` for what goes into
    which file)."""
    import shutil

    from ringfence.compiler.export import render as export_render
    from ringfence.hooks import install, portable
    from ringfence.hooks.wrap import self_invocation
    from ringfence.profiles.load import load_profile, resolve_active
    from ringfence.rfcore.workspace import find_workspace

    ws, ws_why = find_workspace(env=os.environ, explicit=workspace)
    if profile:
        prof = load_profile(profile, workspace=ws)
    else:
        prof, _why = resolve_active(None, env=os.environ, workspace=ws)
    export = json.loads(export_render(prof, "claude-code", workspace=ws).text)
    export = {k: v for k, v in export.items() if not k.startswith("_")}
    ref = profile or None
    user = scope == "user"
    # Project settings are committed: the hook is called by name, found on PATH.
    command = install.hook_command(self_invocation() if user else ["ringfence"], ref, wrap,
                                   headless)
    home = os.environ.get("HOME") or os.path.expanduser("~")
    out(f"ringfence init claude-code: workspace {ws} (chosen by: {ws_why}); profile "
        f"{prof.name}; " + ("--wrap: each Bash command runs under 'ringfence run'" if wrap
                            else "--no-wrap: commands run on the host, judged by the hook")
        + ("; --headless: an ask is answered defer (claude -p), decided with ringfence "
           "approve/deny, and the resumed session gets the decision" if headless else ""))
    if user:
        block = {k: v for k, v in export.items() if wrap is False or k != "sandbox"}
        plan = [(install.settings_path("user", ws, os.environ), block, True)]
    else:
        shared, personal = portable.split(prof, export, ws, wrap=wrap)
        plan = [(Path(ws) / ".claude" / "settings.json", shared, True),
                (Path(ws) / ".claude" / "settings.local.json", personal, False)]
    for path, block, with_hooks in plan:
        before = install.read_settings(path)
        after = install.merge(before, block, command if with_hooks else None,
                              user=user, workspace=ws)
        if wrap:
            if portable.nests(after):
                out(f"  {path}: removing its enabled 'sandbox' block: Claude Code's sandbox "
                    "around 'ringfence run' would nest one sandbox in the other (RF640)")
            after = portable.drop_nesting(after)
        _write_one(path, before, after, dry_run, out)
    found = shutil.which("ringfence")
    if not user and found is None:
        out("  warning: 'ringfence' is not on PATH, so Claude Code could not run the hook; "
            "put it on PATH (pipx install, or a link in ~/.local/bin), or use --user")
    elif not user and os.path.realpath(found).startswith(os.path.realpath(ws) + os.sep):
        # A `ringfence` the project (or the agent) can write would judge every call.
        out(f"  warning: 'ringfence' on PATH is {found}, inside the project: whatever "
            "writes the project could replace the judge; install it outside, or use --user")
    if wrap:
        ok, detail = portable.nesting(ws, home)
        if not ok:
            out(f"  warning: {detail}; fix: set \"sandbox\": {{\"enabled\": false}} there, "
                "or run ringfence init claude-code --user")
    return 0


def _write_one(path, before: dict, after: dict, dry_run: bool, out) -> None:
    from ringfence.hooks import install

    old = install.render(before) if path.exists() else ""
    new = install.render(after) if after or path.exists() else ""
    size = f"{new.count(chr(10))} lines, {len(new.encode())} bytes"
    if old == new:
        out(f"  {path}: already up to date ({size})")
        return
    out(install.diff(path, old, new).rstrip("\n"))
    if dry_run:
        out(f"  --dry-run: {path} not written (it would be {size})")
        return
    install.write(path, new)
    out(f"  wrote {path} ({size})")


def register(app: typer.Typer) -> None:
    """Add this module's commands to the app."""
    init_app = typer.Typer(help="Install ringfence into an agent's settings.\n\n"
                                "Example: ringfence init claude-code --project --dry-run",
                           no_args_is_help=True)
    app.add_typer(init_app, name="init")
    from . import init_mcp

    init_mcp.register(init_app)

    @init_app.command("claude-code")
    def claude_code(
        project: bool = typer.Option(False, "--project",
                                     help="Write <project>/.claude/settings.json (default)."),
        user: bool = typer.Option(False, "--user", help="Write ~/.claude/settings.json."),
        profile: Optional[str] = typer.Option(None, "--profile", help="Profile to judge by."),
        wrap: bool = typer.Option(True, "--wrap/--no-wrap",
                                  help="Run each Bash command under 'ringfence run' "
                                  "(default); --no-wrap runs them on the host."),
        headless: bool = typer.Option(False, "--headless",
                                      help="For claude -p: the hook answers defer instead "
                                           "of ask (docs/claude-code.md)."),
        dry_run: bool = typer.Option(False, "--dry-run", help="Show the diff; write nothing."),
        workspace: Optional[str] = typer.Option(None, "--workspace",
                                                help="Project directory (default: "
                                                "CLAUDE_PROJECT_DIR, git root, cwd)."),
        mcp: bool = typer.Option(False, "--mcp",
                                 help="Register `ringfence mcp` in the project's .mcp.json "
                                      "instead of the hook."),
    ) -> None:
        """Merge the hook (every event, --wrap by default) and the profile's settings
        into Claude Code's settings: idempotent, shows a diff, keeps your keys.
        Project settings stay portable (.claude/settings.json); personal ones go to
        .claude/settings.local.json.

        Example: ringfence init claude-code --project --profile build --dry-run
        """
        if project and user:
            from ringfence.rfcore.errors import UsageError

            raise UsageError("give --project or --user, not both")
        if mcp and headless:
            from ringfence.rfcore.errors import UsageError

            raise UsageError("--headless is an option of the hook; --mcp installs no hook",
                             hint="ringfence init claude-code --headless")
        if mcp:
            from .init_mcp import init_mcp

            raise typer.Exit(init_mcp("claude-code", scope="user" if user else "project",
                                      profile=profile, dry_run=dry_run, workspace=workspace,
                                      out=typer.echo))
        raise typer.Exit(init_claude_code(scope="user" if user else "project",
                                          profile=profile, wrap=wrap, dry_run=dry_run,
                                          workspace=workspace, out=typer.echo,
                                          headless=headless))
