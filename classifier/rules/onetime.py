"""RF1xx: constructs no standing approval may cover; each forces one-time."""

from __future__ import annotations

from typing import Iterable

from .. import data
from ..analysis import Invocation, canonical_long, scan_args
from ..git_cmdline import config_write_runs, sub_option_runs
from ..histeval import HISTORY_EVAL as _HISTORY_EVAL, history_eval as _history_eval
from ..embedded import EXEC, NAMES, UNKNOWN, awk_program, sed_script
from ringfence.classifier.git_cmdline import harmless_env
from ..interp import interp_mode
from ..writes import program_words, file_writes, writers
from ..ir import Word
from . import (Context, Hit, always, assignments, constructs, declarations, facts, interpreters,
               names, redirects)
from .assign import _assigned_names, exec_assignment  # noqa: F401  (RF122; values.py)
from .decoration import is_fd


def _constructs(ctx: Context, kind: str, message: str) -> Iterable[Hit]:
    for c in ctx.script.constructs:
        if c.kind == kind:
            yield c.span, message


def command_substitution(ctx: Context) -> Iterable[Hit]:
    return _constructs(ctx, "command-substitution", "command substitution runs a command "
                       "whose output becomes part of this one")


def process_substitution(ctx: Context) -> Iterable[Hit]:
    return _constructs(ctx, "process-substitution", "process substitution runs a hidden command")


def heredoc(ctx: Context) -> Iterable[Hit]:
    for r in ctx.script.redirects:
        if r.op in ("<<", "<<-"):
            yield r.span, "heredoc: an inline document is fed to the command"


def here_string(ctx: Context) -> Iterable[Hit]:
    # Into a program that reads it as data the here-string is decoration (RF308).
    for i, r in enumerate(ctx.script.redirects):
        if r.op == "<<<" and i not in ctx.decorated_redirects:
            yield r.span, "here-string: inline text is fed as a program to the command"


def _network(w: Word | None) -> bool:
    return w is not None and bool(data.NETWORK_PATH.search(w.raw) or
                                  data.NETWORK_PATH.search(w.value))


def file_write(ctx: Context) -> Iterable[Hit]:
    for i, r in enumerate(ctx.script.redirects):
        if i in ctx.decorated_redirects or _network(r.target):
            continue
        to_file = r.op == ">&" and not is_fd(r.target)     # `>& file` writes the file
        if r.op in data.WRITE_OPS or to_file:
            target = r.target.raw if r.target is not None else "?"
            yield r.span, f"redirection writes the file `{target}`"


def network_redirect(ctx: Context) -> Iterable[Hit]:
    for i, r in enumerate(ctx.script.redirects):
        if _network(r.target):
            yield r.span, "redirection opens a network connection (/dev/tcp, /dev/udp)"
        elif r.op in ("<", "<&", ">&", "<>") and r.target is not None and not r.target.static \
                and i not in ctx.decorated_redirects and not r.target.raw.startswith("<("):
            # `cat < $f`: a path decided at run time may be /dev/tcp/HOST/PORT
            yield r.span, f"redirection to `{r.target.raw}`, decided at run time, may open " \
                          "a network connection"


# --- shells and interpreters ------------------------------------------------------
def _mode(ctx: Context, inv: Invocation) -> tuple[str, Word | None]:
    key = id(inv)
    got = ctx.interp_modes.get(key)
    if got is None:
        got = ctx.interp_modes[key] = interp_mode(inv)
    return got


def _interp_hits(ctx: Context, kind: str) -> Iterable[Hit]:
    for inv in ctx.invocations:
        mode, w = _mode(ctx, inv)
        if not mode or w is None:
            continue
        found = data.interp_for(inv.name) or ("", data.INTERPRETERS["python"])
        is_shell = found[1].kind == "shell" or inv.name in ("busybox", "toybox")
        if is_shell != (kind == "shell"):
            continue
        if mode == "inline":
            yield w.span, f"`{inv.argv[0].value} {w.value}` runs inline code"
        elif mode == "dynamic":
            yield w.span, f"`{inv.argv[0].value}` gets an argument decided at run time " \
                          "that may be inline code"


