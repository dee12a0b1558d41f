"""Every variable a command assigns, however it is spelled (issue 20b).

RF122 (a variable that changes what runs) and RF135 (a variable that moves
ringfence's state) judge names. An assignment is not only ``NAME=value``: a
``for``/``select`` loop variable (the parser lowers it to an assignment of a
dynamic value), ``export NAME``/``declare -x NAME``/``local NAME``/``readonly``
without a value (it exports or pins a value set earlier, maybe by a loop,
``read`` or ``printf -v``), ``export "NAME=v"`` (a quoted word), the builtins
that assign the names they are given (``read``, ``printf -v``, ``mapfile``,
``readarray``, ``getopts``), ``let`` and arithmetic (``(( NAME=1 ))``,
``$(( NAME++ ))``, ``for ((NAME=0;;))``) and ``${NAME:=value}``. A name that is
not static (``export $n``, ``read "$n"``) is yielded as ``?``: it can be any name.
"""

from __future__ import annotations

from typing import Iterable

from ringfence.rfcore.lazyre import lazy

from . import data
from .ir import Span, Word
from .optscan import scan_args

_ARITH_ASSIGN = lazy(r"([A-Za-z_]\w*)\s*(?:\[[^\]]*\])?\s*(?:[-+*/%&|^]|<<|>>)?=(?!=)"
                     r"|(?:\+\+|--)\s*([A-Za-z_]\w*)|([A-Za-z_]\w*)\s*(?:\+\+|--)")
_NAME = lazy(r"[A-Za-z_]\w*")
_DEFAULT = lazy(r"\$\{([A-Za-z_]\w*):?=")
UNKNOWN = "?"


def builtin_names(inv) -> Iterable[Word]:
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


def _arith(text: str) -> Iterable[str]:
    for m in _ARITH_ASSIGN.finditer(text):
        yield m.group(1) or m.group(2) or m.group(3)


def other_assignments(script, invocations) -> Iterable[tuple[Span, str, str]]:
    """(span, name, how) for each assignment that is not a parsed ``NAME=value``
    (those are ``Command.assignments``, the loop variable included)."""
    for cmd in script.commands:
        if cmd.kind != "declaration":
            continue
        flags = "".join(w.value[1:] for w in cmd.words[1:] if w.static and
                        w.value.startswith(("-", "+")))
        if "p" in flags or "f" in flags or "F" in flags:
            continue        # prints the variables (or names functions): assigns nothing
        verb = cmd.words[0].value if cmd.words else "declare"
        for w in cmd.words[1:]:
            if w.static and w.value.startswith(("-", "+")):
                continue
            name = w.value.split("=", 1)[0].split("[", 1)[0] if w.static else UNKNOWN
            yield w.span, name if _NAME.fullmatch(name) else UNKNOWN, f"`{verb}`"
    for inv in invocations:
        for w in builtin_names(inv):
            name = w.value.split("[", 1)[0] if w.static else UNKNOWN     # `a[i]` assigns a
            yield w.span, name if _NAME.fullmatch(name) else UNKNOWN, f"`{inv.name}`"
        if inv.name == "let":
            for w in inv.argv[1:]:
                for name in (_arith(w.value) if w.static else (UNKNOWN,)):
                    yield w.span, name, "`let`"
    for m in _DEFAULT.finditer(script.source):     # anywhere, a heredoc body included
        yield (m.start(), m.end()), m.group(1), "`${NAME:=value}`"
    for c in script.constructs:
        if c.kind == "arithmetic":
            for name in _arith(c.text):
                yield c.span, name, "arithmetic"


__all__ = ["UNKNOWN", "builtin_names", "other_assignments"]
