"""RF131-RF133: options and operands that make a reading program write files,
delete files or run another program (the table in classifier/effects_data.py).
RF134: ringfence's own commands that approve, grant or leave the sandbox.
RF135: shell state that moves ringfence's own state (``XDG_*``; unsetting
``RINGFENCE_*``, ``HOME``, ``PATH``), as Claude Code's persistent shell keeps it."""

from __future__ import annotations

from typing import Iterable

from ringfence.classifier.effects_scan import option_effects
from ..assigned import UNKNOWN as ANY_NAME, other_assignments
from ..effects_data import PROGRAMS, effect_program
from ..selfcontrol import ENV_PREFIX, SELF_NAMES, control_hits
from . import Context, Hit, always, assignments, declarations, interpreters, names

_MOVES = "XDG_"
_UNSET_MOVES = frozenset({"HOME", "PATH"})
_WHY = "moves where ringfence keeps its state, config or cache for every later command"


def _kind(ctx: Context, kind: str) -> Iterable[Hit]:
    for inv in ctx.invocations:
        if effect_program(inv.name):
            for e in option_effects(inv):
                if e.kind == kind:
                    yield e.span, e.message


def option_writes(ctx: Context) -> Iterable[Hit]:
    return _kind(ctx, "write")


def option_deletes(ctx: Context) -> Iterable[Hit]:
    return _kind(ctx, "delete")


def option_runs(ctx: Context) -> Iterable[Hit]:
    return _kind(ctx, "run")


def ringfence_control(ctx: Context) -> Iterable[Hit]:
    return control_hits(ctx)


def _moves(name: str, unset: bool) -> bool:
    return name.startswith(_MOVES) or (unset and (name.startswith(ENV_PREFIX)
                                                  or name in _UNSET_MOVES))


def state_moves(ctx: Context) -> Iterable[Hit]:
    for cmd in ctx.script.commands:
        for a in cmd.assignments:
            if _moves(a.name, False):
                yield a.span, f"assigning `{a.name}` {_WHY}"
        if cmd.kind == "unset":         # (declarations: other_assignments, below)
            for w in cmd.words[1:]:
                name = w.value.split("=", 1)[0]
                if not w.value.startswith("-") and _moves(name, True):
                    yield w.span, f"unsetting `{name}` {_WHY}"
    for inv in ctx.invocations:
        for name, w in inv.env:
            if _moves(name, False):
                yield w.span, f"`env {name}=...` {_WHY}"
    for span, name, how in other_assignments(ctx.script, ctx.invocations):
        if name == ANY_NAME or _moves(name, False):
            shown = ctx.text(span) if name == ANY_NAME else name
            yield span, f"setting `{shown}` ({how}) {_WHY}"


_GATE = names(PROGRAMS) + interpreters      # `python -m pytest`, `python -m cProfile`

CHECKS = (
    ("RF131", option_writes, _GATE),
    ("RF132", option_deletes, _GATE),
    ("RF133", option_runs, _GATE),
    ("RF134", ringfence_control, names(SELF_NAMES) + assignments + declarations + interpreters),
    ("RF135", state_moves, always),
)
