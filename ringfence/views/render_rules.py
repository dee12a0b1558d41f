"""Rich rendering of the rule registry for people: ``ringfence rule CODE`` in ruff's
sections, and the ``ringfence rules`` table. Rule text goes through
:func:`ringfence.views.render.visible` like everything else shown (examples are commands).
"""

from __future__ import annotations

from collections.abc import Iterable

from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text

from ringfence.views.render import visible
from ringfence.rfcore.rules import Rule


# Some examples are deliberately huge (the 64 KiB and nesting limits): show
# their start and say how much was left out, rather than pages of `$($(`.
EXAMPLE_LIMIT = 300


def shorten(text: str, limit: int = EXAMPLE_LIMIT) -> str:
    if len(text) <= limit:
        return text
    return f"{text[:limit]}… ({len(text) - limit} more characters)"


SECTIONS = ("What it does", "Why is this bad?", "Example", "Use instead", "Known problems")


def rule_sections(rule: Rule) -> list[tuple[str, str]]:
    """A rule's documentation in ruff's sections (used by ``rule`` and the docs)."""
    return list(zip(SECTIONS, (
        rule.summary, rule.explanation, shorten(rule.bad), shorten(rule.good),
        rule.known_problems or "None known.")))


def rule_view(rule: Rule) -> RenderableType:
    head = Text(f"{rule.code} ", style="bold")
    head.append(rule.name, style="bold cyan")
    head.append(f"  ({rule.family}; {rule.status})", style="dim")
    parts: list[RenderableType] = [head]
    for title, body in rule_sections(rule):
        parts.append(Text(f"\n{title}", style="bold underline"))
        body = visible(body, keep_newlines=True)
        if title in ("Example", "Use instead"):    # indented like a code block
            parts.append(Text("    " + body.replace("\n", "\n    "), style="cyan"))
        else:
            parts.append(Text(body))
    return Group(*parts)


def rules_table(rules: Iterable[Rule]) -> Table:
    table = Table(title="ringfence rules", title_justify="left")
    for col in ("code", "name", "family", "summary", "status"):
        table.add_column(col, overflow="fold")
    for rule in rules:
        table.add_row(Text(rule.code, style="bold"), Text(rule.name), Text(rule.family),
                      Text(rule.summary),
                      Text(rule.status, style="dim" if rule.status == "retired" else ""))
    return table
