"""CLI commands: approvals list, approve, deny, grants list|revoke.

Every string shown here may come from an agent's command, so it goes through
``render.visible`` and ``rich.text.Text`` (never markup): an approver must see
exactly what they approve, not what escape sequences make it look like.
"""

from __future__ import annotations

import json
import os
import sys
import time
from typing import Optional

import typer

from . import options
from ringfence.rfcore.errors import EXIT_USAGE, UsageError


class CliUsageError(UsageError):
    """Bad usage of a non-run command: exit 2 (SPEC: 125 is for `run`)."""

    exit_code = EXIT_USAGE


def _ledger():
    from ringfence.ledger.store import Ledger

    return Ledger(env=os.environ)


def age(seconds: float) -> str:
    seconds = max(0, int(seconds))
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if seconds >= size:
            return f"{seconds // size}{unit}"
    return f"{seconds}s"


def _text(value: str):
    from rich.text import Text

    from ringfence.views.render import visible

    return Text(visible(value))


def _approvals_list(as_json: bool) -> None:
    from rich.table import Table

    from ringfence.ledger import pending as ap

    from .output import console

    from ringfence.ledger import hook_defer
    from ringfence.session import decisions

    with _ledger() as led:
        hook_defer.expire_stale(led)        # deferred Claude Code calls past their clock
        items = ap.pending(led)
        # A decision recorded with --defer: the request still waits for its caller.
        decided = {a.id: d for a in items if (d := decisions.get(led, a.id)) is not None}
        deferred = {k: d["decision"] for k, d in decided.items()}
        # A deferred call's clock runs from its defer, then from its decision.
        calls = {a.id: dict(c, expires_at=(decided[a.id]["decided_at"] if a.id in decided
                                           else a.created_at) + hook_defer.TTL)
                 for a in items if a.where == hook_defer.WHERE
                 and (c := hook_defer.call_of(led.conn, a.id)) is not None}
    if as_json:
        print(json.dumps([{**a.to_json(), "decision": deferred.get(a.id),
                           **({"claude_code": _call_json(calls[a.id])} if a.id in calls
                              else {})} for a in items], indent=2))
        return
    if not items:
        console.print("no pending approvals")
        return
    from rich.text import Text

    from ringfence.views.render import visible

    # One block per request: long reasons stay readable at any terminal width.
    console.print(f"pending approvals: {len(items)} (state: waiting_for_approval)",
                  style="bold", highlight=False)
    now = time.time()
    for a in items:
        where = {"host": "on the host", "stage": "into the workspace (held changes)",
                 "claude-code": "in Claude Code when its caller resumes the session"}.get(
            a.where, f"in the {a.profile} sandbox")
        caps = ", ".join(a.keys) or "-"
        if not a.grantable:
            caps += "  (one-time: no standing grant can cover it)"
        grid = Table.grid(padding=(0, 1))
        grid.add_column(style="dim", no_wrap=True)
        grid.add_column(overflow="fold")
        from ringfence.session.request import shorten

        grid.add_row("command", _text(shorten(a.command, where="approvals list --json")))
        # Where it runs: the approval is bound to this very directory (its identity).
        grid.add_row("cwd", _text(a.cwd or "-"))
        grid.add_row("needs", _text(caps))
        call = calls.get(a.id)
        if call is not None:
            grid.add_row("claude", _text(f"session {call['session']}, call "
                                         f"{call['tool_use_id']}: resume with claude -p "
                                         f"--resume {call['session']} (expires in "
                                         f"{age(call['expires_at'] - now)})"))
        if a.id in deferred:
            grid.add_row("decided", f"{deferred[a.id]} (--defer): its caller runs it "
                                    "when it resumes")
        for n, r in enumerate(a.reasons):
            # Escaped one by one: the layout is ours, not the command's.
            grid.add_row("why" if n == 0 else "", Text(visible(r)))
        ident = a.run_id if a.where == "stage" else a.id
        verb = "applies" if a.where == "stage" else "runs"
        head = Text.assemble((ident, "bold cyan"), f"  {verb} {where}, waiting {age(a.age(now))}")
        console.print()
        console.print(head)
        console.print(grid)
    console.print()
    console.print("approve: ringfence approve ID [--scope once|session|always]\n"
                  "deny:    ringfence deny ID\n"
                  "held changes (ID run_...): ringfence approvals show RUN_ID for the diffs",
                  highlight=False)