def shell_inline(ctx: Context) -> Iterable[Hit]:
    return _interp_hits(ctx, "shell")


def interpreter_inline(ctx: Context) -> Iterable[Hit]:
    return _interp_hits(ctx, "interpreter")


def stdin_program(ctx: Context) -> Iterable[Hit]:
    for inv in ctx.invocations:
        mode, w = _mode(ctx, inv)
        if mode == "stdin" and w is not None:
            yield w.span, f"`{inv.argv[0].value}` reads its program from standard input"


# --- tools whose options execute code ---------------------------------------------

def _facts(ctx: Context, kind: str, template: str) -> Iterable[Hit]:
    for inv in ctx.invocations:
        for f in inv.facts:
            if f.kind == kind:
                yield f.span, template.format(detail=f.detail)


def git_exec(ctx: Context) -> Iterable[Hit]:
    yield from _facts(ctx, "git-exec", "`git {detail}` can set options that run programs")
    for inv in ctx.invocations:
        if inv.name != "git" or inv.subcommand_at < 2:
            continue
        sub = inv.argv[inv.subcommand_at - 1].value
        rest = inv.argv[inv.subcommand_at:]
        if sub == "config" and any(w.value.lower().startswith("alias.") for w in rest) and \
                any(w.value.startswith("!") for w in rest):
            yield (inv.argv[0].span[0], rest[-1].span[1]), "a `!` git alias runs a shell command"
        if sub == "config":
            kw = config_write_runs(rest)
            if kw is not None:
                yield kw.span, f"git setting `{kw.raw}` can make git run a program later " \
                               "(it writes the host's git configuration)"
        trig = data.GIT_EXEC_SUB.get(sub)
        if trig is None:
            continue
        if "*" in trig:
            yield inv.argv[inv.subcommand_at - 1].span, f"`git {sub}` runs shell commands"
            continue
        for w in rest:
            if w.static and w.value == "--":
                break
            opt = sub_option_runs(sub, trig, w) if w.static else ""
            if opt or w.static and w.value in trig:
                yield w.span, f"`git {sub} {opt or w.value}` runs a program"


def awk_exec(ctx: Context) -> Iterable[Hit]:
    for inv in ctx.invocations:
        if inv.name not in data.AWKS:
            continue
        for w in program_words(inv, data.FILTERS["awk"]):
            verdict = awk_program(w.value) if w.static else UNKNOWN
            if verdict in (EXEC, UNKNOWN):
                what = "runs commands (system(), pipes)" if verdict == EXEC else \
                    "cannot be verified to run no commands"
                yield w.span, f"awk program {what}"


def sed_exec(ctx: Context) -> Iterable[Hit]:
    spec = data.FILTERS["sed"]
    for inv in ctx.invocations:
        if inv.name not in data.SEDS:
            continue
        for w in program_words(inv, spec):
            verdict = sed_script(w.value) if w.static else UNKNOWN
            if verdict in (EXEC, UNKNOWN):
                what = "runs commands (e)" if verdict == EXEC else \
                    f"cannot be verified ({NAMES[verdict]})"
                yield w.span, f"sed script {what}"


def env_split(ctx: Context) -> Iterable[Hit]:
    return _facts(ctx, "env-split", "`env {detail}` splits a string into a command line")


def option_exec(ctx: Context) -> Iterable[Hit]:
    yield from _facts(ctx, "exec-option", "option `{detail}` runs a command")
    yield from _option_value_exec(ctx)
    for inv in ctx.invocations:
        name = inv.name
        table = data.EXEC_OPTIONS.get(name)
        plus = name in data.PLUS_COMMAND
        if table is None and not plus:
            continue
        for w in inv.argv[1:]:
            if not w.static:
                continue
            v = w.value
            if v == "--":
                break
            if plus and v.startswith("+") and len(v) > 1:
                if (name in ("less", "more") and "!" in v) or \
                        (name not in ("less", "more") and not v[1:].isdigit()):
                    yield w.span, f"`{name} {v}` runs an editor or shell command"
                continue
            if table is None or not v.startswith("-"):
                continue
            opt = _exec_option_name(name, table, v.split("=", 1)[0])
            if opt in table:
                if opt in data.EXEC_OPTION_VALUES.get(name, ((),))[0]:
                    continue                    # judged by its value below
                yield w.span, f"`{name} {opt}` {table[opt]}"
            elif (hit := _attached(name, table, v)):
                # `scp -S/tmp/x`, `man -P'sh -c id'`, `zip -TT'cmd'`: getopt reads
                # the rest of the word as the option's value
                if hit not in data.EXEC_OPTION_VALUES.get(name, ((),))[0]:
                    yield w.span, f"`{name} {hit}` {table[hit]}"
            elif name in data.CLUSTER_EXEC and not v.startswith("--"):
                for key, why in table.items():
                    if len(key) == 2 and key[1] in v[1:]:
                        yield w.span, f"`{name} {key}` {why}"
                        break


