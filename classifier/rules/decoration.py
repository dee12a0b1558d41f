"""RF3xx: harmless decoration, stripped from the verdict (each with a code).

This family also *marks* what it strips (helper commands, filter stages,
decorative redirects) on the Context, so the capability family does not turn
them into capabilities and the one-time family does not count a decorative
redirect as a file write.
"""

from __future__ import annotations

from typing import Iterable

from ringfence.rfcore.lazyre import lazy
from .. import data
from ..analysis import Invocation, scan_args
from ..embedded import OK, awk_program, sed_script
from ..interp import interp_mode
from ..ir import Command, Redirect, Word
from ..writes import file_writes, script_files
from . import Context, Hit, always, constructs, pipelines, redirects


# --- redirects ---------------------------------------------------------------

def is_fd(w: Word | None) -> bool:
    return w is not None and w.static and w.value.isdigit()


def _redirect_kind(r: Redirect) -> str:
    """'dup', 'close', 'null', 'std' or '' (not decoration)."""
    if r.op in (">&-", "<&-") or (r.op in (">&", "<&") and r.target is not None
                                   and r.target.static and r.target.value == "-"):
        return "close"
    if r.op in (">&", "<&") and is_fd(r.target):
        return "dup"
    t = r.target
    if t is None or not t.static:
        return ""
    if t.value == "/dev/null" and r.op in (">", ">>", "<", "&>", "&>>", ">|"):
        return "null"
    if t.value in data.STD_STREAMS and r.op in (">", ">>", "&>", "&>>", ">|"):
        return "std"
    return ""


def _redirect_hits(ctx: Context, kind: str, what: str) -> Iterable[Hit]:
    for i, r in enumerate(ctx.script.redirects):
        if _redirect_kind(r) == kind:
            ctx.decorated_redirects.add(i)
            yield r.span, what


def fd_duplication(ctx: Context) -> Iterable[Hit]:
    return _redirect_hits(ctx, "dup", "file-descriptor duplication")


def fd_close(ctx: Context) -> Iterable[Hit]:
    return _redirect_hits(ctx, "close", "file-descriptor close")


def dev_null(ctx: Context) -> Iterable[Hit]:
    return _redirect_hits(ctx, "null", "redirection to or from /dev/null")


def std_stream(ctx: Context) -> Iterable[Hit]:
    return _redirect_hits(ctx, "std", "output to /dev/stdout or /dev/stderr")


# --- helper commands -----------------------------------------------------------

def _set_ok(args: tuple[Word, ...]) -> bool:
    i, n = 0, len(args)
    while i < n:
        v = args[i].value
        if v in ("-o", "+o"):
            if i + 1 >= n or args[i + 1].value not in data.SET_OK_OPTIONS:
                return False
            i += 2
            continue
        if len(v) < 2 or v[0] not in "-+":
            return False
        letters = v[1:]
        if letters.endswith("o"):            # -euo pipefail
            if i + 1 >= n or args[i + 1].value not in data.SET_OK_OPTIONS:
                return False
            letters = letters[:-1]
            i += 1
        if not set(letters) <= data.SET_OK_LETTERS:
            return False
        i += 1
    return True


def _helper_args_ok(name: str, args: tuple[Word, ...]) -> bool:
    if name == "exit":
        return len(args) <= 1 and all(data.EXIT_ARG.fullmatch(a.value) for a in args)
    if name == "sleep":
        return bool(args) and all(data.SLEEP_ARG.fullmatch(a.value) for a in args)
    if name == "set":
        return bool(args) and _set_ok(args)    # bare `set` prints every variable
    if name == "[":
        return bool(args) and args[-1].value == "]"
    return True


def _main_invocation(ctx: Context, index: int) -> Invocation | None:
    """The command's only invocation, if it has no wrapper/launcher facts."""
    invs = ctx.by_index.get(index, [])
    if len(invs) != 1 or invs[0].launched_by or invs[0].facts:
        return None
    return invs[0]


def _is_helper(ctx: Context, index: int, cmd: Command) -> bool:
    if cmd.kind == "declaration" and ctx.by_index.get(index):
        return False                           # it prints variables: a capability
    if cmd.kind in ("assign", "declaration", "unset"):
        # runs no program; values with a substitution are reported by RF101 instead
        return not any(a.value is not None and a.value.subst for a in cmd.assignments) and \
            not any(w.subst for w in cmd.words)
    if cmd.kind == "arith":
        return True
    if not all(w.static for w in cmd.words):
        # A helper must be fully literal: `echo $HOME` prints the environment
        # (possibly a secret) and `cd $dir` goes somewhere decided at run time.
        return False
    if cmd.kind == "test":
        return True
    inv = _main_invocation(ctx, index)
    if inv is None or len(inv.argv) != len(cmd.words) or cmd.assignments:
        return False
    name = inv.argv[0].value                   # exact: `/bin/echo` is a program, not a helper
    return name in data.HELPERS and _helper_args_ok(name, inv.argv[1:])


def helper_command(ctx: Context) -> Iterable[Hit]:
    for index, cmd in enumerate(ctx.script.commands):
        if _is_helper(ctx, index, cmd):
            ctx.helper_commands.add(index)
            yield cmd.span, "harmless helper"


# --- filter stages ---------------------------------------------------------------

