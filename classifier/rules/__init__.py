"""Classifier rules, one family per file.

Each check is a small function keyed by its registry code. It reads the IR
(``classifier.ir``) and the analysis (``classifier.analysis``) through a
:class:`Context` and yields ``(span, message)`` pairs; it never sees a
tree-sitter node. The engine attaches the code and builds the records, so a
finding is always data from the one registry (``rfcore.rules``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Iterable

from ..analysis import Invocation
from ..data import interp_for
from ..ir import Command, Redirect, Script, Span

Hit = tuple[Span, str]
Check = Callable[["Context"], Iterable[Hit]]
Gate = Callable[["Context"], bool]


@dataclass(slots=True)
class Context:
    script: Script
    invocations: list[Invocation]
    # Filled by the decoration family, read by the capability family:
    helper_commands: set[int] = field(default_factory=set)
    filter_commands: set[int] = field(default_factory=set)
    decorated_redirects: set[int] = field(default_factory=set)   # ids into script.redirects
    names: set[str] = field(default_factory=set)          # program basenames present
    interp_modes: dict[int, tuple] = field(default_factory=dict)   # id(inv) -> interp_mode()
    construct_kinds: set[str] = field(default_factory=set)
    fact_kinds: set[str] = field(default_factory=set)
    pipelines: bool = False
    assignments: bool = False
    has_interp: bool | None = None        # computed on first use

    by_index: dict[int, list[Invocation]] = field(default_factory=dict)
    redirects_by_owner: dict[int | None, list[tuple[int, Redirect]]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        # indexes, so per-command lookups stay linear on a 10,000-stage pipeline
        for inv in self.invocations:
            self.by_index.setdefault(inv.index, []).append(inv)
        for i, r in enumerate(self.script.redirects):
            self.redirects_by_owner.setdefault(r.owner, []).append((i, r))
        self.names = {inv.name for inv in self.invocations}
        self.construct_kinds = {c.kind for c in self.script.constructs}
        self.fact_kinds = {f.kind for inv in self.invocations for f in inv.facts}
        self.pipelines = any(c.stage for c in self.script.commands)
        self.assignments = any(c.assignments for c in self.script.commands) or \
            any(inv.env for inv in self.invocations)

    def command(self, inv: Invocation) -> Command:
        return self.script.commands[inv.index]

    def redirects(self, index: int | None) -> list[tuple[int, Redirect]]:
        """(position in script.redirects, redirect) pairs owned by one command."""
        return self.redirects_by_owner.get(index, [])

    def text(self, span: Span) -> str:
        return self.script.source[span[0]:span[1]]


# Gates: what a check wants to see. The engine skips a check whose gate is
# false, so a typical command runs only the few checks that concern it.
def constructs(*kinds: str) -> Gate:
    wanted = frozenset(kinds)
    return lambda ctx: not wanted.isdisjoint(ctx.construct_kinds)


def facts(*kinds: str) -> Gate:
    wanted = frozenset(kinds)
    return lambda ctx: not wanted.isdisjoint(ctx.fact_kinds)


def names(wanted: Iterable[str]) -> Gate:
    wanted = frozenset(wanted)
    return lambda ctx: not wanted.isdisjoint(ctx.names)


def redirects(ctx: Context) -> bool:
    return bool(ctx.script.redirects)


def pipelines(ctx: Context) -> bool:
    return ctx.pipelines


def assignments(ctx: Context) -> bool:
    return ctx.assignments


def interpreters(ctx: Context) -> bool:
    if ctx.has_interp is None:
        ctx.has_interp = any(interp_for(n) for n in ctx.names if n)
    return ctx.has_interp


def always(ctx: Context) -> bool:
    return True