def _approvals_show(ident: str) -> None:
    from ringfence.ledger import pending as ap
    from ringfence.session.held import diffs
    from ringfence.views.render import visible

    with _ledger() as led:
        a = ap.get_or_for_run(led, ident)
        items = diffs(led, a) if a.where == "stage" else []
    print(f"{a.id} (run {a.run_id}) {a.status}: {visible(a.command)}")
    for r in a.reasons:
        print(f"  why: {visible(r)}")
    for path, text in items:
        print(f"--- held: {visible(path)}")
        # Escaped: the diff is the sandbox's text, it must not drive the terminal.
        print("\n".join(visible(line) for line in text.splitlines()) or "(no textual diff)")


def _grants_list(as_json: bool) -> None:
    from rich.table import Table

    from ringfence.ledger.grants import list_grants

    from .output import console

    with _ledger() as led:
        items = list_grants(led)
    if as_json:
        print(json.dumps([g.to_json() for g in items], indent=2))
        return
    if not items:
        console.print("no active grants")
        return
    table = Table(title="active grants", title_justify="left")
    for col in ("capability", "scope", "session", "place", "expires", "approval"):
        table.add_column(col)
    now = time.time()
    for g in items:
        expires = "never" if g.expires_at is None else f"in {age(g.expires_at - now)}"
        table.add_row(_text(g.shown()), g.scope, _text(g.session or "-"), g.place, expires,
                      g.approval_id or "-")
    console.print(table)


def _call_json(call: dict) -> dict:
    return {"session_id": call["session"], "tool_use_id": call["tool_use_id"],
            "expires_in_seconds": max(0, round(call["expires_at"] - time.time()))}


def _defer(approval_id: str, scope: str, session: str | None) -> None:
    from ringfence.views.render import visible
    from ringfence.session import decisions

    from .output import console

    with _ledger() as led:
        a = decisions.record(led, approval_id, scope, via="cli", session=session)
        call = None
        if a.where == "claude-code":
            from ringfence.ledger.hook_defer import call_of

            call = call_of(led.conn, a.id)
    if call is not None:
        console.print(f"decided {a.id}: {scope}; nothing ran here. Claude Code runs it when "
                      f"its caller resumes the session within 15 minutes (claude -p --resume "
                      f"{visible(call['session'])}): {visible(a.command)}",
                      highlight=False, markup=False)
        return
    console.print(f"decided {a.id} (run {a.run_id}): {scope}; nothing ran here. The caller "
                  f"waiting on it runs it and gets its output: {visible(a.command)}",
                  highlight=False, markup=False)


