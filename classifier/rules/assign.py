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
from ..ir import Word
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
        elif "=" in v and data.exec_var(v.split("=", 1)[0].split("[", 1)[0]):
            yield w.span, f"`{inv.name} {v.split('=', 1)[0]}=...` changes what programs or " \
                          "code run"


def _assigned_names(inv: Invocation) -> Iterable[Word]:
    """Variable names a builtin assigns: `read NAME`, `printf -v NAME`, `mapfile NAME`."""
    spec = data.ASSIGNING_BUILTINS.get(inv.name)
    if spec is None:
        return
    opts, operands = scan_args(inv.argv[1:], spec)
    for opt, value in opts:
        if opt in ("-v", "-a") and value is not None:
            yield value
    if inv.name != "printf":
        yield from operands


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
        for w in _assigned_names(inv):
            if not w.static or data.exec_var(w.value):
                yield w.span, f"`{inv.name}` assigns `{w.raw}`, which can change what runs"
        if inv.name in data.DECLARATION_NAMES and inv.facts:
            yield from _wrapped_declaration(inv)


