"""CLI commands: ledger list | show | export.

State colours never blur ``waiting_for_approval`` into a failure: it has its own
colour and its own word, everywhere.
"""

from __future__ import annotations

import json
import os
import time
from typing import Optional

import typer

from ringfence.ledger.changeset import SUMMARY_AT
from ringfence.rfcore.errors import EXIT_USAGE, UsageError

from . import options
from .output import short_when as _short_when

# The shared pieces of the ledger views live with the runs table (no import cycle).
from .runlist import STATE_STYLE, _ledger, _state, _t, _when  # noqa: E402,F401


def _secs(value) -> str | None:
    return None if value is None else f"{value:.2f}s"


MAX_LIMIT = 1_000_000
LIST_STATES = ("completed", "failed", "waiting_for_approval", "denied", "aborted",
               "sandbox_error", "limit", "running")


class LedgerUsageError(UsageError):
    exit_code = EXIT_USAGE


def parse_when(text: str, option: str) -> float:
    """An absolute local date/time (YYYY-MM-DD[THH:MM[:SS]]) or an age (90m, 12h, 7d)."""
    import re
    from datetime import datetime

    raw = text.strip()
    m = re.fullmatch(r"([0-9]{1,6})([smhdw])", raw)
    if m:
        unit = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800}[m.group(2)]
        return time.time() - int(m.group(1)) * unit
    try:
        when = datetime.fromisoformat(raw.replace(" ", "T"))
    except ValueError:
        raise LedgerUsageError(
            f"{option} takes a date (YYYY-MM-DD[THH:MM[:SS]], local time) or an age such as "
            f"12h or 30d, not {text!r}", hint=f"for example {option} 30d") from None
    return when.timestamp()


def _verdict(data: dict | None):
    if not data:
        return None
    from ringfence.classifier.verdict import Capability, Decoration, Finding, Verdict

    return Verdict(data["command"], data["verdict"],
                   tuple(Capability(c["key"], c["program"], tuple(c["argv"]), tuple(c["span"]),
                                    tuple(c.get("effects", ()))) for c in data["capabilities"]),
                   tuple(Decoration(d["code"], d["text"], tuple(d["span"]))
                         for d in data["decorations"]),
                   tuple(Finding(f["code"], f["message"], tuple(f["span"]))
                         for f in data["findings"]), data.get("parser", "tree-sitter-bash"))


# The proxy's 403 body names the same rule (compiler/proxy.py `_reply`): a refusal
# that no deny pattern made is the default deny.
DEFAULT_DENY = "default deny (not in the allowlist)"


def _rule(decision: dict) -> str:
    return decision.get("rule") or ("-" if decision.get("allowed") else DEFAULT_DENY)


