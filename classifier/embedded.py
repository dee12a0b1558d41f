"""Scanners for programs embedded in arguments: sed scripts and awk programs.

They answer one question conservatively: can this program execute commands
(``exec``), touch files (``impure``: write, read extra files), or is it a pure
stdin->stdout filter (``ok``)? Anything we cannot follow is ``unknown``, which
callers treat like ``exec`` (fail closed).
"""

from __future__ import annotations

import re

from ringfence.rfcore.lazyre import lazy

OK, IMPURE, UNKNOWN, EXEC = 0, 1, 2, 3
NAMES = {OK: "ok", IMPURE: "impure", UNKNOWN: "unknown", EXEC: "exec"}

_SED_SIMPLE = frozenset("pdDnNgGhHxlz=FP")
_SED_FLAGS = frozenset("gpiImM0123456789")


def _skip_delimited(s: str, i: int, delim: str) -> int:
    """Index just after the next unescaped ``delim`` at or after ``i``; -1 if none."""
    n = len(s)
    while i < n:
        c = s[i]
        if c == "\\":
            i += 2
            continue
        if c == delim:
            return i + 1
        if c == "\n" and delim != "\n":
            return -1
        i += 1
    return -1


def _sed_address(s: str, i: int) -> int:
    n = len(s)
    if i < n and (s[i].isdigit() or s[i] == "$"):
        i += 1
        while i < n and (s[i].isdigit() or s[i] == "~"):
            i += 1
    elif i < n and s[i] == "/":
        i = _skip_delimited(s, i + 1, "/")
    elif i + 1 < n and s[i] == "\\":
        i = _skip_delimited(s, i + 2, s[i + 1])
    else:
        return i
    if i < 0:
        return -1
    while i < n and s[i] in "IM":          # regex address flags
        i += 1
    return i


def sed_script(s: str) -> int:
    """Classify a sed script (GNU syntax)."""
    return _sed_scan(s, None)


def sed_writes(s: str) -> list[str]:
    """The files a sed script writes: the `w FILE`/`W FILE` commands and the
    `w FILE` flag of `s` (GNU sed reads FILE to the end of the line, `;` and
    `}` included). A script the scanner cannot follow yields nothing here;
    the caller reports it as unknown (RF111)."""
    out: list[str] = []
    _sed_scan(s, out)
    return out


def sed_reads(s: str) -> list[str] | None:
    """The files a sed script reads besides its input: the `r FILE`/`R FILE`
    commands (GNU sed reads FILE to the end of the line). None when the scanner
    cannot follow the script."""
    out: list[str] = []
    return None if _sed_scan(s, None, out) == UNKNOWN else out


def _file_name(s: str, i: int, writes: list[str] | None) -> int:
    """Skip a `w`/`r` file name (to the end of the line); record it for a write."""
    j = s.find("\n", i)
    j = len(s) if j < 0 else j
    if writes is not None:
        writes.append(s[i:j].lstrip(" \t"))
    return j


def _sed_scan(s: str, writes: list[str] | None, reads: list[str] | None = None) -> int:
    worst = OK
    i, n = 0, len(s)
    while i < n:
        c = s[i]
        if c in " \t\n;{}":
            i += 1
            continue
        if c == "#":
            i = s.find("\n", i)
            i = n if i < 0 else i
            continue
        i = _sed_address(s, i)
        if i >= 0 and i < n and s[i] == ",":
            i += 1
            if i < n and s[i] in "+~":
                i += 1
            i = _sed_address(s, i)
        if i < 0:
            return UNKNOWN
        while i < n and s[i] in " \t!":
            i += 1
        if i >= n:
            return UNKNOWN
        c = s[i]
        i += 1
        if c in _SED_SIMPLE:
            continue
        if c in "qQlL":
            while i < n and s[i].isdigit():
                i += 1
        elif c in ":bTt":
            while i < n and s[i] not in ";\n":
                i += 1
        elif c == "}" or c == "{":
            continue
        elif c in "aic":
            j = s.find("\n", i)
            i = n if j < 0 else j + 1
            if s[i - 2:i] == "\\\n":           # a\<newline>text
                j = s.find("\n", i)
                i = n if j < 0 else j + 1
        elif c == "s" or c == "y":
            if i >= n or s[i] in "\n\\":
                return UNKNOWN
            d = s[i]
            i = _skip_delimited(s, i + 1, d)
            if i < 0:
                return UNKNOWN
            i = _skip_delimited(s, i, d)
            if i < 0:
                return UNKNOWN
            if c == "s":
                while i < n and s[i] not in " \t;\n}":
                    f = s[i]
                    if f == "e":
                        return EXEC
                    if f == "w":                 # s///w FILE writes the file
                        worst = max(worst, IMPURE)
                        i = _file_name(s, i + 1, writes)
                        break
                    if f not in _SED_FLAGS:
                        return UNKNOWN
                    i += 1
        elif c == "e":
            return EXEC
        elif c in "wWrR":
            worst = max(worst, IMPURE)
            i = _file_name(s, i, writes if c in "wW" else reads)
        else:
            return UNKNOWN
    return worst