# programs whose single-dash options are words, not getopt letters (`-fs`, `-Es`)
_WORD_OPTIONS = frozenset({"vim", "nvim", "vi", "view", "gvim", "vimdiff", "emacs"})


def _attached(name: str, table: dict[str, str], v: str) -> str:
    """The short option of ``table`` that ``v`` starts with, its value attached."""
    if v.startswith("--") or name in _WORD_OPTIONS:
        return ""
    for k in table:
        if not k.startswith("--") and len(v) > len(k) and v.startswith(k):
            return k
    return ""


def _exec_option_name(name: str, table: dict[str, str], opt: str) -> str:
    """A long option as getopt_long reads it: an unambiguous prefix is the option
    (`sort --compress=sh` runs sh). Ambiguous or unknown: left as written (the
    tool refuses an ambiguous prefix, so it runs nothing)."""
    if len(opt) <= 2 or not opt.startswith("--") or opt in table:
        return opt
    known = data.EXEC_LONGS.get(name, frozenset()) | {o for o in table if o.startswith("--")}
    return canonical_long(opt, known)


def _option_value_exec(ctx: Context) -> Iterable[Hit]:
    for inv in ctx.invocations:
        rule = data.EXEC_OPTION_VALUES.get(inv.name)
        if rule is None:
            continue
        opt_names, pattern = rule
        opts, _ = scan_args(inv.argv[1:], data.Opts(frozenset(opt_names)))
        for opt, value in opts:
            if opt in opt_names and value is not None and (
                    not value.static or pattern.search(value.value)):
                yield value.span, f"`{inv.name} {opt} {value.raw}` can run a local command"


def shell_launcher(ctx: Context) -> Iterable[Hit]:
    return _facts(ctx, "shell-launcher", "`{detail}` hands its arguments to a shell")


def launched_shell(ctx: Context) -> Iterable[Hit]:
    return _facts(ctx, "launched-shell", "a launcher runs the shell or interpreter `{detail}`")


def _builtin(ctx: Context, code: str) -> Iterable[Hit]:
    for inv in ctx.invocations:
        if inv.argv and data.ONE_TIME_BUILTINS.get(inv.name) == code:
            cmd = ctx.command(inv)
            yield (inv.argv[0].span[0], cmd.span[1]), f"`{inv.name}` {_BUILTIN_WHY[code]}"


_BUILTIN_WHY = {
    "RF117": "runs a string as shell code",
    "RF118": "runs a file as shell code in this shell",
    "RF119": "defines an alias that changes what a name runs",
    "RF121": "installs a handler that runs shell code later",
    "RF126": "detaches a job from the shell",
    "RF128": "changes how command names are looked up",
}


def eval_(ctx: Context) -> Iterable[Hit]:
    yield from _builtin(ctx, "RF117")
    for inv in ctx.invocations:
        if inv.name in _HISTORY_EVAL and inv.argv:
            why = _history_eval(inv.name, inv.argv[1:])
            if why:
                yield (inv.argv[0].span[0], inv.argv[-1].span[1]), why




def source(ctx: Context) -> Iterable[Hit]:
    return _builtin(ctx, "RF118")


def alias(ctx: Context) -> Iterable[Hit]:
    return _builtin(ctx, "RF119")


def function_definition(ctx: Context) -> Iterable[Hit]:
    return _constructs(ctx, "function", "function definition: a name now runs new code")


