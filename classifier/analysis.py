"""Analysis: unwrap wrappers and launchers, find the effective argv and key.

Input is the IR (``ringfence.classifier.ir``); output is a list of :class:`Invocation`
records plus :class:`Fact` records the rules turn into findings. Nothing here
decides a verdict; it only describes what would run.

Every loop here is iterative: a command like ``xargs xargs xargs ...`` with
thousands of words must not recurse. Reading options the way getopt does is
``optscan.py`` (re-exported here).
"""

from __future__ import annotations

import posixpath
import re
from typing import NamedTuple

from . import data
from ringfence.classifier.git_cmdline import option_runs_program
from .ir import Script, Span, Word
from .optscan import canonical_long, scan_args, skip_options  # noqa: F401 (re-exported)

# A command name containing one of these after quote removal is not static:
# bash would expand it (glob, brace) or it came from an expansion; a blank
# would let a file named "git push" share the `git push` key.
_BAD_NAME = re.compile(r"[$`{}*?\[\s]")
_ENV_ASSIGN = re.compile(r"[A-Za-z_][A-Za-z0-9_]*=")


class Fact(NamedTuple):
    kind: str          # 'wrapper', 'launcher', 'escalation', 'detach', 'coproc', 'env-split',
                       # 'shell-launcher', 'launched-shell', 'git-exec', 'exec-option',
                       # 'dynamic-subcommand', 'multiplexer'
    span: Span
    detail: str
    word: Word | None = None


class Invocation:
    """One program that would run: the effective argv after wrappers, its key
    and the facts found on the way. (A plain slotted class: mutable while the
    analysis fills in the key, and cheap to define on the cold path.)"""

    __slots__ = ("index", "argv", "key", "subcommand_at", "launched_by", "counts", "facts",
                 "env", "name")

    def __init__(self, index: int, argv: tuple[Word, ...], key: str = "", *,
                 launched_by: str = "", counts: bool = True, facts: list[Fact] | None = None,
                 env: list[tuple[str, Word]] | None = None, name: str = "") -> None:
        self.index = index                  # Script.commands index of the simple command
        self.argv = argv                    # effective argv, program first; () if nothing runs
        self.key = key                      # capability key ('' when dynamic / none)
        self.subcommand_at = 1              # argv index after the multiplexer subcommand words
        self.launched_by = launched_by      # 'xargs', 'find', 'watch', 'uv run' ...
        self.counts = counts                # False: analysed for one-time constructs only
        self.facts = facts if facts is not None else []
        self.env = env if env is not None else []     # env NAME=value
        self.name = name                    # basename of a static program word

    @property
    def program(self) -> Word | None:
        return self.argv[0] if self.argv else None

    def __repr__(self) -> str:
        return f"Invocation({self.key or self.name!r}, argv={[w.value for w in self.argv]})"


def static_name(w: Word) -> bool:
    """Can this program word be a key? Not if bash decides it at run time, and not
    if it holds a blank: `'git push' x` runs a file named "git push", whose key
    would collide with the `git push` subcommand key."""
    v = w.value
    if v == "[" or v == "[[":         # the test builtins, not a glob
        return True
    return not (w.dynamic or w.glob) and v != "" and _BAD_NAME.search(v) is None


def _base(w: Word) -> str:
    v = w.value
    if "/" not in v:
        return v
    return posixpath.basename(v) or v


def _time_keyword(words: tuple[Word, ...], gaps: list[int]) -> int:
    """Skip the bash keyword `time` (the caller checked the position): return the
    index of what it times. Only an unquoted `time`, then `-p` at most once,
    then `--`, then `!` or `time` again, as bash's parser reads them; anything
    else, even `-o`, is the timed program (`time -o f ls` runs `-o`). A
    redirection between two words ends the keyword part (``gaps``: where
    this command's redirections start)."""
    i, n = 0, len(words)
    while i < n and words[i].raw in ("time", "!"):
        if words[i].raw == "time":
            for opt in ("-p", "--"):
                if i + 1 < n and words[i + 1].raw == opt and \
                        not any(words[i].span[1] <= g < words[i + 1].span[0] for g in gaps):
                    i += 1
        i += 1
    return i


