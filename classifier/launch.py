"""Launchers beyond plain wrappers: what the rows of data_launch.py add while a
launcher is peeled, tmux's commands that run a shell, and the shell in the
operands of any program (`foo --run sh -c CMD`).

Helpers of ``analysis``: they return plain tuples, and analysis makes the facts.
"""

from __future__ import annotations

import posixpath
import re

from . import data
from .data_launch import Wrapper
from .ir import Word

# (kind, word, detail) -> analysis.Fact(kind, word.span, detail, word)
Found = tuple[str, Word, str]


def launcher_facts(words: tuple[Word, ...], i: int, j: int, spec: Wrapper,
                   seen: list[tuple[str, Word]], values: list | None, facts: list,
                   env: list) -> bool:
    """Facts of the launcher at ``words[i]`` whose options end at ``j``. True when
    an option hands a shell string over (`flock -c CMD`, `screen -X stuff ...`)."""
    from .analysis import Fact

    w = words[i]
    name = posixpath.basename(w.value) or w.value
    extra = dict(spec.fact_opts)
    handed = False
    for opt, ow in seen:
        kind = extra.get(opt)
        if kind:
            facts.append(Fact(kind, ow.span, f"{name} {opt}", ow))
        if opt in spec.run_opts:
            facts.append(Fact("exec-option", ow.span, f"{name} {opt}", ow))
        if opt in spec.shell_opts:
            handed = True
            if opt not in spec.opts.value:
                # `screen -X CMD ARGS`: the command is the operands; `quit`, `title`
                # run nothing, `stuff`, `exec`, `screen`, `at` run or type commands
                cmd = words[j] if j < len(words) else None
                if cmd is not None and cmd.static and cmd.value in spec.shell_safe:
                    return True
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


def tmux_runs(argv: tuple[Word, ...]) -> Word | None:
    """The tmux word that makes it run a shell command: a command of TMUX_RUNS
    anywhere (commands chain with `;`), `-c shell-command`, `-f` (a config of
    commands), or a word decided at run time."""
    for k, w in enumerate(argv[1:], 1):
        if not w.static:
            return w
        v = w.value
        if v in data.TMUX_RUNS or (v.endswith(";") and v[:-1] in data.TMUX_RUNS):
            return w
        if v in ("-c", "-f") and k < 3:
            return w
    return None


_SHELL_C = re.compile(r"-[eilx]{0,3}c")     # `$SH -c`, `$SH -lc`, `$SH -ec`


def _shell_option(w: Word) -> bool:
    v = w.value
    return w.static and len(v) > 1 and v[0] in "-+"


def operand_shells(argv: tuple[Word, ...], name: str) -> list[tuple[int, Word]]:
    """Operands that are a shell or interpreter followed by an option (`sh -c`,
    `/bin/bash -lc`, `python3 -c`), or a word decided at run time followed by
    `-c`: the program most likely runs them. Returns (index, word) of each."""
    if name in data.PRINTS_OPERANDS or name in data.HELPERS:
        return []
    out: list[tuple[int, Word]] = []
    n = len(argv)
    for k in range(1, n - 1):
        w = argv[k]
        nxt = argv[k + 1]
        if not _shell_option(nxt):
            continue
        if not w.static:
            if _SHELL_C.fullmatch(nxt.value):
                out.append((k, w))
            continue
        base = posixpath.basename(w.value)
        if base and data.interp_for(base):
            out.append((k, w))
    return out
