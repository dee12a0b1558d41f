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
from ..ir import Command, Redirect, Script, Span

Hit = tuple[Span, str]
Check = Callable[["Context"], Iterable[Hit]]


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

    def __post_init__(self) -> None:
        self.names = {inv.name for inv in self.invocations}

    def command(self, inv: Invocation) -> Command:
        return self.script.commands[inv.index]

    def redirects(self, index: int) -> list[Redirect]:
        return self.script.redirects_of(index)

    def text(self, span: Span) -> str:
        return self.script.source[span[0]:span[1]]
