"""Effects the words imply without spelling them out (issue 22's follow-up rows):

* RF111 / RF110: a sed script or an awk program read from a file (`sed -f F`,
  `awk -f F`, gawk `-E F`, `-i F`, mawk `-W exec F`): the classifier
  cannot read it, so it may run commands (`e`, `system()`) or write files (`w`,
  `print >`), like a program text it cannot parse. Standard input as the
  script (`-f -`) is RF116.
* RF129: `nohup CMD` appends the command's output to `nohup.out` (in the
  current directory, else `$HOME/nohup.out`) when its standard output is a
  terminal (coreutils nohup(1)). The command string cannot say whether it is,
  so it counts unless stdout is redirected or piped.
* RF131: `GIT_TRACE=/path` and git's other trace variables (git(1) "Debugging":
  GIT_TRACE, GIT_TRACE_PACKET, GIT_TRACE_PACKFILE, GIT_TRACE_PERFORMANCE,
  GIT_TRACE_SETUP, GIT_TRACE_SHALLOW, GIT_TRACE_CURL, GIT_TRACE_REFS,
  GIT_TRACE_FSMONITOR, GIT_TRACE_PACK_ACCESS; GIT_TRACE2, GIT_TRACE2_EVENT,
  GIT_TRACE2_PERF) make every git the command runs append to that file (trace.c
  get_trace_fd, trace2/tr2_dst.c: an absolute path, a directory for one file
  per process, or `af_unix:` a socket). `1`, `2`, `true`, a single digit (a
  descriptor), `0`, `false` and an empty value write no file. RF122 does not
  count these names: they run nothing.
"""

from __future__ import annotations

from typing import Iterable

from .. import data
from ..analysis import Invocation
from ..assigned import UNKNOWN, other_assignments
from ..ir import Span, Word
from ..writes import script_files
from . import Context, Hit, always, assignments, declarations, facts, names

# git's trace variables that are options of a trace, not where it goes
_TRACE_FLAGS = frozenset({"GIT_TRACE_CURL_NO_DATA", "GIT_TRACE_REDACT", "GIT_TRACE2_BRIEF",
                          "GIT_TRACE2_PERF_BRIEF", "GIT_TRACE2_EVENT_BRIEF",
                          "GIT_TRACE2_EVENT_NESTING", "GIT_TRACE2_CONFIG_PARAMS",
                          "GIT_TRACE2_ENV_VARS", "GIT_TRACE2_MAX_FILES", "GIT_TRACE2_REDACT",
                          "GIT_TRACE2_DST_DEBUG"})
_NOHUP = frozenset({"nohup", "gnohup"})
_TTY_TARGETS = frozenset({"/dev/tty", "/dev/stdout", "/dev/stderr", "/dev/fd/1",
                          "/proc/self/fd/1"})


def trace_destination(name: str) -> bool:
    """Is this variable where one of git's traces is written?"""
    return name.startswith("GIT_TRACE") and name not in _TRACE_FLAGS and (
        name in ("GIT_TRACE", "GIT_TRACE2", "GIT_TRACE2_EVENT", "GIT_TRACE2_PERF")
        or name.startswith("GIT_TRACE_"))


def _trace_file(value: Word | None) -> str | None:
    """The file (or socket) a trace value names, or None when it writes none."""
    if value is None or not value.static:
        return value.raw if value is not None else "(set elsewhere)"
    v = value.value
    if v.startswith(("/", "~")) or v[:8].lower() == "af_unix:":
        return v
    return None


def trace_writes(cmd, inv: Invocation | None = None) -> list[tuple[Span, str, str]]:
    """(span, message, file) for the trace files one command's own assignments and
    `env NAME=value` words name."""
    out = []
    pairs = [(a.name, a.value, a.span) for a in cmd.assignments]
    if inv is not None:
        pairs += [(n, w._replace(value=w.value.partition("=")[2], raw=w.raw.partition("=")[2]),
                   w.span) for n, w in inv.env]
    for name, value, span in pairs:
        if trace_destination(name):
            target = _trace_file(value)
            if target is not None:
                out.append((span, f"`{name}` makes git append its trace to `{target}`", target))
    return out


def git_trace(ctx: Context) -> Iterable[Hit]:
    """`GIT_TRACE=/x git ...`, bare, `export`, `env GIT_TRACE=/x`."""
    for index, cmd in enumerate(ctx.script.commands):
        invs = ctx.by_index.get(index) or [None]
        seen = set()
        for inv in invs:
            for span, message, _ in trace_writes(cmd, inv):
                if span not in seen:
                    seen.add(span)
                    yield span, message


def git_trace_other(ctx: Context) -> Iterable[Hit]:
    """`read GIT_TRACE`, `printf -v`, `export 'GIT_TRACE'`, `${GIT_TRACE:=/x}`."""
    for span, name, how in other_assignments(ctx.script, ctx.invocations):
        if name != UNKNOWN and trace_destination(name) and how not in ("`let`", "arithmetic"):
            yield span, f"{how} sets `{name}`, which makes git append its trace to a file"


def git_trace_default(ctx: Context) -> Iterable[Hit]:
    # `${GIT_TRACE:=/x}` may stand in any command; the name is then in the text
    return git_trace_other(ctx) if "GIT_TRACE" in ctx.script.source else ()


def _stdout_not_a_terminal(ctx: Context, inv: Invocation) -> bool:
    cmd = ctx.command(inv)
    if cmd.in_subst or (cmd.stage is not None and cmd.stage < cmd.stages - 1):
        return True                    # a pipe
    for _, r in ctx.redirects(inv.index):
        if r.op in (">", ">>", ">|", "&>", "&>>") and r.fd in (None, 1) and \
                r.target is not None and not (r.target.static and
                                              r.target.value in _TTY_TARGETS):
            return True
    return False


def nohup_out(ctx: Context, inv: Invocation) -> Span | None:
    """Where `nohup` stands, if it may write nohup.out for this invocation."""
    for f in inv.facts:
        if f.kind == "wrapper" and f.detail in _NOHUP:
            return None if _stdout_not_a_terminal(ctx, inv) else f.span
    return None


def nohup_writes(ctx: Context) -> Iterable[Hit]:
    for inv in ctx.invocations:
        span = nohup_out(ctx, inv)
        if span is not None:
            yield span, "`nohup` appends the output to `nohup.out` (in the current " \
                        "directory, else `$HOME`) when standard output is a terminal"


def _from_files(ctx: Context, progs: frozenset[str], kind: str) -> Iterable[Hit]:
    spec = data.FILTERS[kind]
    for inv in ctx.invocations:
        if inv.name in progs:
            for w, why in script_files(inv, spec):
                shown = f" `{w.raw}`" if w is not None else ""
                yield (w or inv.argv[0]).span, f"{inv.argv[0].value} {why}{shown}: a " \
                    f"{'script' if kind == 'sed' else 'program'} the classifier cannot " \
                    "read may run commands or write files"


def sed_from_file(ctx: Context) -> Iterable[Hit]:
    return _from_files(ctx, data.SEDS, "sed")


def awk_from_file(ctx: Context) -> Iterable[Hit]:
    return _from_files(ctx, data.AWKS, "awk")


CHECKS = (
    ("RF110", awk_from_file, names(data.AWKS)),
    ("RF111", sed_from_file, names(data.SEDS)),
    ("RF129", nohup_writes, facts("wrapper")),
    ("RF131", git_trace, assignments),
    ("RF131", git_trace_other, declarations + names(data.ASSIGNING_BUILTINS)),
    ("RF131", git_trace_default, always),
)