def register(app: typer.Typer) -> None:
    """Add this module's commands to the app."""
    approvals_app = typer.Typer(help="Pending host/sandbox requests waiting for a person.\n\n"
                                     "Example: ringfence approvals list --json",
                                no_args_is_help=True)
    grants_app = typer.Typer(help="Standing grants, per capability key.\n\n"
                                  "Example: ringfence grants revoke longbridge",
                             no_args_is_help=True)
    app.add_typer(approvals_app, name="approvals")
    app.add_typer(grants_app, name="grants")

    @approvals_app.command("list")
    def approvals_list(as_json: bool = options.json_flag()) -> None:
        """List pending requests: id, command, capabilities, reasons, age.

        Example: ringfence approvals list
        """
        _approvals_list(as_json)

    @approvals_app.command("show")
    def approvals_show(ident: str = typer.Argument(..., metavar="ID",
                                                   help="An ap_… id, or a run_… id with held changes.")) -> None:
        """Show one request; for held changes, the diff of each held file.

        Example: ringfence approvals show run_k3j5x7q2mn
        """
        _approvals_show(ident)

    @app.command()
    def approve(
        approval_id: str = typer.Argument(..., metavar="ID",
                                          help="The ap_… id printed by run, or a run_… id "
                                               "whose held changes to apply."),
        scope: str = typer.Option("once", "--scope",
                                  help="once | session | always (grants the capabilities)."),
        session: Optional[str] = options.session(
            "Session for a session grant (default: RINGFENCE_SESSION, else the request's "
            "session)."),
        defer: bool = typer.Option(False, "--defer",
                                   help="Record the decision only: the caller waiting on the "
                                        "request (a Session, the MCP server) runs it and "
                                        "gets its output."),
    ) -> None:
        """Run a pending request where it was asked for, with its real output and exit status.

        The result resumes the original run in the ledger. --scope session/always also
        grants the request's capabilities (never for one-time requests).

        With --defer the decision is only recorded: the Session or MCP call waiting on
        the request runs it and gets the real output (the ledger keeps the decision).
        A deferred Claude Code call (hook --headless) is always only decided: Claude
        Code runs it when its caller resumes the session.

        Example: ringfence approve ap_k3j5x7q2mn --scope session
        """
        from ringfence.session import governor as G
        from ringfence.ledger.grants import SCOPES

        if scope not in SCOPES:
            raise CliUsageError(f"unknown scope {scope!r}", hint="use once, session or always")
        session = session or os.environ.get("RINGFENCE_SESSION") or None
        if not defer:
            from ringfence.ledger import pending as ap

            with _ledger() as led:
                # A deferred Claude Code call runs in Claude Code, never here.
                defer = ap.get_or_for_run(led, approval_id).where == "claude-code"
        if defer:
            _defer(approval_id, scope, session)
            return
        with _ledger() as led:
            # Output goes straight to our stdout/stderr file descriptors (raw bytes),
            # never through rich or typer, so what the person sees is the command's own.
            code = G.approve(approval_id, scope=scope, session=session, ledger=led)
        sys.stdout.flush()
        raise typer.Exit(code)

    @app.command()
    def deny(approval_id: str = typer.Argument(..., metavar="ID")) -> None:
        """Refuse a pending request; its run is recorded as denied.

        Example: ringfence deny ap_k3j5x7q2mn
        """
        from ringfence.session import governor as G

        from .output import console

        with _ledger() as led:
            a = G.deny(approval_id, ledger=led)
        console.print(f"denied {a.id} (run {a.run_id})" + (
            "; Claude Code gets `deny` when its caller resumes the session"
            if a.where == "claude-code" else ""), highlight=False, markup=False)

    @grants_app.command("list")
    def grants_list(as_json: bool = options.json_flag()) -> None:
        """List active grants (expired session grants are hidden).

        Example: ringfence grants list --json
        """
        _grants_list(as_json)

    @grants_app.command("revoke")
    def grants_revoke(
        key: Optional[str] = typer.Argument(None, metavar="KEY",
                                            help="Capability key, e.g. longbridge or 'git push'."),
        all_: bool = typer.Option(False, "--all", help="Revoke every grant."),
    ) -> None:
        """Revoke the grants for one capability key (every scope), or --all.

        Example: ringfence grants revoke 'git push'
        """
        from ringfence.ledger.grants import revoke
        from ringfence.views.render import visible

        from .output import console

        if bool(key) == all_:
            raise CliUsageError("give a capability KEY or --all (not both)",
                             hint="ringfence grants revoke longbridge")
        with _ledger() as led:
            n = revoke(led, key, all_=all_)
        if n == 0 and not all_:
            raise CliUsageError(f"no such grant: {visible(key)!r}; nothing was revoked",
                                hint="'ringfence grants list' shows the active grants")
        console.print(f"revoked {n} grant{'s' if n != 1 else ''}", highlight=False)
