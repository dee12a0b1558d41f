"""Launchers beyond plain wrappers: what the rows of data_launch.py add while a
launcher is peeled, tmux's commands that run a shell, and the shell in the
operands of any program (`foo --run sh -c CMD`).

Helpers of ``analysis`` (which passes its Fact type in: no import cycle).
"""

from __future__ import annotations

import posixpath
import re
from functools import lru_cache

from . import data
from .data_launch import Wrapper
from .ir import Word


@lru_cache(maxsize=256)
def row_longs(spec: Wrapper) -> frozenset[str]:
    """The long options a row's prefixes resolve against: its full list when it
    has one, else every long option the row names."""
    if spec.longs:
        return spec.longs
    named = set(spec.opts.value) | spec.opts.value2 | spec.stop_opts | spec.writes | \
        spec.shell_opts | spec.run_opts | spec.env_opts | {o for o, _ in spec.fact_opts}
    return frozenset(o for o in named if o.startswith("--"))


def _ambiguous(w: Word, spec: Wrapper) -> bool:
    """A long option that prefixes two options the row names (`--sched` of chrt)."""
    name = w.value.partition("=")[0]
    return sum(1 for k in row_longs(spec) if k.startswith(name)) > 1


def odd_option(name: str, spec: Wrapper | None, unknown: list[Word], facts: list, Fact) -> bool:
    """A long option getopt_long rejects or reads some way the row does not know
    (unknown to a row with its full list, or ambiguous among the options a row
    names): a fact that makes the command one time. True when there is one.
    ``spec`` None: the caller's list is full (xargs)."""
    odd = unknown if spec is None or spec.longs else [u for u in unknown if _ambiguous(u, spec)]
    if odd:
        facts.append(Fact("exec-option", odd[0].span,
                          f"{name} {odd[0].value.partition('=')[0]} (an option this "
                          "table does not know)", odd[0]))
    return bool(odd)


def launcher_facts(words: tuple[Word, ...], i: int, j: int, spec: Wrapper,
                   seen: list[tuple[str, Word]], values: list | None, facts: list,
                   env: list, Fact) -> bool:
    """Facts of the launcher at ``words[i]`` whose options end at ``j`` (``Fact``:
    analysis's record type, passed in so this module does not import analysis).
    True when an option hands a shell string over (`flock -c CMD`, `screen -X`)."""
    w = words[i]
    name = posixpath.basename(w.value) or w.value
    extra = dict(spec.fact_opts)
    handed = False
    for opt, ow in seen:
        kind = extra.get(opt)
        if kind:
            facts.append(Fact(kind, ow.span, f"{name} {opt}", ow))
        if opt in spec.run_opts and not _none_value(opt, values):
            facts.append(Fact("exec-option", ow.span, f"{name} {opt}", ow))
        if opt in spec.shell_opts:
            handed = True
            if opt not in spec.opts.value:
                # `screen -X CMD ARGS`: the command is the operands; `quit`, `title`
                # run nothing, `stuff`, `exec`, `screen`, `at` run or type commands
                cmd = words[j] if j < len(words) else None
                if cmd is not None and cmd.static and cmd.value in spec.shell_safe:
                    return True
    if name == "bwrap":
        prog = words[j] if j < len(words) else None
        src: Word | None = None
        for opt, vw in values or ():
            if not opt.endswith(":2"):
                src = vw
                continue
            same = src is not None and vw is not None and src.static and vw.static and \
                posixpath.normpath(src.value) == posixpath.normpath(vw.value) and \
                opt[:-2] in ("--bind", "--ro-bind", "--dev-bind", "--bind-try",
                             "--ro-bind-try", "--dev-bind-try")
            if opt[:-2] in data.BWRAP_PLACES and not same and _over_program(vw, prog):
                facts.append(Fact("exec-option", (vw or w).span,
                                  f"bwrap {opt[:-2]} over a program's path", vw or w))
    for opt, vw in values or ():
        if opt in spec.env_opts and vw is not None:
            nm = vw.value.partition("=")[0] if vw.static else ""
            # a name decided at run time may be any variable: judged as PATH
            env.append((nm if nm else "PATH", vw))
    if handed:
        facts.append(Fact("shell-launcher", w.span, name, w))
        if spec.fact:
            facts.append(Fact(spec.fact, w.span, name, w))
    return handed


_PROGRAM_DIRS = ("/usr", "/bin", "/sbin", "/lib", "/etc", "/opt", "/nix", "/snap", "/app")


def _over_program(dst: Word | None, prog: Word | None) -> bool:
    """A bwrap mount or file placed where programs, their libraries or their
    configuration live, or over the program it runs: what runs is not what is
    named. A place decided at run time may be any."""
    if dst is None or not dst.static:
        return True
    d = posixpath.normpath(dst.value) if dst.value else ""
    if not d.startswith("/") or d == "/" or d.startswith(_PROGRAM_DIRS):
        return True
    if prog is None or not prog.static:
        return True
    p = prog.value
    return posixpath.basename(d) == posixpath.basename(p) or \
        (p.startswith("/") and (p + "/").startswith(d + "/"))


def _tmux_command(word: str) -> str:
    """tmux's own lookup: an exact name or alias, else a unique prefix of a name."""
    if word in data.TMUX_COMMANDS:
        return word
    for name, alias in data.TMUX_COMMANDS.items():
        if alias == word:
            return name
    hits = [n for n in data.TMUX_COMMANDS if n.startswith(word)]
    return hits[0] if len(hits) == 1 else ""