def trap(ctx: Context) -> Iterable[Hit]:
    return _builtin(ctx, "RF121")


def escalation(ctx: Context) -> Iterable[Hit]:
    yield from _facts(ctx, "escalation", "`{detail}` runs a command with other privileges")
    for inv in ctx.invocations:
        if inv.name not in data.ESCALATION or not inv.argv:
            continue
        subs = data.ESCALATION[inv.name]
        if subs is None or any(w.static and w.value in subs for w in inv.argv[1:3]):
            yield inv.argv[0].span, f"`{inv.name}` runs a command with other privileges"


def background(ctx: Context) -> Iterable[Hit]:
    return _constructs(ctx, "background", "`&` runs a job in the background, beyond the approval")


def coproc(ctx: Context) -> Iterable[Hit]:
    return _facts(ctx, "coproc", "`coproc` starts an asynchronous co-process")


def detach(ctx: Context) -> Iterable[Hit]:
    yield from _facts(ctx, "detach", "`{detail}` detaches the command from this session")
    yield from _builtin(ctx, "RF126")


def dynamic_subcommand(ctx: Context) -> Iterable[Hit]:
    return _facts(ctx, "dynamic-subcommand",
                  "the `{detail}` subcommand is decided at run time, so its key is unknown")


def wrapper_writes(ctx: Context) -> Iterable[Hit]:
    # GNU time -o FILE: a file write hidden in a wrapper that the key drops.
    return _facts(ctx, "wrapper-writes", "`{detail}` writes a file")


def program_writes(ctx: Context) -> Iterable[Hit]:
    # `sort -o f`, `tee f`, `uniq in out`, `sed 'w f'`, `awk '{print > "f"}'`,
    # `split`: a write by the program's own means is as one-time as `> f`.
    for inv in ctx.invocations:
        yield from file_writes(inv)


def lookup_change(ctx: Context) -> Iterable[Hit]:
    yield from _builtin(ctx, "RF128")
    for inv in ctx.invocations:
        if inv.name == "hash" and any(w.value.startswith("-") and "p" in w.value
                                      for w in inv.argv[1:]):
            yield inv.argv[0].span, "`hash -p` binds a command name to another file"


_BUILTINS = names(data.ONE_TIME_BUILTINS)

CHECKS = (
    ("RF101", command_substitution, constructs("command-substitution")),
    ("RF102", process_substitution, constructs("process-substitution")),
    ("RF103", heredoc, redirects),
    ("RF104", here_string, redirects),
    ("RF105", file_write, redirects),
    ("RF106", network_redirect, redirects),
    ("RF107", shell_inline, interpreters),
    ("RF108", interpreter_inline, interpreters),
    ("RF109", git_exec, names({"git"})),
    ("RF110", awk_exec, names(data.AWKS)),
    ("RF111", sed_exec, names(data.SEDS)),
    ("RF112", env_split, facts("env-split")),
    ("RF113", option_exec, names(set(data.EXEC_OPTIONS) | data.PLUS_COMMAND) +
     facts("exec-option")),
    ("RF114", shell_launcher, facts("shell-launcher")),
    ("RF115", launched_shell, facts("launched-shell")),
    ("RF116", stdin_program, interpreters),
    ("RF117", eval_, names(set(data.ONE_TIME_BUILTINS) | _HISTORY_EVAL)),
    ("RF118", source, _BUILTINS),
    ("RF119", alias, _BUILTINS),
    ("RF120", function_definition, constructs("function")),
    ("RF121", trap, _BUILTINS),
    ("RF122", exec_assignment,
     always),      # every assignment form, `${NAME:=v}` on any command (classifier/assigned.py)
    ("RF123", escalation, facts("escalation") + names(data.ESCALATION)),
    ("RF124", background, constructs("background")),
    ("RF125", coproc, facts("coproc")),
    ("RF126", detach, facts("detach") + names({"disown"})),
    ("RF127", dynamic_subcommand, facts("dynamic-subcommand")),
    ("RF128", lookup_change, names({"enable", "hash"})),
    ("RF129", wrapper_writes, facts("wrapper-writes")),
    ("RF130", program_writes, names(writers())),
)
