"""RF2xx: how invocations map to capability keys (informational findings),
and the builder that turns invocations into Capability records."""

from __future__ import annotations

from typing import Iterable

from ..data import NETWORK_PATH
from ringfence.classifier.effects_scan import option_effects
from ..effects_data import effect_program
from ..verdict import Capability
from . import Context, Hit, always, facts, names, redirects
from .implied import nohup_out, trace_writes


def _counted(ctx: Context):
    """Invocations that become capabilities: static program, not stripped."""
    for inv in ctx.invocations:
        if inv.counts and inv.key and inv.index not in ctx.helper_commands \
                and inv.index not in ctx.filter_commands:
            yield inv


def _fact_hits(ctx: Context, kind: str, template: str) -> Iterable[Hit]:
    for inv in _counted(ctx):
        for f in inv.facts:
            if f.kind == kind:
                yield f.span, template.format(detail=f.detail, key=inv.key)


def wrapper(ctx: Context) -> Iterable[Hit]:
    return _fact_hits(ctx, "wrapper", "wrapper `{detail}` removed; the capability is `{key}`")


def launcher(ctx: Context) -> Iterable[Hit]:
    return _fact_hits(ctx, "launcher", "`{detail}` launches `{key}`")


def multiplexer(ctx: Context) -> Iterable[Hit]:
    return _fact_hits(ctx, "multiplexer", "the key includes the subcommand: `{detail}`")


def _reads(ctx: Context, index: int) -> list[tuple[int, str]]:
    out = []
    for i, r in ctx.redirects(index):
        if r.op == "<" and i not in ctx.decorated_redirects \
                and r.target is not None and not NETWORK_PATH.search(r.target.raw):
            out.append((i, r.target.value if r.target.static else r.target.raw))
    return out


def input_read(ctx: Context) -> Iterable[Hit]:
    seen = set()
    for inv in _counted(ctx):
        if inv.index in seen:
            continue
        seen.add(inv.index)
        for i, target in _reads(ctx, inv.index):
            yield ctx.script.redirects[i].span, f"`< {target}` reads the file (effect read:{target})"


def path_qualified(ctx: Context) -> Iterable[Hit]:
    for inv in _counted(ctx):
        if "/" in inv.argv[0].value:
            yield inv.argv[0].span, f"path-qualified program `{inv.argv[0].value}` is its own " \
                                    "key; a grant for its basename does not cover it"


_PRINTERS = frozenset({"set", "declare", "typeset", "export", "readonly", "local"})


def prints_environment(ctx: Context) -> Iterable[Hit]:
    for inv in _counted(ctx):
        if inv.name in _PRINTERS and (inv.key.endswith((" -p", " -f")) or
                                      (inv.key == "set" and len(inv.argv) == 1)):
            what = "function definitions" if inv.key.endswith(" -f") else \
                "shell variables, secrets included"
            yield inv.argv[0].span, f"`{inv.key}` prints {what}: a capability of its own, " \
                                    "granted like `env`"


def capabilities(ctx: Context) -> list[Capability]:
    out: list[Capability] = []
    for inv in _counted(ctx):
        cmd = ctx.command(inv)
        effects = tuple(f"read:{t}" for _, t in _reads(ctx, inv.index))
        if effect_program(inv.name):
            # what its own options make it do beyond its key (RF131-RF133)
            effects += tuple(dict.fromkeys(e.effect for e in option_effects(inv)))
        # files its wrappers or its variables write (RF129: `time -o F`, nohup.out;
        # RF131: GIT_TRACE=/path)
        if inv.facts:
            effects += tuple(f"write:{f.word.value if f.word.static else f.word.raw}"
                             for f in inv.facts
                             if f.kind == "wrapper-writes" and f.word is not None)
            if nohup_out(ctx, inv) is not None:
                effects += ("write:nohup.out",)
        if cmd.assignments or inv.env:
            effects += tuple(f"write:{t}" for _, _, t in trace_writes(cmd, inv))
        out.append(Capability(inv.key, inv.argv[0].value, tuple(w.value for w in inv.argv),
                              cmd.span, effects))
    return out


CHECKS = (
    ("RF201", wrapper, facts("wrapper")),
    ("RF202", launcher, facts("launcher")),
    ("RF203", multiplexer, facts("multiplexer")),
    ("RF204", input_read, redirects),
    ("RF205", path_qualified, always),
    ("RF206", prints_environment, names(_PRINTERS)),
)
