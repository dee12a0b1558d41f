"""How a shell or interpreter invocation gets its program (analysis of argv).

Used by the RF107 (shell -c), RF108 (interpreter inline code) and RF116
(program from stdin) checks. Option clusters are read letter by letter, as the
interpreters themselves do, so `-lc`, `-Ic`, `-ne` and `-pi -e` are found.
"""

from __future__ import annotations

import posixpath
import re

from . import data
from .analysis import Invocation
from .ir import Word
from .optscan import scan_args


def interp_mode(inv: Invocation) -> tuple[str, Word | None]:
    """How a shell/interpreter gets its program: 'inline', 'stdin', 'script', 'info',
    'dynamic' (an argument we cannot read could be inline code) or '' (not one)."""
    argv = inv.argv
    name = inv.name
    while name in ("busybox", "toybox") and len(argv) > 1 and argv[1].static:
        argv = argv[1:]
        name = argv[0].value
    found = data.interp_for(name)
    if found is None:
        w = _stdin_script(argv) if name in data.AWKS or name in data.SEDS else None
        return ("stdin", w) if w is not None else ("", None)
    base, row = found
    if row.data_operands:
        return stdin_mode(argv, row)
    i, n = 1, len(argv)
    if row.inline_subcommands:                 # deno eval '...'
        while i < n and argv[i].static and argv[i].value.startswith("-"):
            i += 1
        if i >= n:
            return "stdin", argv[0]
        if not argv[i].static:
            return "dynamic", argv[i]
        return ("inline" if argv[i].value in row.inline_subcommands else "script"), argv[i]
    while i < n:
        w = argv[i]
        if not w.static:
            return "dynamic", w
        v = w.value
        if v == "--":
            i += 1
            break
        if v in data.STDIN_PATHS:
            return "stdin", w
        if v in row.info:
            return "info", w
        if row.case_insensitive_prefix and v.startswith("-"):
            low = v.lower()
            if low in ("-c", "-e", "-ec", "-enc") or any(
                    p.startswith(low) and len(low) >= 4 for p in row.case_insensitive_prefix):
                return "inline", w
            if low in ("-f", "-file"):
                return "script", w
            i += 1
            continue
        if v.startswith("--"):
            opt, eq, val = v.partition("=")
            if opt in row.inline_long:
                return "inline", w
            if opt in row.value_long and _inline_value(val if eq else
                                                       argv[i + 1] if i + 1 < n else None):
                return "inline", w                 # node --import='data:text/javascript,...'
            i += 2 if (opt in row.value_long and "=" not in v) else 1
            continue
        if v[:1] == "-" or (row.kind == "shell" and v[:1] == "+" and len(v) > 1):
            letters = v[1:]
            k = 0
            consume_next = False
            while k < len(letters):
                ch = letters[k]
                if ch in row.inline_letters and v[0] == "-":
                    return "inline", w
                if row.kind == "shell" and ch == "s" and v[0] == "-":
                    return "stdin", w
                if ch in row.stop_letters:
                    if base == "python":            # `python -m timeit CODE`, `-m pdb`
                        return _module_mode(argv, i, letters[k + 1:], w)
                    return "script", w
                if ch in row.attached_letters:
                    if ch in "Mm" and base == "perl" and _PERL_CODE.search(letters[k + 1:]):
                        return "inline", w         # perl -M'strict;system(...)'
                    break
                if ch in row.value_letters:
                    consume_next = k == len(letters) - 1
                    break
                k += 1
                if ch in row.digit_letters:
                    # perl/ruby -0[octal] or -0xHEX, -l[octal]: the next letter is a switch
                    digits = "01234567"
                    if ch == "0" and letters[k:k + 1] == "x":
                        digits, k = "0123456789abcdefABCDEF", k + 1
                    while k < len(letters) and letters[k] in digits:
                        k += 1
            i += 2 if consume_next else 1
            continue
        break
    if i >= n:
        return "stdin", argv[0]
    if not argv[i].static:
        return "dynamic", argv[i]
    return ("stdin" if argv[i].value in data.STDIN_PATHS else "script"), argv[i]


_PERL_CODE = re.compile(r"[;(){}\s`]")     # -MModule=args is `use Module split...`

