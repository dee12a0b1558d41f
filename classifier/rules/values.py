"""RF140-RF142: values that bash evaluates as code (arithmetic, indirection, prompts).

The front end records where bash evaluates text arithmetically or expands a
value again (``parse_values.py``); these checks decide, with
``classifier.arith``, which of those places hold anything but literal integers.
A value such as ``a[$(id)]`` runs ``id`` when it is evaluated, and the command
can set the value itself (``x='a[$(id)]'; (( x ))``), so this is not only about
a hostile environment.
"""

from __future__ import annotations

from typing import Iterable

from ringfence.rfcore.lazyre import lazy
from ..arith import assigned_literal, literal, subscript_literal
from ..ir import Command, Word
from ..analysis import scan_args
from ..optspec import Opts
from . import Context, Hit, constructs, declarations, names
from ..assigned import builtin_names as _assigned_names

# [[ ]] operators whose operands bash evaluates arithmetically ([ ] and test do
# not: they accept only integers, checked against bash 5.2).
NUMERIC_TEST_OPS = frozenset({"-eq", "-ne", "-lt", "-le", "-gt", "-ge"})
# Builtins whose name operands may carry a subscript bash evaluates.
DECLARERS = frozenset({"declare", "typeset", "local", "readonly"})
_WHY = "is evaluated arithmetically: a variable or value there (such as `a[$(id)]`) runs code"


def _word_literal(w: Word) -> bool:
    return not w.subst and literal(w.raw)


def _integer_attr(cmd: Command) -> bool:
    return any(w.static and w.value.startswith("-") and "i" in w.value[1:]
               for w in cmd.words[1:])


def _declared_integers(ctx: Context) -> Iterable[Hit]:
    """`declare -i n`: every later assignment to n is evaluated arithmetically."""
    cmds = ctx.script.commands
    for cmd in cmds:
        if cmd.kind != "declaration" or not cmd.words or not _integer_attr(cmd):
            continue
        names_ = {a.name.split("[", 1)[0] for a in cmd.assignments}
        names_ |= {w.value.split("=", 1)[0].split("[", 1)[0] for w in cmd.words[1:]
                   if w.static and not w.value.startswith(("-", "+"))}
        if any(not w.static for w in cmd.words[1:]):
            yield cmd.span, f"`{cmd.words[0].value} -i` with a name decided at run time: " \
                            f"its value {_WHY}"
            continue
        for other in cmds:
            for a in other.assignments:
                if a.name.split("[", 1)[0] in names_ and a.value is not None and \
                        not _word_literal(a.value):
                    yield a.span, f"`{a.name}` has the integer attribute: its value {_WHY}"
        for inv in ctx.invocations:
            for w in _assigned_names(inv):
                if not w.static or w.value.split("[", 1)[0] in names_:
                    yield w.span, f"`{inv.name}` assigns the integer variable `{w.raw}`: " \
                                  f"its value {_WHY}"


def _test_operands(cmd: Command) -> Iterable[Hit]:
    words = cmd.words
    double = words[0].value == "[["
    for i, w in enumerate(words):
        if w.quoted or w.dynamic:
            continue
        if double and w.value in NUMERIC_TEST_OPS:
            for k in (i - 1, i + 1):
                if 0 < k < len(words) - 1 and not _word_literal(words[k]):
                    yield words[k].span, f"an operand of `[[ {w.value} ]]` {_WHY}"
        elif w.value == "-v" and i + 1 < len(words):
            # `test -v 'a[$(id)]'` evaluates the subscript of the name
            name = words[i + 1]
            if not name.static or not subscript_literal(name.value):
                yield name.span, f"the subscript of `-v {name.raw}` {_WHY}"


_WAIT = Opts(frozenset({"-p"}))
data_decl = DECLARERS | {"unset"}


def _unset_names(cmd: Command) -> Iterable[Hit]:
    """`unset 'a[$(id)]'` (and `unset -v`) evaluates the subscript of each name (bash
    5.2); `unset -f` names functions and `unset -n` a nameref, whose subscripts
    bash does not evaluate. A name decided at run time may hold a subscript."""
    letters = "".join(w.value[1:] for w in cmd.words[1:] if w.static and
                      w.value.startswith("-") and w.value != "--")
    if "f" in letters or "n" in letters:
        return
    for w in cmd.words[1:]:
        if w.static and (w.value.startswith("-") and len(w.value) > 1):
            continue
        if w.dynamic or not subscript_literal(w.value if w.static else w.raw):
            yield w.span, f"`unset {w.raw}`: the subscript {_WHY}"


def _stable(ctx: Context, names_: frozenset[str]) -> bool:
    """Nothing else in the script gives these names a value that is not a literal
    integer (`for ((i=0; i<3; i++)); do i=$x; done` would): no assignment, no
    builtin that assigns them or a name decided at run time."""
    if not names_:
        return True
    for cmd in ctx.script.commands:
        for a in cmd.assignments:
            if a.name.split("[", 1)[0] in names_ and a.value is not None and \
                    not _word_literal(a.value):
                return False
        if cmd.kind == "declaration" and any(not w.static for w in cmd.words[1:]):
            return False
    for inv in ctx.invocations:
        for w in _assigned_names(inv):
            if not w.static or w.value.split("[", 1)[0] in names_:
                return False
    return True


