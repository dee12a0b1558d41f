"""RF122: assignments that change what programs or code run (the table is
rfcore/execvars.py), as a prefix, bare, with `export`/`declare`, through `env`
or a launcher, by a builtin that assigns (`read PATH`), or by a declaration
builtin reached through `builtin`/`command` (`builtin export PATH=/tmp`), which
the parser sees as a plain command."""

from __future__ import annotations

from typing import Iterable

from .. import data
from ..analysis import Invocation, scan_args
from ringfence.classifier.git_cmdline import harmless_env
from ..assigned import UNKNOWN as ANY_NAME, builtin_names, other_assignments
from . import Context, Hit


def _wrapped_declaration(inv: Invocation) -> Iterable[Hit]:
    """`builtin declare -n r=PATH`, `command export LD_PRELOAD=x`, a name decided at
    run time: judged as the declaration they are."""
    for w in inv.argv[1:]:
        v = w.value
        if not w.static:
            yield w.span, f"`{inv.name} {w.raw}` assigns a name decided at run time"
        elif v.startswith("-") and "n" in v[1:] and inv.name != "export":
            yield w.span, "a nameref can assign any variable, including PATH"
        elif not v.startswith(("-", "+")) and data.exec_var(v.split("=", 1)[0].split("[", 1)[0]):
            # with or without a value: `builtin export PATH` exports a value set earlier
            yield w.span, f"`{inv.name} {v.split('=', 1)[0]}` changes what programs or " \
                          "code run"


_assigned_names = builtin_names     # (values.py and older callers)


def exec_assignment(ctx: Context) -> Iterable[Hit]:
    # GIT_CONFIG_KEY_<n>=user.email sets a key that runs nothing (judged by gitkeys)
    given = [(a.name, a.value) for c in ctx.script.commands for a in c.assignments] + \
        [(n, w._replace(value=w.value.partition("=")[2])) for inv in ctx.invocations
         for n, w in inv.env]
    harmless = harmless_env(given) if any(n.startswith("GIT_CONFIG_") for n, _ in given) \
        else frozenset()
    for cmd in ctx.script.commands:
        for a in cmd.assignments:
            if data.exec_var(a.name) and a.name not in harmless:
                yield a.span, f"assigning `{a.name}` changes what programs or code run"
        if cmd.kind == "declaration" and any(
                w.value.startswith("-") and "n" in w.value for w in cmd.words[1:]):
            # a nameref (`declare -n r=PATH; r=/tmp`) can assign any variable later
            yield cmd.span, "a nameref can assign any variable, including PATH"
    for inv in ctx.invocations:
        for name, w in inv.env:
            if data.exec_var(name) and name not in harmless:
                yield w.span, f"`env {name}=...` changes what programs or code run"
    for span, name, how in other_assignments(ctx.script, ctx.invocations):
        if name == ANY_NAME or data.exec_var(name):
            shown = ctx.text(span) if name == ANY_NAME else name
            yield span, f"{how} assigns `{shown}`, which can change what runs"
    for inv in ctx.invocations:
        if inv.name in data.DECLARATION_NAMES and inv.facts:
            yield from _wrapped_declaration(inv)


