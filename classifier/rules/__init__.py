"""Classifier rules, one family per file.

Each check is a small function keyed by its registry code. It reads the IR
(``ringfence.classifier.ir``) and the analysis (``ringfence.classifier.analysis``) through a
:class:`Context` and yields ``(span, message)`` pairs; it never sees a
tree-sitter node. The engine attaches the code and builds the records, so a
finding is always data from the one registry (``ringfence.rfcore.rules``).
"""

from __future__ import annotations

from typing import Callable, Iterable

from ..analysis import Invocation
from ..data import AWKS, SEDS, interp_for

_STDIN_FILTERS = AWKS | SEDS          # `sed -f -`, `awk -f /dev/stdin` read their script
from ..ir import Command, Redirect, Script, Span

Hit = tuple[Span, str]
Check = Callable[["Context"], Iterable[Hit]]


class Context:
    """What the checks read: the IR, the analysis, and indexes over them."""

    __slots__ = ("script", "invocations", "helper_commands", "filter_commands",
                 "decorated_redirects", "names", "interp_modes", "construct_kinds", "fact_kinds",
                 "pipelines", "assignments", "by_index", "redirects_by_owner")

    def __init__(self, script: Script, invocations: list[Invocation]) -> None:
        self.script = script
        self.invocations = invocations
        # Filled by the decoration family, read by the capability family:
        self.helper_commands: set[int] = set()
        self.filter_commands: set[int] = set()
        self.decorated_redirects: set[int] = set()     # positions in script.redirects
        self.interp_modes: dict[int, tuple] = {}       # id(inv) -> interp_mode()
        # indexes, so per-command lookups stay linear on a 10,000-stage pipeline
        self.by_index: dict[int, list[Invocation]] = {}
        for inv in invocations:
            self.by_index.setdefault(inv.index, []).append(inv)
        self.redirects_by_owner: dict[int | None, list[tuple[int, Redirect]]] = {}
        for i, r in enumerate(script.redirects):
            self.redirects_by_owner.setdefault(r.owner, []).append((i, r))
        self.names = {inv.name for inv in invocations}
        self.construct_kinds = {c.kind for c in script.constructs}
        self.fact_kinds = {f.kind for inv in invocations for f in inv.facts}
        self.pipelines = any(c.stage for c in script.commands)
        self.assignments = any(c.assignments for c in script.commands) or \
            any(inv.env for inv in invocations)

    def command(self, inv: Invocation) -> Command:
        return self.script.commands[inv.index]

    def redirects(self, index: int | None) -> list[tuple[int, Redirect]]:
        """(position in script.redirects, redirect) pairs owned by one command."""
        return self.redirects_by_owner.get(index, [])

    def text(self, span: Span) -> str:
        return self.script.source[span[0]:span[1]]


# Gates: what a check wants to see, as trigger keys. The engine indexes the
# checks by trigger and runs only those whose triggers the command has, so a
# typical command runs a handful of checks instead of all of them.
Gate = tuple[str, ...]
ALWAYS: Gate = ("always",)


def constructs(*kinds: str) -> Gate:
    return tuple(f"construct:{k}" for k in kinds)


def facts(*kinds: str) -> Gate:
    return tuple(f"fact:{k}" for k in kinds)


def names(wanted: Iterable[str]) -> Gate:
    return tuple(sorted(f"name:{n}" for n in wanted))


redirects: Gate = ("redirects",)
pipelines: Gate = ("pipelines",)
assignments: Gate = ("assignments",)
declarations: Gate = ("declarations",)
interpreters: Gate = ("interpreters",)
always: Gate = ALWAYS


def triggers(ctx: Context) -> set[str]:
    """The trigger keys present in one command."""
    out = {"always"}
    out.update(f"construct:{k}" for k in ctx.construct_kinds)
    out.update(f"fact:{k}" for k in ctx.fact_kinds)
    out.update(f"name:{n}" for n in ctx.names if n)
    if ctx.script.redirects:
        out.add("redirects")
    if ctx.pipelines:
        out.add("pipelines")
    if ctx.assignments:
        out.add("assignments")
    if any(c.kind in ("declaration", "unset") for c in ctx.script.commands):
        out.add("declarations")
    if any(interp_for(n) or n in _STDIN_FILTERS for n in ctx.names if n):
        out.add("interpreters")
    return out