def _evaluated(ctx: Context, parts: list[str]) -> bool:
    ok, assigned = assigned_literal(parts)
    return ok and _stable(ctx, assigned)


def arithmetic(ctx: Context) -> Iterable[Hit]:
    for c in ctx.script.constructs:
        if c.kind == "arithmetic" and not _evaluated(ctx, [c.text]):
            yield c.span, f"`{c.text}` {_WHY}"
    for inv in ctx.invocations:
        name = inv.name
        if name == "let":
            args = inv.argv[1:]
            if any(w.subst for w in args) or not _evaluated(ctx, [w.raw for w in args]):
                yield (inv.argv[0].span[0], inv.argv[-1].span[1]), \
                    f"`let {' '.join(w.raw for w in args)}` {_WHY}"
        elif name == "test":
            yield from _test_operands(Command("test", inv.argv, (), inv.argv[0].span))
        for w in _assigned_names(inv):
            if w.static and not subscript_literal(w.value):
                yield w.span, f"the subscript of `{w.raw}`, assigned by `{name}`, {_WHY}"
        if name in data_decl and inv.facts and len(inv.argv) > 1:
            # `builtin declare 'a[$(id)]=1'`, `command unset 'a[$(id)]'`
            fake = Command("unset" if name == "unset" else "declaration", inv.argv, (),
                           inv.argv[0].span)
            yield from (_unset_names(fake) if name == "unset" else _declared(fake))
        if name == "wait":
            # `wait -n -p 'a[$(id)]'` assigns the job's id through the subscript
            opts, _ = scan_args(inv.argv[1:], _WAIT)
            for opt, value in opts:
                if opt == "-p" and value is not None and (
                        not value.static or not subscript_literal(value.value)):
                    yield value.span, f"the subscript of `wait -p {value.raw}` {_WHY}"
    for cmd in ctx.script.commands:
        if cmd.kind == "unset" and cmd.words:
            yield from _unset_names(cmd)
        if cmd.kind == "test" and cmd.words:
            yield from _test_operands(cmd)
        elif cmd.kind == "declaration" and cmd.words and cmd.words[0].value in DECLARERS:
            yield from _declared(cmd)
    yield from _declared_integers(ctx)


def _declared(cmd: Command) -> Iterable[Hit]:
    for w in cmd.words[1:]:
        if w.static and w.value.startswith(("-", "+")):
            continue
        if not w.static or not subscript_literal(w.value):
            yield w.span, f"`{cmd.words[0].value} {w.raw}`: a subscript in the name {_WHY}"


def indirection(ctx: Context) -> Iterable[Hit]:
    for c in ctx.script.constructs:
        if c.kind == "indirection":
            yield c.span, f"`{c.text}` expands the variable named by a value, and bash " \
                          "evaluates a subscript in that name (`a[$(id)]` runs id)"


def prompt_expansion(ctx: Context) -> Iterable[Hit]:
    for c in ctx.script.constructs:
        if c.kind == "prompt-expansion":
            yield c.span, f"`{c.text}` expands a value as a prompt string, which runs " \
                          "command substitutions in it"


# Text that becomes `$(` or a backtick when bash evaluates a value: the characters
# themselves, and the escapes prompt expansion (`@P`) and `$'...'` decode.
_CODE_TEXT = lazy(r"\$\(|`|\\0?140|\\0?44|\\x(?:60|24)|\\u00(?:60|24)|"
                  r"\\U0000(?:60|24)")


def dormant_code(ctx: Context) -> Iterable[Hit]:
    """RF143: the command both evaluates a value as code and holds the text of a
    command that is not run where it stands (`x='a[$(git push)]'; (( x ))`). The
    sandbox holds it when the profile has deny or ask rules: that program is
    hidden from them."""
    if not (any(arithmetic(ctx)) or any(indirection(ctx)) or any(prompt_expansion(ctx))):
        return
    # where a live `$(`, backtick or `$((` starts (not stored text)
    live: set[int] = set()
    for c in ctx.script.constructs:
        if c.kind in ("command-substitution", "process-substitution", "arithmetic"):
            live.add(c.span[0])
            if c.text.startswith("`"):
                live.add(c.span[1] - 1)          # the closing backtick
    for m in _CODE_TEXT.finditer(ctx.script.source):
        if m.start() not in live:
            yield (m.start(), m.end()), f"`{m.group()}` is stored as text and may run " \
                                        "when a value is evaluated as code"


CHECKS = (
    ("RF140", arithmetic, constructs("arithmetic") + declarations +
     names({"let", "test", "[", "[[", "read", "printf", "mapfile", "readarray", "getopts",
            "wait", "unset"} | DECLARERS)),
    ("RF141", indirection, constructs("indirection")),
    ("RF142", prompt_expansion, constructs("prompt-expansion")),
    ("RF143", dormant_code, constructs("arithmetic", "indirection", "prompt-expansion") +
     declarations + names({"let", "test", "[", "[[", "read", "printf", "mapfile",
                           "readarray", "getopts", "wait"})),
)
