"""Is a piece of text, evaluated arithmetically by bash, free of variables?

bash's arithmetic evaluation (``(( ))``, ``$(( ))``, ``let``, ``declare -i``
variables, indexed-array subscripts, substring offsets, the numeric operators
of ``[[ ]]``) treats every name as a variable and evaluates that variable's
*value* as an expression again, and a value such as ``a[$(id)]`` runs ``id``
(bash 5.2, checked). So only text made of literal integers and operators is
safe: decimal, octal and ``0x`` hex numbers, ``BASE#DIGITS`` (bash(1)
"ARITHMETIC EVALUATION"), operators, parentheses and blanks, plus the special
parameters whose value bash always sets to a number (``$#``, ``$?``, ``$$``,
``$!``, ``${#name}``). Anything else, a name, ``$x``, ``$1``, a command
substitution, fails the check: whether it is safe is decided at run time.

Quoting does not make text literal or not: quote characters are removed
before the check (``"1"`` is 1, ``'x'`` is the variable x).
"""

from __future__ import annotations

import re

from ringfence.rfcore.lazyre import lazy

_TOKEN = lazy(r"""
    \s+
  | \d+\#[0-9A-Za-z@_]+          # BASE#DIGITS (bases up to 64)
  | 0[xX][0-9A-Fa-f]+            # hex
  | \d+                          # decimal / octal
  | \$[#?$!]                     # special parameters that are always numbers
  | \$\{[#?$!]\}
  | \$\{\#(?:[A-Za-z_]\w*|\d+|[@*])(?:\[[@*]\])?\}    # lengths: ${#x} ${#a[@]} ${#1}
  | \$\(\( | \$\[                # a nested arithmetic expansion (judged on its own)
  | [-+*/%<>=!&|^~?:,()\[\]]     # operators, parentheses
  | \$?(?P<name>[A-Za-z_]\w*) | \$\{(?P<braced>[A-Za-z_]\w*)\}   # a name: see `known`
""", re.VERBOSE)
# `NAME = EXPR` at the start of a segment (not `==`): bash evaluates EXPR, then
# NAME holds a number, whatever it held before.
_ASSIGN = lazy(r"\s*([A-Za-z_]\w*)\s*=(?!=)")
_QUOTES = str.maketrans("", "", "\"'\\")


def literal(text: str, known: frozenset[str] | set[str] = frozenset(),
            used: set[str] | None = None) -> bool:
    """True when ``text`` holds only literal integers, operators and blanks (and
    names in ``known``, which hold numbers by then; those read go into ``used``)."""
    s = text.translate(_QUOTES)
    pos, n = 0, len(s)
    match = _TOKEN.match
    while pos < n:
        m = match(s, pos)
        if m is None:
            return False
        name = m.group("name") or m.group("braced")
        if name is not None:
            if name not in known:
                return False
            if used is not None:
                used.add(name)
        pos = m.end()
    return True


def _segments(text: str) -> list[str]:
    """Split at `;` and at `,` outside parentheses: the parts bash evaluates in order."""
    out, depth, start = [], 0, 0
    for i, ch in enumerate(text):
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
        elif ch == ";" or (ch == "," and depth == 0):
            out.append(text[start:i])
            start = i + 1
    out.append(text[start:])
    return out


def assigned_literal(parts: list[str]) -> tuple[bool, frozenset[str]]:
    """Like :func:`literal` over expressions evaluated in order (`let a=1 b=a+1`,
    the three parts of `for ((i=0; i<3; i++))`), where a part `NAME = EXPR` with
    a literal EXPR makes NAME a number for the parts after it (bash assigns the
    result, whatever NAME held: checked against bash 5.2). Returns (literal?,
    names assigned that way and read afterwards), so the caller can check that
    nothing else in the script gives those names another value in between."""
    known: set[str] = set()
    used: set[str] = set()
    for part in parts:
        for seg in _segments(part.translate(_QUOTES)):
            m = _ASSIGN.match(seg)
            if m is not None:
                if not literal(seg[m.end():], known, used):
                    return False, frozenset(used)
                known.add(m.group(1))
            elif not literal(seg, known, used):
                return False, frozenset(used)
    return True, frozenset(used)


def subscript_literal(name: str) -> bool:
    """``NAME[SUB]`` or ``NAME[SUB]=value``: is the subscript (if any) literal?"""
    i = name.find("[")
    if i < 0:
        return True
    j = name.find("]=")
    if j < 0:
        j = name.rfind("]")
    if j < i:
        return False
    sub = name[i + 1:j]
    return sub.strip() in ("@", "*") or literal(sub)


__all__ = ["assigned_literal", "literal", "subscript_literal"]
