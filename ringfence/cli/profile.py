"""CLI commands: profile list | show | lint | compile."""

from __future__ import annotations

import json
import os
from typing import List, Optional

import typer

from . import options
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


SHOW_FORMATS = ("toml", "table", "json")


def _show(name: Optional[str], workspace: Optional[str], fmt: str) -> None:
    from ringfence.profiles.load import load_profile, resolve_active
    from ringfence.profiles.show import profile_rows, profile_summary, profile_toml

    if fmt not in SHOW_FORMATS:
        raise ProfileUsageError(f"unknown format {fmt!r} for profile show",
                                hint="use one of " + ", ".join(SHOW_FORMATS))
    from ringfence.rfcore.workspace import find_workspace

    ws, ws_why = find_workspace(env=os.environ, explicit=workspace)
    if name:
        profile, why = load_profile(name, workspace=ws), "requested on the command line"
    else:
        profile, why = resolve_active(None, env=os.environ, workspace=ws)
    if fmt == "json":
        data = profile_summary(profile)
        data["why"] = why
        data["workspace"] = {"path": ws, "why": ws_why}
        print(json.dumps(data, indent=2))
        return
    if fmt == "toml":
        # Plain stdout, no rich: the text is a profile file (save it, lint it, load it).
        print(profile_toml(profile, why=why), end="")
        print(f"# workspace: {ws} (chosen by: {ws_why})")
        return
    from rich.table import Table

    from .output import console

    table = Table(title=f"profile {profile.name} ({why})", title_justify="left")
    table.add_column("setting", no_wrap=True)
    table.add_column("value", overflow="fold")
    for key, value in profile_rows(profile):
        table.add_row(key, value)
    console.print(table)
    console.print(f"workspace: {ws} (chosen by: {ws_why})", highlight=False, soft_wrap=True)
    if not profile.sandbox:
        console.print("[bold yellow]warning:[/] this profile runs commands WITHOUT a sandbox",
                      highlight=False)


def _lint(targets: List[str]) -> int:
    from ringfence.profiles.lint import lint

    from .output import console, err_console

    from ringfence.profiles.lint import WARNINGS

    total = 0
    for target in targets:
        diags = lint(target)
        # A warning (RF540, RF541: a credential let in on purpose) is printed but
        # does not fail the lint: it can be what the task needs.
        total += len([d for d in diags if d.code not in WARNINGS])
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
    from ringfence.rfcore.workspace import find_workspace

    # The same rule as `run` (issue 23): CLAUDE_PROJECT_DIR, else the git root, else
    # the cwd; so an export describes the sandbox `run` would build from here.
    ws, _why = find_workspace(env=os.environ, explicit=workspace)
    ws = os.path.abspath(ws)
    profile = load_profile(name, workspace=ws)
    try:
        from ringfence.compiler.export import export
    except ModuleNotFoundError as exc:
        if exc.name and exc.name.startswith("compiler"):
            raise ProfileUsageError("profile compile: the exporters (compiler.export) are not "
                                    "available in this build") from None
        raise
    text = export(profile, fmt, workspace=ws)   # refuses what `run` refuses (RF609, RF616)
    print(text, end="" if text.endswith("\n") else "\n")


def register(app: typer.Typer) -> None:
    """Add this module's commands to the app."""
    group = typer.Typer(help="List, show, lint and compile policy profiles.\n\n"
                             "Example: ringfence profile lint .ringfence.toml",
                        no_args_is_help=True)
    app.add_typer(group, name="profile")

    @group.command("list")
    def list_(workspace: Optional[str] = options.workspace(
            "Workspace whose .ringfence.toml counts (default: cwd).")) -> None:
        """List the built-in profiles and mark the active one.

        Example: ringfence profile list
        """
        _list(workspace)

    @group.command("show")
    def show(
        name: Optional[str] = typer.Argument(None, help="Built-in name or TOML path "
                                             "(default: the active profile)."),
        workspace: Optional[str] = options.workspace("Workspace directory (default: CLAUDE_PROJECT_DIR, else the git "
                                                     "root of the cwd, else the cwd)."),
        fmt: str = typer.Option("toml", "--format", "-f", metavar="toml|table|json",
                                help="toml: a profile file that lints clean and loads back "
                                     "to the same settings; table: for reading; json."),
        as_json: bool = options.json_flag("Same as --format json."),
    ) -> None:
        """Say which profile is active and why, then its resolved settings.

        Precedence: --profile / RINGFENCE_PROFILE, then .ringfence.toml in the workspace,
        then $XDG_CONFIG_HOME/ringfence/config.toml, then the built-in build profile.

        Example: ringfence profile show strict > my-profile.toml
        """
        _show(name, workspace, "json" if as_json else fmt)

    @group.command("lint")
    def lint_(targets: List[str] = typer.Argument(..., metavar="NAME|PATH...",
                                                  help="Profiles to lint.")) -> None:
        """Check profiles; print `file:line: CODE message [key]`. Exit 1 on any problem
        (warnings RF540/RF541 are printed and do not fail).

        Every problem of a file is reported in one pass.

        Example: ringfence profile lint strict ./my-profile.toml
        """
        code = _lint(targets)
        if code:
            raise typer.Exit(code)

    @group.command("compile")
    def compile_(
        name: str = typer.Argument(..., help="Built-in name or TOML path."),
        fmt: str = typer.Option(..., "--format", "-f", metavar="FORMAT",
                                help="bwrap | json | srt | seatbelt | claude-code"),
        workspace: Optional[str] = options.workspace(
            "Workspace directory (default: as `run`: CLAUDE_PROJECT_DIR, else the git root, "
            "else the cwd); refused like `run` refuses it if it is missing, /, a system "
            "directory or contains your home (RF609, RF616)."),
    ) -> None:
        """Export a profile: bwrap script, the JSON spec, sandbox-runtime settings, a
        macOS Seatbelt profile or a Claude Code settings block.

        Example: ringfence profile compile build --format srt -w . > srt.json
        """
        _compile(name, fmt, workspace)