def show_view(rec):
    """A readable panel: command + verdict, approvals, events, diff, network, tails."""
    from rich.console import Group
    from rich.panel import Panel
    from rich.table import Table
    from rich.text import Text

    parts: list = []
    head = Table.grid(padding=(0, 2))
    head.add_column(style="bold")
    head.add_column()
    for label, value in (("state", _state(rec.state)), ("kind", _t(rec.kind)),
                         ("profile", _t(f"{rec.profile} (spec {rec.spec_digest or '-'})")),
                         ("workspace", _t(rec.workspace)), ("cwd", _t(rec.cwd)),
                         ("session", _t(rec.session or "-")), ("started", _when(rec.created_at)),
                         ("exit code", _t(rec.result("exit_code"))),
                         ("outcome", _t(rec.result("outcome") or "-")),
                         ("duration", _t(_secs(rec.result("duration"))))):
        head.add_row(label, value)
    if rec.parent_id:
        head.add_row("escalated from", rec.parent_id)
    if rec.children:
        head.add_row("escalated to", ", ".join(rec.children))
    parts.append(head)

    verdict = _verdict(rec.verdict)
    if verdict is not None:
        from ringfence.views.render import verdict_view

        parts += [Text("\ncommand and verdict", style="bold underline"),
                  verdict_view(verdict, rec.decision)]
    else:
        parts += [Text("\ncommand", style="bold underline"), _t(rec.command)]
    if rec.decision and verdict is None:
        parts.append(_t(f"decision: {rec.decision.get('decision')}: "
                        + "; ".join(rec.decision.get("reasons", []))))

    if rec.approvals:
        t = Table(title="approvals", title_justify="left")
        for col in ("id", "status", "scope", "where", "decided by", "decided at"):
            t.add_column(col)
        for a in rec.approvals:
            t.add_row(a["id"], a["status"], a["scope"] or "-", a["where"],
                      _t(a["decided_by"] or "-"), _when(a["decided_at"]))
        parts.append(t)

    ev = Table(title="events", title_justify="left")
    for col in ("#", "at", "state", "exit", "note"):
        ev.add_column(col, overflow="fold")
    for e in rec.events:
        ev.add_row(str(e["seq"]), _when(e["at"]), _state(e["state"]),
                   "-" if e["exit_code"] is None else str(e["exit_code"]), _t(e["note"] or ""))
    parts.append(ev)

    changes = rec.result("changes")
    if changes:
        t = Table(title="workspace changes" + (" (capped: partial)" if changes.get("capped")
                                                else ""), title_justify="left")
        t.add_column("change")
        t.add_column("path", overflow="fold")
        summarized = False
        for kind, mark in (("created", "+"), ("modified", "~"), ("deleted", "-"),
                           ("protected_created", "!")):
            items = changes.get(kind, [])
            if kind != "protected_created" and len(items) > SUMMARY_AT:
                summarized = True
                for label, text in change_rows(kind, items):
                    t.add_row(f"{mark} {label}", _t(text))
                continue
            for path in items:
                if isinstance(path, dict):        # a note: {"code", "message", ...}
                    path = f"{path.get('code', '')} {path.get('message', '')}".strip()
                t.add_row(f"{mark} {kind}", _t(path))
        parts.append(t if t.row_count else Text("workspace changes: none"))
        if summarized:
            parts.append(Text("every path: ringfence ledger show ID --json, or "
                              "ringfence ledger export --jsonl", style="dim"))

    from .ledger_creds import credential_table, split
    network, creds = split(rec.result("network") or [])
    parts += [credential_table(creds, _t)] if creds else []
    if network:
        t = Table(title="network decisions", title_justify="left")
        for col in ("host", "port", "decision", "rule"):
            t.add_column(col)
        for n in network:
            t.add_row(_t(n.get("host")), str(n.get("port")),
                      Text("allowed", style="green") if n.get("allowed")
                      else Text("refused", style="red"), _t(_rule(n)))
        parts.append(t)
    for d in rec.result("degradations") or []:
        parts.append(_t(f"degradation: {d.get('code', '')} {d.get('message', d)}"
                        if isinstance(d, dict) else f"degradation: {d}"))
    for name in ("stdout_tail", "stderr_tail"):
        if rec.result(name):
            parts += [Text(f"\n{name.replace('_', ' ')}", style="bold underline"),
                      _t(rec.result(name))]
    return Panel(Group(*parts), title=f"run {rec.id}", title_align="left")


def change_rows(kind: str, paths: list[str]) -> list[tuple[str, str]]:
    """(change, text) rows summarizing a long path list by directory tree."""
    from ringfence.ledger.changeset import summarize

    rows, more, more_groups = summarize(paths)
    dirs = len({p.rpartition("/")[0] for p in paths})
    out = [(kind, f"{len(paths):,} paths in {dirs:,} director{'y' if dirs == 1 else 'ies'}")]
    for label, count, ndirs in rows:
        where = f"under {label}" if label.endswith("/") else label
        out.append(("", f"{count:,} {where} ({ndirs:,} dir{'' if ndirs == 1 else 's'})"))
    if more:
        out.append(("", f"… and {more:,} more under {more_groups:,} more "
                        f"director{'y' if more_groups == 1 else 'ies'}"))
    return out


