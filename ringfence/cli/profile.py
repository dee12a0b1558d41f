"""CLI commands: profile list | show | lint | compile."""

from __future__ import annotations

import json
import os
from typing import List, Optional

import typer

from ringfence.rfcore.errors import EXIT_LINT, EXIT_USAGE, RingfenceError, UsageError

FORMATS = ("bwrap", "json", "srt", "seatbelt", "claude-code")


class ProfileUsageError(UsageError):
    exit_code = EXIT_USAGE


def _active(workspace: str | None):
    """(profile, why) of the active profile, or (None, error text) if it is broken."""
    from ringfence.profiles.load import resolve_active

    try:
        return resolve_active(None, env=os.environ, workspace=workspace or os.getcwd())
    except RingfenceError as exc:
        return None, str(exc)


def _list(workspace: Optional[str]) -> None:
    from rich.table import Table

    from ringfence.profiles.load import list_builtins

    from .output import console

    active, why = _active(workspace)
    table = Table(title="ringfence profiles", title_justify="left")
    for col in ("", "name", "description", "source"):
        table.add_column(col)
    names = set()
    for name, desc in list_builtins():
        names.add(f"builtin:{name}")
        mark = "●" if active is not None and active.source == f"builtin:{name}" else ""
        table.add_row(mark, name, desc, f"builtin:{name}")
    if active is not None and active.source not in names:
        table.add_row("●", active.name, active.description, active.source)
    console.print(table)
    if active is None:
        console.print(f"[bold red]active profile is broken:[/] {why}", highlight=False)
    else:
        console.print(f"● active: [bold]{active.name}[/] ({why})", highlight=False)


def _show(name: Optional[str], workspace: Optional[str], as_json: bool) -> None:
    from ringfence.profiles.load import load_profile, profile_summary, resolve_active

    from .output import console

    ws = workspace or os.getcwd()
    if name:
        profile, why = load_profile(name, workspace=ws), "requested on the command line"
    else:
        profile, why = resolve_active(None, env=os.environ, workspace=ws)
    data = profile_summary(profile)
    if as_json:
        data["why"] = why
        print(json.dumps(data, indent=2))
        return
    console.print(f"[bold]{profile.name}[/] — {profile.description or '(no description)'}",
                  highlight=False)
    console.print(f"active because: {why}" if not name else f"shown because: {why}",
                  highlight=False)
    if profile.extends:
        console.print("extends: " + " -> ".join(profile.extends), highlight=False)
    for section, values in data.items():
        if section in ("name", "extends", "why"):
            continue
        if isinstance(values, dict):
            console.print(f"[bold]\\[{section}][/]", highlight=False)
            for k, v in values.items():
                console.print(f"  {k} = {json.dumps(v)}", highlight=False, soft_wrap=True)
        else:
            console.print(f"{section} = {json.dumps(values)}", highlight=False)
    if not profile.sandbox:
        console.print("[bold yellow]warning:[/] this profile runs commands WITHOUT a sandbox",
                      highlight=False)


def _lint(targets: List[str]) -> int:
    from ringfence.profiles.lint import lint

    from .output import console, err_console

    total = 0
    for target in targets:
        diags = lint(target)
        total += len(diags)
        for d in diags:
            console.print(d.format(), highlight=False, markup=False, soft_wrap=True)
            if d.column and d.source:
                console.print(f"    {d.source}\n    {' ' * (d.column - 1)}^",
                              highlight=False, markup=False)
        if not diags:
            err_console.print(f"{target}: clean", highlight=False, markup=False)
    if total:
        err_console.print(f"{total} problem(s) in {len(targets)} profile(s)", highlight=False)
    return EXIT_LINT if total else 0


def _compile(name: str, fmt: str, workspace: Optional[str]) -> None:
    from ringfence.profiles.load import load_profile

    if fmt not in FORMATS:
        raise ProfileUsageError(f"unknown format {fmt!r}", hint="use one of " + ", ".join(FORMATS))
    ws = os.path.abspath(workspace or os.getcwd())
    profile = load_profile(name, workspace=ws)
    try:
        from ringfence.compiler.export import export
    except ModuleNotFoundError as exc:
        if exc.name and exc.name.startswith("compiler"):
            raise ProfileUsageError("profile compile: the exporters (compiler.export) are not "
                                    "available in this build") from None
        raise
    text = export(profile, fmt, workspace=ws)
    print(text, end="" if text.endswith("\n") else "\n")


def register(app: typer.Typer) -> None:
    """Add this module's commands to the app."""
    group = typer.Typer(help="List, show, lint and compile policy profiles.\n\n"
                             "Example: ringfence profile lint .ringfence.toml",
                        no_args_is_help=True)
    app.add_typer(group, name="profile")

    @group.command("list")
    def list_(workspace: Optional[str] = typer.Option(
            None, "--workspace", help="Workspace whose .ringfence.toml counts (default: cwd).")
    ) -> None:
        """List the built-in profiles and mark the active one.

        Example: ringfence profile list
        """
        _list(workspace)

    @group.command("show")
    def show(
        name: Optional[str] = typer.Argument(None, help="Built-in name or TOML path "
                                             "(default: the active profile)."),
        workspace: Optional[str] = typer.Option(None, "--workspace",
                                                help="Workspace directory (default: cwd)."),
        as_json: bool = typer.Option(False, "--json", help="Print the resolved settings as JSON."),
    ) -> None:
        """Say which profile is active and why, then its resolved settings.

        Precedence: --profile / RINGFENCE_PROFILE, then .ringfence.toml in the workspace,
        then $XDG_CONFIG_HOME/ringfence/config.toml, then the built-in build profile.

        Example: ringfence profile show strict
        """
        _show(name, workspace, as_json)

    @group.command("lint")
    def lint_(targets: List[str] = typer.Argument(..., metavar="NAME|PATH...",
                                                  help="Profiles to lint.")) -> None:
        """Check profiles; print `file:line: CODE message [key]`. Exit 1 on any problem.

        Example: ringfence profile lint strict ./my-profile.toml
        """
        code = _lint(targets)
        if code:
            raise typer.Exit(code)

    @group.command("compile")
    def compile_(
        name: str = typer.Argument(..., help="Built-in name or TOML path."),
        fmt: str = typer.Option(..., "--format", help="bwrap | json | srt | seatbelt | "
                                "claude-code"),
        workspace: Optional[str] = typer.Option(None, "--workspace",
                                                help="Workspace directory (default: cwd)."),
    ) -> None:
        """Export a profile: bwrap argv, the JSON spec, sandbox-runtime settings, a macOS
        Seatbelt profile or a Claude Code settings block.

        Example: ringfence profile compile build --format bwrap --workspace .
        """
        _compile(name, fmt, workspace)
