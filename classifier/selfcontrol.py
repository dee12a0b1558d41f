"""ringfence's own commands that no agent may run (RF134).

Approving is a person's act. A command that approves or denies a request,
grants or revokes, installs the hook, changes the profile or the sandbox, or
runs on the host (`ringfence approve`, `ringfence run --host`, `ringfence run
--sandbox off`, `-p ./mine.toml`, `-w ~`, a `RINGFENCE_*` setting...) is
never grantable, whatever the key: the gate denies it outright and the hook
inherits that deny. Read-only subcommands are keyed like any multiplexer
(`ringfence ledger list`).

Found however ringfence is reached: `ringfence`, `./ringfence`,
`.venv/bin/ringfence`, `python -m ringfence`, `uvx ringfence`, under wrappers
and launchers (their argv is analysed as an invocation too).

The read-only list is an allowlist, from ringfence's own CLI (ringfence/cli/,
ringfence/fast/run.py): anything else, an unknown subcommand, or a word decided
at run time in the subcommand or run's options, is control (fail closed).
"""

from __future__ import annotations

from typing import Iterable

from . import data
from .analysis import Invocation
from .ir import Span, Word

SELF_NAMES = frozenset({"ringfence"})
# `ringfence SUB` that only read (check/explain print a verdict; rule/rules print
# documentation; doctor probes this machine).
READ_ONLY = frozenset({"check", "explain", "rule", "rules", "doctor"})
# `ringfence GROUP SUB`: groups whose listed subcommands only read. A group
# alone prints its help.
READ_ONLY_GROUPS: dict[str, frozenset[str]] = {
    "ledger": frozenset({"list", "show", "export"}),
    "approvals": frozenset({"list"}),
    "grants": frozenset({"list"}),
    "profile": frozenset({"list", "show", "lint", "compile"}),
}
ROOT_INFO = frozenset({"--version", "--help"})
# `ringfence run` options (ringfence/fast/run.py parse_run_args).
RUN_VALUE = frozenset({"-p", "--profile", "-w", "--workspace", "--session", "--sandbox",
                       "--timeout", "-c"})
SANDBOXED_PROFILES = frozenset({"observe", "build", "strict", "host-assisted"})
ENV_PREFIX = "RINGFENCE_"

Hit = tuple[Span, str]
_PERSON = "approving, granting and leaving the sandbox are a person's acts, so no grant, " \
          "rule or hook answer covers it"


def _run_control(args: tuple[Word, ...]) -> tuple[Word, str] | None:
    """What in `ringfence run ARGS` leaves the sandbox or changes it, if anything."""
    i = 0
    while i < len(args):
        w = args[i]
        if not w.static:
            return w, f"`{w.raw}`, decided at run time, may be --host or --sandbox off"
        a = w.value
        if a == "--" or not a.startswith("-"):
            return None
        name, eq, value = a.partition("=")
        if name == "--host":
            return w, "`ringfence run --host` runs the command on the host"
        if name in RUN_VALUE:
            if not eq:
                i += 1
                if i >= len(args):
                    return None
                vw = args[i]
                if not vw.static:
                    return vw, f"`{name} {vw.raw}` is decided at run time"
                value = vw.value
            if name in ("-p", "--profile") and value not in SANDBOXED_PROFILES:
                return w, f"`ringfence run {name} {value}` picks a profile that may run " \
                          "without a sandbox"
            if name == "--sandbox" and value != "on":
                return w, f"`ringfence run --sandbox {value}` runs on the host"
            if name in ("-w", "--workspace"):
                return w, f"`ringfence run {name} {value}` makes another directory writable"
            if name == "-c":
                return None
        i += 1
    return None


def judge(prog: Word, args: tuple[Word, ...]) -> tuple[Span, str] | None:
    """(span, message) when `ringfence ARGS` is a control command, else None."""
    if not args:
        return None                                   # prints its help
    first = args[0]
    if not first.static:
        return first.span, f"the ringfence subcommand `{first.raw}` is decided at run time"
    sub = first.value
    whole = (prog.span[0], args[-1].span[1])
    if sub in ROOT_INFO or sub in READ_ONLY:
        return None
    if sub in READ_ONLY_GROUPS:
        if len(args) == 1:
            return None
        nxt = args[1]
        if nxt.static and nxt.value in READ_ONLY_GROUPS[sub] | {"--help"}:
            return None
        return whole, f"`ringfence {sub} {nxt.raw}` changes ringfence's approvals, grants, " \
                      f"ledger or profiles: {_PERSON}"
    if sub == "run":
        found = _run_control(args[1:])
        if found is None:
            return None
        w, why = found
        return (prog.span[0], w.span[1]), f"{why}: {_PERSON}"
    what = {"approve": "approves a pending request", "deny": "answers a pending request",
            "hook": "answers for the agent's hook", "init": "sets up ringfence"}.get(
        sub, "is not one of ringfence's read-only commands")
    return whole, f"`ringfence {sub}` {what}: {_PERSON}"


def _python_module(inv: Invocation) -> tuple[Word, tuple[Word, ...]] | None:
    """`python -m ringfence ARGS`: (the module word, ARGS)."""
    argv = inv.argv
    i = 1
    while i < len(argv):
        w = argv[i]
        v = w.value
        if not w.static or not v.startswith("-") or v == "-":
            return None
        if v == "-m" or (v.startswith("-m") and len(v) > 2):
            mod = v[2:] if len(v) > 2 else (argv[i + 1].value if i + 1 < len(argv) else "")
            rest = argv[i + 1:] if len(v) > 2 else argv[i + 2:]
            if mod == "ringfence" or mod.startswith("ringfence."):
                return w, rest if mod in ("ringfence", "ringfence.__main__") else \
                    (Word(mod, mod, w.span),)    # other entry points: never read-only
            return None
        if v[1:2] in ("W", "X") and len(v) == 2:
            i += 1
        i += 1
    return None


def _assignment_hits(ctx) -> Iterable[Hit]:
    for cmd in ctx.script.commands:
        for a in cmd.assignments:
            if a.name.startswith(ENV_PREFIX):
                yield a.span, f"assigning `{a.name}` changes ringfence's profile, session or " \
                              f"state: {_PERSON}"
        if cmd.kind == "declaration":
            for w in cmd.words[1:]:
                if w.value.startswith(ENV_PREFIX):
                    yield w.span, f"`{w.raw}` changes ringfence's profile, session or " \
                                  f"state: {_PERSON}"
    for inv in ctx.invocations:
        for name, w in inv.env:
            if name.startswith(ENV_PREFIX):
                yield w.span, f"`env {name}=...` changes ringfence's profile, session or " \
                              f"state: {_PERSON}"


def control_hits(ctx) -> Iterable[Hit]:
    yield from _assignment_hits(ctx)
    for inv in ctx.invocations:
        if not inv.argv or not inv.name:
            continue
        if inv.name in SELF_NAMES:
            hit = judge(inv.argv[0], inv.argv[1:])
        elif data.interp_for(inv.name) and data.interp_for(inv.name)[0] == "python":
            found = _python_module(inv)
            hit = judge(found[0], found[1]) if found else None
        else:
            continue
        if hit is not None:
            yield hit