def _unwrap(words: tuple[Word, ...], facts: list[Fact], env: list[tuple[str, Word]],
            launched_by: str = "", keyword_gaps: list[int] | None = None) -> tuple[Word, ...]:
    """Peel transparent wrappers; return the effective argv (program first).

    ``keyword_gaps`` is not None when the first word stands where bash reads the
    keyword `time`. ``launched_by`` names the launcher that runs these words:
    under xargs a wrapper left without a program gets it from stdin.
    """
    i, n = 0, len(words)
    if keyword_gaps is not None and words and words[0].raw == "time":
        i = _time_keyword(words, keyword_gaps)
        if i >= n:
            return ()
        facts.append(Fact("wrapper", words[0].span, "time", words[0]))
    while i < n:
        w = words[i]
        if not static_name(w):
            return words[i:]
        name = _base(w)
        spec = data.WRAPPERS.get(name)
        if spec is None:
            return words[i:]
        values: list[tuple[str, Word | None]] | None = \
            [] if spec.writes or spec.env_opts else None
        unknown: list[Word] = []
        j, seen = skip_options(words, i + 1, spec.opts, longs=_row_longs(spec),
                               values=values, unknown=unknown)
        if _odd_option(name, spec, unknown, facts, Fact):
            return words[i:]      # never take the word after it for the program
        if any(opt in spec.stop_opts for opt, _ in seen):
            return words[i:]
        if spec.source and _launcher_facts(words, i, j, spec, seen, values, facts, env, Fact):
            return words[i:]      # it hands a shell string over: judged as a shell launcher
        for opt, vw in values or ():
            if opt in spec.writes and not (vw is not None and vw.static and
                                           vw.value in data.HARMLESS_OUTPUTS):
                target = vw.raw if vw is not None else "(missing)"
                facts.append(Fact("wrapper-writes", (w.span[0], (vw or w).span[1]),
                                  f"{name} {opt} {target}", vw))
        if name == "env":
            for opt, ow in seen:
                if opt in ("-S", "--split-string"):
                    facts.append(Fact("env-split", ow.span, opt, ow))
            while j < n and words[j].static and _ENV_ASSIGN.match(words[j].value):
                nm, _, _ = words[j].value.partition("=")
                env.append((nm, words[j]))
                j += 1
        j += spec.positionals
        if spec.options_after:
            j, _ = skip_options(words, j, spec.opts, longs=_row_longs(spec))
        if spec.source and j < n and (spec.shell_words and words[j].static and
                                      words[j].value in spec.shell_words or
                                      spec.shell and not any(o in spec.shell_unless
                                                             for o, _ in seen)):
            facts.append(Fact("shell-launcher", w.span, name, w))
            if spec.fact:
                facts.append(Fact(spec.fact, w.span, name, w))
            return words[i:]
        if j >= n:
            if launched_by == "xargs":
                # `xargs env`, `xargs command`, `xargs nice -n 5`, `xargs sudo`: xargs
                # appends its input to these words, so the program comes from stdin.
                if spec.fact:
                    facts.append(Fact(spec.fact, w.span, name, w))
                facts.append(Fact("stdin-program", w.span, f"xargs {name}", w))
                return words[i:]
            # `time`/`exec`/`command`/`builtin`/`nohup` alone run nothing here;
            # launched by find or watch, the wrapper itself is what runs. `env`
            # alone prints the environment; `sudo` alone is still sudo, and
            # `sudo -i`, `doas -s`, bare `pkexec`/`run0` escalate with no program.
            if spec.fact == "escalation":
                facts.append(Fact(spec.fact, w.span, name, w))
            if name in ("exec", "time", "command", "builtin", "nohup", "coproc") \
                    and not launched_by:
                if spec.fact:
                    facts.append(Fact(spec.fact, w.span, name, w))
                return ()
            return words[i:]
        if spec.fact:
            facts.append(Fact(spec.fact, w.span, name, w))
        facts.append(Fact("wrapper", w.span, name, w))
        i = j
    return ()


from .launch import (launcher_facts as _launcher_facts, odd_option as _odd_option,  # noqa: E402
                     operand_command_line, operand_shells, row_longs as _row_longs, tmux_runs,
                     SUB_PEEL, sub_peel, program_start)


