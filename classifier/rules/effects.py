"""RF131-RF133: options and operands that make a reading program write files,
delete files or run another program (the table in classifier/effects_data.py).
RF134: ringfence's own commands that approve, grant or leave the sandbox."""

from __future__ import annotations

from typing import Iterable

from ringfence.classifier.effects_scan import option_effects
from ..effects_data import PROGRAMS
from ..selfcontrol import control_hits, SELF_NAMES
from . import Context, Hit, assignments, declarations, interpreters, names


def _kind(ctx: Context, kind: str) -> Iterable[Hit]:
    for inv in ctx.invocations:
        if inv.name in PROGRAMS:
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


_GATE = names(PROGRAMS)

CHECKS = (
    ("RF131", option_writes, _GATE),
    ("RF132", option_deletes, _GATE),
    ("RF133", option_runs, _GATE),
    ("RF134", ringfence_control, names(SELF_NAMES) + assignments + declarations + interpreters),
)
