"""`ledger show`: the run's requests to the per-run credential broker
(compiler/broker.py), one row each: given or refused, which credential, why."""

from __future__ import annotations


def split(decisions: list[dict]) -> tuple[list[dict], list[dict]]:
    """(network decisions, credential requests) of a run's ``network`` list."""
    creds = [n for n in decisions if n.get("kind") == "credential"]
    return [n for n in decisions if n.get("kind") != "credential"], creds


def credential_table(creds: list[dict], text):
    from rich.table import Table
    from rich.text import Text

    t = Table(title="credential requests", title_justify="left")
    for col in ("host", "protocol", "decision", "credential", "why"):
        t.add_column(col)
    for n in creds:
        t.add_row(text(n.get("host")), text(n.get("protocol")),
                  Text("given", style="yellow") if n.get("given")
                  else Text("refused", style="red"), text(n.get("credential") or "-"),
                  text(n.get("reason") or ""))
    return t