def _multiplexer_key(inv: Invocation) -> None:
    argv = inv.argv
    prog = argv[0]
    name = inv.name
    row = data.MULTIPLEXERS.get(data.MULTIPLEXER_ALIASES.get(name, name))
    if row is None:
        return
    values: list[tuple[str, Word | None]] = []
    j, seen = skip_options(argv, 1, row.opts, values=values)
    if row.plus_skip and j < len(argv) and argv[j].static and argv[j].value.startswith("+"):
        j, more = skip_options(argv, j + 1, row.opts, values=values)   # cargo +nightly -v b
        seen += more
    given: dict[str, list[Word | None]] = {}
    for opt, vw in values:
        given.setdefault(opt, []).append(vw)
    for opt, ow in seen:
        if opt in row.exec_opts:
            queue = given.get(opt)
            vw = queue.pop(0) if queue else None
            if name == "git" and not option_runs_program(opt, vw):
                continue          # `git -c user.email=a@b`: judged by the key (gitkeys)
            inv.facts.append(Fact("git-exec" if name == "git" else "exec-option", ow.span, opt, ow))
    subs: list[str] = []
    while j < len(argv) and len(subs) < row.levels:
        w = argv[j]
        if not w.static:
            if not subs:
                inv.facts.append(Fact("dynamic-subcommand", w.span, name, w))
            break
        if not data.SUBCOMMAND_WORD.fullmatch(w.value):
            break
        if subs and row.groups is not None and subs[0] not in row.groups:
            break
        subs.append(w.value)
        j += 1
    inv.subcommand_at = j
    if subs:
        inv.key = " ".join([prog.value, *subs])
        inv.facts.append(Fact("multiplexer", (prog.span[0], argv[j - 1].span[1]), inv.key))


def _find_execs(inv: Invocation, out: list) -> None:
    argv = inv.argv
    i, n = 1, len(argv)
    while i < n:
        if argv[i].static and argv[i].value in data.FIND_EXEC:
            j = i + 1
            while j < n and not (argv[j].static and argv[j].value in (";", "+")):
                j += 1
            if j > i + 1:
                out.append((argv[i + 1:j], "find", argv[i]))
            i = j
        i += 1


def printing_key(words: tuple[Word, ...], assigns: bool = False) -> str:
    """The key of a declaration builtin that prints rather than declares: no names
    (`declare`, `export`, `export -p`, `declare -x`, `readonly`, `typeset -f`) or
    `-p`/`-f`/`-F` with names (`declare -p TOKEN`). Like `env`, printing the
    variables is a capability of its own: `declare -p`, `export -p`, `typeset -f`..."""
    name = words[0].value
    letters = ""
    operands = assigns
    for w in words[1:]:
        v = w.value
        if w.static and len(v) > 1 and v[0] in "-+" and v != "--":
            letters += v[1:]
        elif not (w.static and v == "--"):
            operands = True
    if operands and not any(c in letters for c in "pfF"):
        return ""
    return f"{name} -f" if any(c in letters for c in "fF") else f"{name} -p"


def _keyword_gaps(cmd, starts: list[int]) -> list[int] | None:
    """Is the command's first word where bash reads the keyword `time`? Only as
    the first word of a pipeline: not after an assignment or a redirection
    (`A=1 time`, `>f time`) and not in a later stage (`x | time`), where bash
    runs the program time. Returns the redirection starts, or None."""
    w = cmd.words[0]
    if w.raw != "time" or cmd.assignments or cmd.stage not in (None, 0) or \
            any(g < w.span[0] for g in starts):
        return None
    return starts