def _filter_args(spec: data.Filter, args: tuple[Word, ...]) -> tuple[bool, list[str], list[str]]:
    """(acceptable, operands, values of operand_opts) for a filter's arguments."""
    if not all(w.static for w in args):
        return False, [], []
    opts, operands = scan_args(args, spec.opts, spec.deny | spec.operand_opts)
    values: list[str] = []
    for opt, value in opts:
        if opt in spec.deny or (len(opt) == 2 and opt[1] in spec.deny_letters):
            return False, [], []
        if opt in spec.operand_opts and value is not None:
            values.append(value.value)
    return True, [w.value for w in operands], values


def _pure_filter(ctx: Context, index: int, cmd: Command) -> bool:
    if cmd.kind != "simple" or not cmd.stage or cmd.assignments or not cmd.words:
        return False
    inv = _main_invocation(ctx, index)
    if inv is None or len(inv.argv) != len(cmd.words):
        return False
    prog = inv.argv[0].value
    spec = data.FILTERS.get(data.FILTER_ALIASES.get(prog, prog))
    if spec is None:
        return False
    for i, r in ctx.redirects(index):
        if i not in ctx.decorated_redirects:
            return False                      # `| grep x < file` reads a file
    ok, operands, values = _filter_args(spec, inv.argv[1:])
    if not ok or file_writes(inv):
        return False                          # never strip a stage that writes a file (RF130)
    if spec.checker in ("sed", "awk") and script_files(inv, spec):
        return False                          # a program in a file (mawk -W exec F)
    if spec.checker == "tee":
        return all(o in data.TEE_SINKS for o in operands)
    allowed = spec.operands - (1 if values and spec.operand_opts else 0)
    if len(operands) > allowed:
        return False                          # file operands: it reads files, not stdin
    if spec.checker == "sed":
        scripts = values + operands[:1]
        return bool(scripts) and all(sed_script(s) == OK for s in scripts)
    if spec.checker == "awk":
        progs = values or operands[:1]
        return bool(progs) and all(awk_program(p, filter_only=True) == OK for p in progs)
    if spec.checker == "jq":
        # env/$ENV print the environment (secrets); import/include load code files
        return not any(_JQ_IMPURE.search(p) for p in operands[:1])
    return True


_JQ_IMPURE = lazy(r"\benv\b|\$ENV|\$__loc__|\binput_filename\b|\bimport\b|\binclude\b")


def _pipe_start(source: str, start: int) -> int:
    """Extend a stage's span left over whitespace to its `|` (or `|&`)."""
    i = start - 1
    while i >= 0 and source[i] in " \t\n\\":
        i -= 1
    if i >= 0 and source[i] == "&" and i > 0 and source[i - 1] == "|":
        return i - 1
    if i >= 0 and source[i] == "|":
        return i
    return start


def filter_stage(ctx: Context) -> Iterable[Hit]:
    # Only a NON-FIRST stage reading stdin is decoration: `cat file | jq` keeps
    # `cat` as a capability (it reads a file); `jq` is stripped.
    for index, cmd in enumerate(ctx.script.commands):
        if _pure_filter(ctx, index, cmd):
            ctx.filter_commands.add(index)
            yield (_pipe_start(ctx.script.source, cmd.span[0]), cmd.span[1]), \
                "pure filter pipeline stage"


def comment(ctx: Context) -> Iterable[Hit]:
    for c in ctx.script.constructs:
        if c.kind == "comment":
            yield c.span, "comment"


def _reads_code(ctx: Context, owner: int | None) -> bool:
    """Could standard input be a program here? A shell or interpreter reads it as one,
    and an unknown program (dynamic name, `exec`, a compound statement holding either)
    might."""
    invs = ctx.invocations if owner is None else ctx.by_index.get(owner, [])
    if owner is not None and not invs:
        return True
    for inv in invs:
        if not inv.name:
            return True
        if data.interp_for(inv.name) or inv.name in ("busybox", "toybox") or \
                inv.name in data.AWKS or inv.name in data.SEDS:
            mode = ctx.interp_modes.get(id(inv))
            if mode is None:
                mode = ctx.interp_modes[id(inv)] = interp_mode(inv)
            # `python3 app.py <<<input` reads it as data; `python3 <<<code` runs it
            # (sed and awk only with `-f -`)
            if mode[0] not in ("script", "info", "inline", ""):
                return True
    return False


def here_string_input(ctx: Context) -> Iterable[Hit]:
    # `grep x <<<"$var"`, `read v <<<text`: inline text read as data, like `< file`.
    # Into a shell or interpreter the text is the program: RF104 (and RF116) instead.
    # A live `$(...)` inside is reported by RF101 either way.
    for i, r in enumerate(ctx.script.redirects):
        if r.op == "<<<" and not _reads_code(ctx, r.owner):
            ctx.decorated_redirects.add(i)
            yield r.span, "here-string read as data"


# Order matters: redirects first (filters consult them), helpers before filters.
CHECKS = (
    ("RF301", fd_duplication, redirects),
    ("RF302", fd_close, redirects),
    ("RF303", dev_null, redirects),
    ("RF304", std_stream, redirects),
    ("RF308", here_string_input, redirects),
    ("RF306", helper_command, always),
    ("RF305", filter_stage, pipelines),
    ("RF307", comment, constructs("comment")),
)