def register(app: typer.Typer) -> None:
    """Add this module's commands to the app."""
    ledger_app = typer.Typer(help="The run ledger: every run, refusal and approval.\n\n"
                                  "Example: ringfence ledger list --limit 10",
                             no_args_is_help=True)
    app.add_typer(ledger_app, name="ledger")

    @ledger_app.command("list")
    def ledger_list(as_json: bool = options.json_flag(),
                    limit: str = options.number_text("50", "--limit",
                                                     f"How many recent runs (1 to {MAX_LIMIT})."),
                    state: Optional[str] = typer.Option(
                        None, "--state", metavar="STATE",
                        help="Only runs in STATE: " + ", ".join(LIST_STATES) + "."),
                    session: Optional[str] = options.session("Only runs of session S."),
                    since: Optional[str] = typer.Option(
                        None, "--since", metavar="WHEN",
                        help="Only runs started at or after WHEN: YYYY-MM-DD[THH:MM[:SS]] "
                             "(local time) or an age such as 90m, 12h, 7d."),
                    source: str = typer.Option(
                        "run", "--source", metavar="run|hook",
                        help="run: runs; hook: the Claude Code hook's decisions.")) -> None:
        """List recent runs (or the Claude Code hook's decisions), newest first.

        Example: ringfence ledger list --state waiting_for_approval --since 1d
        Example: ringfence ledger list --source hook
        """
        from ringfence.fast.numbers import number

        n = number(limit, option="--limit", low=1, high=MAX_LIMIT, example=20)
        if source not in ("run", "hook"):
            raise LedgerUsageError(f"unknown --source {source!r}", hint="use run or hook")
        if source == "hook":
            if state is not None or session is not None or since is not None:
                raise LedgerUsageError("--state/--session/--since filter runs; not with "
                                       "--source hook")
            from .hooklist import list_hook

            list_hook(n, as_json)
            return
        if state is not None and state not in LIST_STATES:
            raise LedgerUsageError(f"unknown state {state!r}",
                                   hint="use one of " + ", ".join(LIST_STATES))
        from .runlist import list_runs

        list_runs(n, as_json, state=state, session=session,
                  since=None if since is None else parse_when(since, "--since"))

    @ledger_app.command("prune")
    def ledger_prune(
        before: Optional[str] = typer.Option(
            None, "--before", metavar="WHEN",
            help="Delete runs and hook records from before WHEN: YYYY-MM-DD[THH:MM[:SS]] "
                 "(local time) or an age such as 30d."),
        keep: Optional[str] = options.number_text(
            None, "--keep", "Keep the N most recent runs and the N most recent hook events, "
            "delete the older ones."),
        dry_run: bool = typer.Option(False, "--dry-run", help="Only say what would go."),
        as_json: bool = options.json_flag("Print the counts as JSON."),
    ) -> None:
        """Delete old runs and hook records in one transaction (the only path that
        deletes ledger rows).

        A run waiting for approval, and every run that a kept run escalated from,
        is never deleted. With both options, a run must be older than --before AND
        outside the --keep newest to go. The Claude Code hook's decisions go by the
        same rules (--keep counts them separately from runs); an ask still open
        (unanswered, under 15 minutes old) stays with its events.

        Example: ringfence ledger prune --before 30d --keep 1000
        """
        from ringfence.fast.numbers import number
        from ringfence.ledger.prune import prune

        from .output import console

        if before is None and keep is None:
            raise LedgerUsageError("ledger prune needs --before WHEN or --keep N",
                                   hint="ringfence ledger prune --before 30d")
        cutoff = None if before is None else parse_when(before, "--before")
        n = None if keep is None else number(keep, option="--keep", low=0, high=10**12,
                                             example=1000)
        from ringfence.ledger.store import Ledger

        with Ledger(env=os.environ) as led:      # prune writes: never the read-only opener
            result = prune(led, before=cutoff, keep=n, dry_run=dry_run)
        if as_json:
            print(json.dumps(result))
            return
        from ringfence.ledger.prune import describe

        console.print(describe(result), highlight=False)

    @ledger_app.command("show")
    def ledger_show(run_id: str = typer.Argument(..., metavar="ID"),
                    as_json: bool = options.json_flag()) -> None:
        """Show one run: command and verdict, approvals, file diff, network.

        Example: ringfence ledger show run_3xk2m7q9ab
        """
        from ringfence.rfcore.errors import EXIT_USAGE, LedgerError

        from .output import console

        with _ledger() as led:
            rec = led.get_run(run_id)
        if rec is None:
            err = LedgerError(f"no run {run_id!r} in the ledger",
                              hint="see 'ringfence ledger list'")
            err.exit_code = EXIT_USAGE
            raise err
        if as_json:
            print(json.dumps(rec.to_json(), indent=2))
            return
        console.print(show_view(rec))

    @ledger_app.command("export")
    def ledger_export(jsonl: bool = typer.Option(True, "--jsonl",
                                                 help="One JSON object per run (the only format).")
                      ) -> None:
        """Export every run, then every hook decision, as JSON lines, oldest first.

        Example: ringfence ledger export --jsonl > runs.jsonl
        """
        import sys

        from ringfence.ledger.hook_rows import list_events

        with _ledger() as led:
            for record in led.export():
                sys.stdout.write(json.dumps(record) + "\n")
            # The Claude Code hook's decisions too (issue 23): "kind": "hook" says which.
            for event in reversed(list_events(led, None)):
                sys.stdout.write(json.dumps({"kind": "hook", **event}) + "\n")