def analyze(script: Script) -> list[Invocation]:
    """One Invocation per program that would run (plus launched programs)."""
    result: list[Invocation] = []
    starts: dict[int | None, list[int]] = {}      # where each command's redirections start
    for r in script.redirects:
        starts.setdefault(r.owner, []).append(r.span[0])
    for index, cmd in enumerate(script.commands):
        if cmd.kind == "test":
            # `[ ... ]` / `[[ ... ]]`: a builtin; non-literal ones become the capability `[`
            result.append(Invocation(index, cmd.words, cmd.words[0].value, name=cmd.words[0].value))
            continue
        if cmd.kind == "declaration" and cmd.words:
            key = printing_key(cmd.words, bool(cmd.assignments))
            if key:
                # `declare -p`, `export`, `typeset -f`: prints variables (secrets)
                result.append(Invocation(index, cmd.words, key, name=cmd.words[0].value))
            continue
        if cmd.kind != "simple" or not cmd.words:
            continue
        # worklist of (argv, launched_by, counts, launcher word)
        work: list[tuple[tuple[Word, ...], str, bool, Word | None]] = [(cmd.words, "", True, None)]
        while work:
            words, launched_by, counts, lword = work.pop()
            facts: list[Fact] = []
            env: list[tuple[str, Word]] = []
            argv = _unwrap(words, facts, env, launched_by,
                           _keyword_gaps(cmd, starts.get(index, [])) if lword is None else None)
            name = _base(argv[0]) if argv and static_name(argv[0]) else ""
            inv = Invocation(index, argv, launched_by=launched_by, counts=counts, facts=facts,
                             env=env, name=name)
            if lword is not None:
                facts.append(Fact("launcher", lword.span, launched_by, lword))
            result.append(inv)
            if not argv or not name or any(f.kind == "stdin-program" for f in facts):
                continue          # no static program: no key (RF003 says why)
            inv.key = argv[0].value
            if name in data.DECLARATION_NAMES and facts and name != "unset":
                # `builtin declare -p`, `command export`: keyed as the declaration is
                inv.key = printing_key(argv) or name
            found = data.interp_for(name) if launched_by in ("xargs", "find") else None
            if found and not found[1].data_operands:
                facts.append(Fact("launched-shell", argv[0].span, name, argv[0]))
            if name == "xargs":
                unknown: list[Word] = []
                j, _ = skip_options(argv, 1, data.XARGS_OPTS, data.XARGS_ATTACHED_ONLY,
                                    longs=data.LONGS["xargs"], unknown=unknown)
                if _odd_option("xargs", None, unknown, facts, Fact):
                    continue      # keyed as xargs: the program is not known
                if j < len(argv):
                    # xargs itself only launches: the capability is what it runs
                    inv.counts = False
                    inv.key = ""
                    work.append((argv[j:], "xargs", counts, argv[0]))
                elif launched_by == "xargs":
                    # `xargs xargs`: the outer input becomes the inner command line
                    inv.key = ""
                    facts.append(Fact("stdin-program", argv[0].span, "xargs xargs", argv[0]))
                continue
            if name == "find":
                launched: list = []
                _find_execs(inv, launched)
                for sub, by, w in reversed(launched):
                    work.append((sub, by, counts, w))
                continue
            if name == "watch":
                j, seen = skip_options(argv, 1, data.WATCH_OPTS)
                if any(o in data.WATCH_EXEC for o, _ in seen) and j < len(argv):
                    inv.counts = False
                    inv.key = ""
                    work.append((argv[j:], "watch", counts, argv[0]))
                else:
                    facts.append(Fact("shell-launcher", argv[0].span, "watch", argv[0]))
                continue
            if name in data.SHELL_LAUNCHERS:
                trig = data.SHELL_LAUNCHERS[name]
                if trig is None or any(w.static and w.value.split("=")[0] in trig
                                       for w in argv[1:]):
                    facts.append(Fact("shell-launcher", argv[0].span, name, argv[0]))
                if name == "su":
                    facts.append(Fact("escalation", argv[0].span, name, argv[0]))
                continue
            _multiplexer_key(inv)
            if name in ("busybox", "toybox") and inv.subcommand_at > 1:
                # `busybox awk ...`, `busybox find -delete`: judged as the applet itself
                work.append((argv[1:], inv.key, False, argv[0]))
            if name == "tmux":
                tw = tmux_runs(argv)
                if tw is not None:
                    facts.append(Fact("shell-launcher", tw.span, f"tmux {tw.raw}", tw))
            line = operand_command_line(argv, name) if len(argv) > 1 else None
            if line is not None:
                facts.append(Fact("shell-launcher", line.span, f"{name} {line.raw}", line))
            for k, sw in operand_shells(argv, name) if len(argv) > 2 else ():
                # `foo --run sh -c CMD`: judged as running the shell (RF107/RF108)
                if sw.static:
                    work.append((argv[k:], name, False, argv[0]))
                else:
                    facts.append(Fact("shell-launcher", sw.span, f"{name} {sw.raw}", sw))
            k = sub_peel(argv, name, facts, Fact) if name in SUB_PEEL else 0
            if k:
                work.append((argv[k:], name, counts, argv[0]))      # `ip netns exec N CMD`
            sub = argv[inv.subcommand_at - 1].value if inv.subcommand_at > 1 else ""
            opts = data.SUB_LAUNCHERS.get((name, sub))
            if opts is not None:
                j, seen = skip_options(argv, inv.subcommand_at, opts)
                runs = data.SUB_LAUNCHER_RUNS.get((name, sub), ())
                for opt, ow in seen:
                    if opt.partition("=")[0] in runs:
                        facts.append(Fact("exec-option", ow.span, f"{inv.key} {opt}", ow))
                j = program_start(argv, j, name)
                if j < len(argv):       # keyed too: `uv run` alone is not `uv run ANY`
                    work.append((argv[j:], inv.key, counts, argv[0]))
            elif name in data.PACKAGE_RUNNERS:
                # `npx node -e ...`: the package binary and its arguments are checked
                # for one-time constructs too (the key stays `npx node`)
                j, _ = skip_options(argv, 1, data.PACKAGE_RUNNERS[name])
                if j < len(argv):
                    work.append((argv[j:], inv.key, False, argv[0]))
    return result