def _none_value(opt: str, values: list | None) -> bool:
    """`firejail --shell=none`: the option's value turns the program off."""
    return any(o == opt and v is not None and v.static and v.value == "none"
               for o, v in values or ())


def tmux_runs(argv: tuple[Word, ...]) -> Word | None:
    """The tmux word that makes it run a shell command: `-c shell-command` or `-f
    FILE` among the global options, a command of TMUX_RUNS (commands chain with
    `;`), a set-option of a command or hook option, a `#(command)` format, or a
    word decided at run time."""
    i, n = 1, len(argv)
    while i < n and argv[i].static and argv[i].value.startswith("-") and argv[i].value != "-":
        v = argv[i].value
        if v == "--":
            i += 1
            break
        step = 1
        for k, letter in enumerate(v[1:], 1):      # getopt "2c:CDdf:hL:lNS:T:uVv"
            if letter in "cf":
                return argv[i]
            if letter in "LST":
                step = 2 if k == len(v) - 1 else 1
                break
        i += step
    first = True
    current = ""
    for w in argv[i:]:
        if not w.static:
            return w
        v = w.value
        if "#(" in v:
            return w
        if first:
            current = _tmux_command(v.rstrip(";"))
            if current in data.TMUX_RUNS:
                return w
            first = False
        elif current in ("set-option", "set-window-option") and \
                v.startswith(data.TMUX_COMMAND_OPTION):
            return w
        if v == ";" or v.endswith(";"):
            first = True
    return None


_SHELL_C = re.compile(r"-[eilx]{0,3}c")     # `$SH -c`, `$SH -lc`, `$SH -ec`
# programs that print or match their operands as text
_EXEMPT = data.PRINTS_OPERANDS | data.HELPERS | frozenset(data.FILTERS) | \
    frozenset({"grep", "rg", "sed", "awk", "jq"})


def operand_shells(argv: tuple[Word, ...], name: str) -> list[tuple[int, Word]]:
    """Operands that are a shell or interpreter followed by an option (`sh -c`,
    `/bin/bash -lc`, `python3 -c`), or a word decided at run time followed by
    `-c`: the program most likely runs them. Returns (index, word) of each."""
    if name in _EXEMPT:
        return []
    out: list[tuple[int, Word]] = []
    for k in range(1, len(argv) - 1):
        nxt = argv[k + 1]
        v = nxt.value
        if len(v) < 2 or v[0] not in "-+" or not nxt.static:
            continue
        w = argv[k]
        if not w.static:
            if _SHELL_C.fullmatch(v):
                out.append((k, w))
            continue
        base = w.value[w.value.rfind("/") + 1:]
        if base and data.interp_for(base):
            out.append((k, w))
    return out


_COMMAND_LINE = re.compile(r"\s*(\S*/)?([A-Za-z0-9._+-]+)\s+(-[A-Za-z]*c|-e|-E)(\s|$)")


def operand_command_line(argv: tuple[Word, ...], name: str) -> Word | None:
    """An operand that is itself a command line running a shell or interpreter
    inline (`foo 'sh -c id'`, `foo "python3 -c ..."`): a program handed such a
    word hands it to a shell. Programs that print or match text are exempt."""
    if name in _EXEMPT or name == "git":
        return None
    for w in argv[1:]:
        v = w.value
        if " " in v and w.static:
            for text in (v, v.partition("=")[2]):      # `--exec='sh -c id'`
                m = _COMMAND_LINE.match(text)
                if m and data.interp_for(m.group(2)):
                    return w
    return None


# ip(8) `ip [OPTIONS] netns exec NAME CMD` runs CMD (object and command match by
# prefix: `ip netns e`); `-b`/`-batch FILE` (and `-force`) read commands from a
# file. OPTIONS that take a value: -n/-netns, -f/-family, -l/-loops, -rc/-rcvbuf.
# dpkg-architecture(1) `-c command`: the words after -c are the command.
_IP_VALUE = ("-n", "-netns", "-f", "-family", "-l", "-loops", "-rc", "-rcvbuf")
SUB_PEEL = frozenset({"ip", "dpkg-architecture"})


def sub_peel(argv: tuple[Word, ...], name: str, facts: list, Fact) -> int:
    """Where the command ip or dpkg-architecture runs starts (0: none)."""
    i, n = 1, len(argv)
    if name == "dpkg-architecture":
        for k in range(1, n):
            if argv[k].static and argv[k].value in ("-c", "--command"):
                return k + 1 if k + 1 < n else 0
        return 0
    while i < n and argv[i].static and argv[i].value.startswith("-"):
        v = argv[i].value.lstrip("-")
        if v and ("batch".startswith(v) or v == "force") and not v.startswith("br"):
            facts.append(Fact("exec-option", argv[i].span, f"ip {argv[i].value}", argv[i]))
            return 0
        i += 2 if argv[i].value in _IP_VALUE else 1
    if i + 3 < n and argv[i].static and argv[i].value.startswith("netn") and \
            "netns".startswith(argv[i].value) and argv[i + 1].static and \
            "exec".startswith(argv[i + 1].value):
        return i + 3
    if i < n and not argv[i].static:
        facts.append(Fact("dynamic-subcommand", argv[i].span, name, argv[i]))
    return 0


def program_start(argv: tuple[Word, ...], j: int, name: str) -> int:
    """Where a subcommand launcher's program starts once its options end at ``j``:
    past `mise exec TOOL@VERSION...` tool words and a `--`."""
    while name == "mise" and j < len(argv) and argv[j].static and "@" in argv[j].value:
        j += 1
    if j < len(argv) and argv[j].static and argv[j].value == "--":
        j += 1
    return j