_AWK_STRING = lazy(r'"(?:[^"\\\n]|\\.)*"')
_AWK_WORD = lazy(r"[A-Za-z_][A-Za-z0-9_]*")
_REGEX_BEFORE = frozenset("(,{};!~&|=:?\n[")
_REGEX_KEYWORDS = frozenset({"print", "printf", "return", "if", "while", "in", "case"})


_LITERAL = lazy(r'"\d+"')       # a string literal, kept aside by _awk_text


def _strip_awk(prog: str, literals: list[str]) -> str | None:
    """Blank out string and regex literals (their contents cannot run anything).

    Each string literal becomes ``"N"``, its text kept as ``literals[N]``, so
    an output redirection's target can still be read (`print > "/dev/stderr"`)."""
    def keep(m: re.Match) -> str:
        literals.append(m.group()[1:-1])
        return f'"{len(literals) - 1}"'

    prog = _AWK_STRING.sub(keep, prog)
    out: list[str] = []
    i, n = 0, len(prog)
    last = ""          # previous significant character
    last_word = ""
    while i < n:
        c = prog[i]
        if c == "#":                      # comment to end of line
            j = prog.find("\n", i)
            i = n if j < 0 else j
            continue
        if c == "/" and (last == "" or last in _REGEX_BEFORE or last_word in _REGEX_KEYWORDS):
            j = _skip_delimited(prog, i + 1, "/")
            if j < 0:
                return None
            out.append("//")
            i = j
            last, last_word = "/", ""
            continue
        m = _AWK_WORD.match(prog, i)
        if m:
            out.append(m.group())
            last, last_word = "a", m.group()
            i = m.end()
            continue
        out.append(c)
        if not c.isspace():
            last, last_word = c, ""
        i += 1
    return "".join(out)


def _awk_text(prog: str) -> tuple[str, list[str]] | None:
    """(program with literals blanked to ``"N"``, literal texts); None if unreadable."""
    literals: list[str] = []
    text = _strip_awk(prog, literals)
    if text is None or '"' in _LITERAL.sub("", text):
        return None                       # an unterminated string: we cannot follow it
    return text, literals


def _print_redirect(stmt: str, start: int) -> int:
    """Index of the output redirection `>` of a print statement, -1 if none.
    A `>` inside parentheses is a comparison (`print (a > b)`), not a redirection."""
    depth = 0
    for k in range(start, len(stmt)):
        c = stmt[k]
        if c == "(":
            depth += 1
        elif c == ")":
            depth -= 1
        elif c == ">" and depth <= 0:
            return k
    return -1


def awk_writes(prog: str) -> list[str]:
    """The files an awk program's `print`/`printf` redirections (`>`, `>>`) write:
    a string literal's text, else the target expression's text, which is decided
    at run time (`print > $2 ".txt"`). An unreadable program yields nothing here;
    the caller reports it as unverifiable (RF110)."""
    got = _awk_text(prog)
    if got is None:
        return []
    text, literals = got
    out: list[str] = []
    for stmt in re.split(r"[;{}\n]", text):
        m = re.search(r"\bprintf?\b", stmt)
        k = _print_redirect(stmt, m.end()) if m else -1
        if k < 0:
            continue
        target = stmt[k:].lstrip(">").strip()
        if _LITERAL.fullmatch(target):
            out.append(literals[int(target[1:-1])])
        else:
            out.append(_LITERAL.sub(lambda x: f'"{literals[int(x.group()[1:-1])]}"', target))
    return out


def awk_program(prog: str, filter_only: bool = False) -> int:
    """Classify an awk program: system(), pipes and |& run commands; > and getline touch files.

    ``filter_only``: also call ENVIRON impure (printing the environment is not
    decoration, like `echo $HOME` is not a helper)."""
    got = _awk_text(prog)
    if got is None:
        return UNKNOWN
    text = _LITERAL.sub('""', got[0])
    words = set(_AWK_WORD.findall(text))
    if "system" in words or "|" in text.replace("||", ""):
        return EXEC
    if "@" in text:                       # gawk @include / @load pull in other code
        return UNKNOWN
    worst = OK
    if "getline" in words or (filter_only and "ENVIRON" in words):
        worst = IMPURE
    for stmt in re.split(r"[;{}\n]", text):
        m = re.search(r"\bprintf?\b", stmt)
        if m and ">" in stmt[m.end():]:
            worst = IMPURE
    return worst