# python -m MODULE whose arguments are code or whose input is (Lib/timeit.py,
# Lib/pdb.py, Lib/code.py, Lib/asyncio/__main__.py): timeit's statements and
# -s/--setup run as Python; pdb runs -c/--command debugger commands (`!stmt` is
# Python) and then reads more from standard input; code and asyncio are consoles
# that read standard input. Value options: timeit -n -r -s -u, pdb -c.
_MODULE_VALUES = {"timeit": frozenset({"-n", "-r", "-s", "-u", "--number", "--repeat",
                                       "--setup", "--unit"}),
                  "pdb": frozenset({"-c", "--command"})}
_MODULE_CODE = {"timeit": frozenset({"-s", "--setup"}), "pdb": frozenset({"-c", "--command"})}
_CONSOLES = frozenset({"code", "asyncio", "pdb"})


def _module_mode(argv: tuple[Word, ...], i: int, attached: str,
                 w: Word) -> tuple[str, Word | None]:
    """How `python -m MODULE ARGS` gets its program (the module at argv[i], or
    attached to the -m cluster)."""
    k = i + 1
    if not attached:
        if k >= len(argv) or not argv[k].static:
            return "script", w
        attached, k = argv[k].value, k + 1
    values = _MODULE_VALUES.get(attached)
    if values is None:
        return ("stdin", w) if attached in _CONSOLES else ("script", w)
    while k < len(argv):
        a = argv[k]
        v = a.value
        if not a.static:
            return "dynamic", a
        if v in ("-h", "--help"):
            return "info", a
        if v == "--" or not v.startswith("-") or v == "-":
            if attached == "timeit":
                code = argv[k + 1] if v == "--" and k + 1 < len(argv) else a
                return "inline", code._replace(value=f"-m timeit {code.value}")
            break
        opt = v.partition("=")[0] if v.startswith("--") else v[:2]
        if opt in _MODULE_CODE[attached]:
            return "inline", a._replace(value=f"-m {attached} {v}")
        k += 2 if (v in values and "=" not in v) else 1
    return ("stdin", w) if attached in _CONSOLES else ("script", w)


def _inline_value(v) -> bool:
    """A module given as a data: URL is inline code (node --import, --loader, -r)."""
    text = v if isinstance(v, str) else (v.value if v is not None and v.static else "")
    return text.startswith("data:")


def _stdin_script(argv: tuple[Word, ...]) -> Word | None:
    """sed/awk `-f -`, `-nf -`, `-f /dev/stdin`, `--file=-`, `--fil=-`: the script is
    standard input (options read as getopt_long reads them: clusters, prefixes)."""
    name = posixpath.basename(argv[0].value)
    kind = "sed" if name in data.SEDS else "awk"
    spec = data.FILTERS[kind].opts
    opts_, _ = scan_args(argv[1:], data.Opts(spec.value | {"-f", "--file"}, spec.value2),
                         data.SCRIPT_LONGS[kind])
    for opt, v in opts_:
        if opt in ("-f", "--file") and v is not None and v.static and \
                v.value in data.STDIN_PATHS:
            return v
    return None


def stdin_mode(argv: tuple[Word, ...], row: data.Interp) -> tuple[str, Word | None]:
    """Programs whose operands are data (at, ed, gdb, sqlite3 DB, psql DBNAME): the
    program is standard input unless an option or an operand past the data ones
    gives it ('script': judged by the option-effects rows, effects_code.py)."""
    operands = 0
    i, n = 1, len(argv)
    while i < n:
        w = argv[i]
        v = w.value
        if not w.static:
            return "dynamic", w
        if v == "--":
            operands += n - i - 1
            break
        if v in row.info:
            return "info", w
        if v.startswith("-") and len(v) > 1:
            opt = v.split("=", 1)[0]
            if opt in row.inline_long:
                return "inline", w                 # mongosh --eval CODE
            if opt in row.script_opts or (len(v) > 2 and v[:2] in row.script_opts):
                return "script", w
            if "=" not in v and (opt in row.value_long or
                                 (len(v) == 2 and v[1] in row.value_letters)):
                i += 1
            i += 1
            continue
        if row.script_suffixes and v.endswith(row.script_suffixes):
            return "script", w                     # mongosh FILE.js
        operands += 1
        i += 1
    if 0 <= row.data_operands < operands:
        return "script", argv[0]
    return "stdin", argv[0]
