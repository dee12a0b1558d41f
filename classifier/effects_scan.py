"""The scanner for the option-effects table (classifier/effects_data.py).

``option_effects(inv)`` lists what an invocation's own options and operands
make it do beyond what its key names: write a file (RF131), delete files
(RF132) or run another program (RF133). Each effect carries a span, a message
and an effect string for the capability (``write:FILE``, ``delete:PATH``,
``run:PROG``). Writes to /dev/null, /dev/stdout and /dev/stderr are not writes
(as for redirections, RF303/RF304); a target decided at run time is.
"""

from __future__ import annotations

import re
from typing import NamedTuple

from . import data
from .analysis import Invocation, canonical_long, scan_args
from .effects_code import cmake_mode, judge, scan as scan_code
from .effects_data import INPLACE_AWK, MODULE_TOOLS, TOOLS, Row, Tool, python_module, tool_for
from .effects_git import checkout_paths as _checkout_paths
from .effects_tools import config_writes, judge_value, openssl_engine
from .ir import Span, Word


class Effect(NamedTuple):
    kind: str        # 'write' | 'delete' | 'run'
    span: Span
    message: str
    effect: str      # 'write:FILE' ...


def _harmless(w: Word) -> bool:
    return w.static and (w.value in data.HARMLESS_OUTPUTS or w.value == "-")


def _whole(inv: Invocation) -> Span:
    return inv.argv[0].span[0], inv.argv[-1].span[1]


def _label(inv: Invocation) -> str:
    if inv.name not in TOOLS and (mod := python_module(inv.argv)) is not None:
        return " ".join(w.value for w in inv.argv[:mod[1]])     # python -m cProfile
    at = inv.subcommand_at if inv.name == "git" and inv.subcommand_at > 1 else 1
    return " ".join(w.value for w in inv.argv[:at])


def _emit(out: list[Effect], inv: Invocation, row: Row, opt: str, value: Word | None,
          operands: list[Word]) -> None:
    prog = _label(inv)
    shown = f"`{prog} {opt}`" if opt else f"`{prog}`"
    if row.target.startswith("judge:"):
        # a value read by what it says (pytest -p no:x, -o KEY=V, --rootdir=.)
        found = judge_value(row.target[6:], value.value) if value is not None and \
            value.static else [(row.kind, f"{row.why} (decided at run time)")]
        for kind, why in found:
            what = value.raw if value is not None else "?"
            target = value.value if value is not None else "?"
            if row.target == "judge:pytest-ini" and "=" in target:
                target = target.partition("=")[2]            # -o cache_dir=DIR
            out.append(Effect(kind, value.span if value is not None else _whole(inv),
                              f"{shown} {why}: `{what}`", f"{kind}:{target}"))
        return
    if row.target == "operands" and row.kind == "run":
        if operands:                         # gpg-agent --daemon COMMAND
            out.append(Effect("run", (operands[0].span[0], operands[-1].span[1]),
                              f"{shown} {row.why}: `{operands[0].raw}`",
                              f"run:{operands[0].value}"))
        return
    if row.target in ("value", "input"):
        if value is None:
            out.append(Effect(row.kind, _whole(inv), f"{shown} {row.why}", f"{row.kind}:?"))
        elif row.kind == "run" or not _harmless(value) or \
                row.target == "input" and value.value == "-":      # `curl -K -`: stdin
            out.append(Effect(row.kind, value.span, f"{shown} {row.why} `{value.raw}`",
                              f"{row.kind}:{value.value if value.static else value.raw}"))
    elif row.target == "operands":
        files = [w for w in operands if not _harmless(w)]
        names = ", ".join(f"`{w.raw}`" for w in files) or "its input files"
        span = (files[0].span[0], files[-1].span[1]) if files else _whole(inv)
        out.append(Effect(row.kind, span, f"{shown} {row.why}: {names}",
                          f"{row.kind}:" + (",".join(w.value for w in files) or "?")))
    else:   # 'self': of the tool's own choosing (find -delete: below its starting points)
        if value is not None:
            what = value.value if value.static else value.raw
        elif row.kind == "delete":
            what = ",".join(w.value for w in operands) or "."
        else:
            what = "?"
        out.append(Effect(row.kind, _whole(inv), f"{shown} {row.why}", f"{row.kind}:{what}"))


def _dynamic_options(inv: Invocation, tool: Tool, args: tuple[Word, ...]) -> list[Effect]:
    """Options in words bash decides at run time (`--output=$HOME/.bashrc`,
    `-o"$F"`): the option part is literal, so it still counts. scan_args reads
    such a word as an operand, because its final text is unknown."""
    out: list[Effect] = []
    longs = tool.longs | {o for r in tool.rows for o in r.options if o.startswith("--")}
    for w in args:
        raw = w.raw
        if w.static or not raw.startswith("-"):
            continue
        head = re.match(r"-(-[A-Za-z0-9][A-Za-z0-9-]*|[A-Za-z0-9]+)", raw)
        if head is None:
            continue
        text = head.group(0)
        names = [canonical_long(text, longs)] if text.startswith("--") else []
        for letter in text[1:] if not names else "":
            names.append("-" + letter)
            if "-" + letter in tool.value:
                break
        for row in tool.rows:
            hit = next((n for n in names if n in row.options), None)
            if hit is not None:
                out.append(Effect(row.kind, w.span, f"`{_label(inv)} {hit}` {row.why} "
                                  f"`{raw}` (decided at run time)", f"{row.kind}:{raw}"))
    return out


def _options_part(args: tuple[Word, ...], tool: Tool) -> tuple[Word, ...]:
    """The words where the tool still reads options (see Tool.options_until)."""
    if tool.options_until < 0:
        return args
    seen, i = 0, 0
    while i < len(args):
        v = args[i].value
        if v == "--":
            return args
        if args[i].static and v.startswith("-") and v != "-":
            i += 2 if v in tool.value else 1
            continue
        if seen == tool.options_until:
            return args[:i + 1]
        seen += 1
        i += 1
    return args


def _getopt(inv: Invocation, tool: Tool, args: tuple[Word, ...]) -> list[Effect]:
    args = _options_part(args, tool)
    opts, operands = scan_args(args, _spec(tool), tool.longs)
    if any(o in tool.stop for o, _ in opts):
        return []
    out: list[Effect] = _dynamic_options(inv, tool, args)
    for row in tool.rows:
        if not row.options and row.target != "operand1":
            _whole_row(out, inv, row, operands, opts)
            continue
        if row.target == "operand1":
            files = [w for w in operands]
            if len(files) > 1 and not _harmless(files[1]):
                out.append(Effect(row.kind, files[1].span,
                                  f"`{_label(inv)}` {row.why} `{files[1].raw}`",
                                  f"{row.kind}:{files[1].value}"))
            continue
        for opt, value in opts:
            if opt in row.options:
                if row.target == "operands" and inv.name in ("sed", "gsed", "yq"):
                    operands = _sed_files(inv, operands, opts)
                _emit(out, inv, row, opt, value, operands)
                if row.target not in ("value", "input"):
                    break
    return out


def _whole_row(out: list[Effect], inv: Invocation, row: Row, operands: list[Word],
               opts: list) -> None:
    """Rows without options (effects_git.py): every use (``self``), a first
    operand (``sub:A,B``), or operands that name files (``paths``)."""
    if row.target.startswith("sub:"):
        if not operands:
            return
        first = operands[0]
        if first.static and first.value not in row.target[4:].split(","):
            return
        out.append(Effect(row.kind, first.span, f"`{_label(inv)} {first.raw}` {row.why}",
                          f"{row.kind}:{first.value if first.static else first.raw}"))
    elif row.target == "paths":
        files = _checkout_paths(inv, operands)
        if files:
            out.append(Effect(row.kind, (files[0].span[0], files[-1].span[1]),
                              f"`{_label(inv)} {' '.join(w.raw for w in files)}` {row.why}",
                              f"{row.kind}:" + ",".join(w.value for w in files)))
    else:
        what = ",".join(w.value for w in operands) or "."
        out.append(Effect(row.kind, _whole(inv), f"`{_label(inv)}` {row.why}",
                          f"{row.kind}:{what}"))


_SPECS: dict[int, data.Opts] = {}


def _spec(tool: Tool) -> data.Opts:
    spec = _SPECS.get(id(tool))
    if spec is None:
        spec = _SPECS[id(tool)] = data.Opts(tool.value)   # tools live as long as TOOLS
    return spec


def _sed_files(inv: Invocation, operands: list[Word], opts) -> list[Word]:
    """sed's files: every operand, except the script when no -e/-f gives it."""
    if any(o in ("-e", "--expression", "-f", "--file", "--from-file") for o, _ in opts):
        return operands
    return operands[1:]


def _find(inv: Invocation, tool: Tool) -> list[Effect]:
    out: list[Effect] = []
    argv = inv.argv
    starts = []
    i = 1
    while i < len(argv) and not (argv[i].static and argv[i].value[:1] in ("-", "(", "!")):
        starts.append(argv[i])
        i += 1
    skip_exec = False
    while i < len(argv):
        w = argv[i]
        v = w.value if w.static else ""
        if skip_exec:                      # -exec ... ; belongs to the launched program
            skip_exec = v not in (";", "+")
        elif v in data.FIND_EXEC:
            skip_exec = True
        else:
            row = next((r for r in tool.rows if v in r.options), None)
            if row is not None:
                value = argv[i + 1] if row.target == "value" and i + 1 < len(argv) else None
                _emit(out, inv, row, v, value, starts)
            if v in tool.value:               # `-name -delete` is a pattern, not -delete
                i += 2 if v == "-fprintf" else 1
        i += 1
    return out


def _xxd(inv: Invocation, tool: Tool) -> list[Effect]:
    operands: list[Word] = []
    argv, i = inv.argv, 1
    while i < len(argv):
        w = argv[i]
        v = w.value
        if w.static and v in tool.stop:
            return []
        if w.static and v.startswith("-") and len(v) > 1 and not operands:
            if v in tool.value:
                i += 1
            i += 1
            continue
        operands.append(w)
        i += 1
    return _getopt_operand1(inv, tool, operands)


def _getopt_operand1(inv: Invocation, tool: Tool, operands: list[Word]) -> list[Effect]:
    row = tool.rows[0]
    if len(operands) > 1 and not _harmless(operands[1]):
        return [Effect(row.kind, operands[1].span, f"`{_label(inv)}` {row.why} "
                       f"`{operands[1].raw}`", f"{row.kind}:{operands[1].value}")]
    return []


def _prefixed(inv: Invocation, tool: Tool) -> list[Effect]:
    """dd `of=FILE`; socat addresses `EXEC:cmd`, `CREATE:file` (case-insensitive)."""
    out: list[Effect] = []
    sep = "=" if tool.style == "operands" else ":"
    for w in inv.argv[1:]:
        if not w.static:
            if tool.style == "socat":      # an address decided at run time may be EXEC:
                out.append(Effect("run", w.span, f"`{inv.name}` gets an address decided at "
                                  "run time, which may run a program", f"run:{w.raw}"))
            continue
        head, found, rest = w.value.partition(sep)
        if not found:
            head, found, rest = w.value.partition(",")
        head = head.lower()
        for row in tool.rows:
            if found and head in row.target.split(":", 1)[1].split(","):
                if row.kind == "write" and rest.split(",")[0] in data.HARMLESS_OUTPUTS:
                    continue
                out.append(Effect(row.kind, w.span, f"`{inv.name} {w.value}` {row.why}",
                                  f"{row.kind}:{rest}"))
    return out


def _code(inv: Invocation, tool: Tool) -> list[Effect]:
    """Values that are code for the program (effects_code.py): judged by its language."""
    opts, operands = scan_code(inv.argv[1:], tool)
    if any(o in tool.stop for o, _ in opts):
        return []
    out: list[Effect] = []
    if inv.name == "cmake":
        found = cmake_mode(inv.argv[1:])
        if found:
            script = next((v.value for o, v in opts if o in ("-P", "-C") and v is not None), "")
            out.append(Effect(found[0], _whole(inv), f"`cmake` {found[1]}",
                              f"{found[0]}:" + (script or ",".join(w.value
                                                                   for w in operands[1:]))))
        return out
    whole = openssl_engine(inv) if inv.name == "openssl" else \
        config_writes(inv, scan_args) if inv.name in ("npm", "pnpm", "yarn") else ()
    for kind, span, why, target in whole:
        out.append(Effect(kind, span, f"`{_label(inv)}` {why}" if kind == "run" else why,
                          f"{kind}:{target}"))
    for row in tool.rows:
        lang = row.target.split(":")[1]
        if row.target.startswith("code-operands:"):
            words = [(None, w) for w in operands[int(row.target.split(":")[2]):]]
        else:
            words = [(o, v) for o, v in opts if o in row.options]
        for opt, w in words:
            label = f"`{_label(inv)} {opt}`" if opt else f"`{_label(inv)}`"
            if w is None:
                out.append(Effect("run", _whole(inv), f"{label} {row.why}", "run:?"))
                continue
            if lang == "path" and _harmless(w):
                continue                     # `-out /dev/null`
            found = (judge(lang, w.value) if lang in _CODE_LANGS else
                     judge_value(lang, w.value)) if w.static else \
                [("run", "gets code decided at run time")]
            for kind, why in found:
                out.append(Effect(kind, w.span, f"{label} {why}: `{w.raw}`",
                                  f"{kind}:{w.value if w.static else w.raw}"))
    return out


_CODE_LANGS = frozenset({"make", "file", "stdin-makefile", "cmake-e", "path", "makevar", "gdb",
                         "sqlite", "mysql", "psql"})


def _awk_inplace(inv: Invocation) -> list[Effect]:
    opts, operands = scan_args(inv.argv[1:], data.WRITERS["awk"].opts,
                               data.WRITERS["awk"].longs)
    for opt, value in opts:
        if opt in ("-i", "--include") and value is not None and value.value in (
                "inplace", "inplace.awk") or (value is not None and not value.static
                                              and opt in ("-i", "--include")):
            files = operands[1:] if not any(o in ("-e", "--source", "-f", "--file")
                                            for o, _ in opts) else operands
            names = ", ".join(f"`{w.raw}`" for w in files) or "its input files"
            return [Effect("write", value.span, f"`{inv.name} {opt} {value.raw}` edits the "
                           f"files in place: {names}",
                           "write:" + (",".join(w.value for w in files) or "?"))]
    return []


# The three checks (RF131-RF133) and the capability builder all ask for the same
# invocation's effects: computed once. The entry keeps the invocation alive, so
# its id cannot be reused while it is cached.
_MEMO: dict[int, tuple[Invocation, list[Effect]]] = {}


def option_effects(inv: Invocation) -> list[Effect]:
    """Every write, delete and launch this invocation's own options cause."""
    hit = _MEMO.get(id(inv))
    if hit is not None and hit[0] is inv:
        return hit[1]
    if len(_MEMO) > 64:
        _MEMO.clear()
    out = _MEMO[id(inv)] = (inv, _effects(inv))
    return out[1]


def _effects(inv: Invocation) -> list[Effect]:
    name = inv.name
    if not inv.argv or not name:
        return []
    if name in INPLACE_AWK:
        return _awk_inplace(inv)
    if name == "git":
        if inv.subcommand_at < 2:
            return []
        tool = TOOLS.get("git " + inv.argv[inv.subcommand_at - 1].value)
        sub = "git"
        if tool is None:
            return []
    else:
        tool, sub = tool_for(name), ""
        if tool is None:
            mod = python_module(inv.argv)       # python -m pytest, -m cProfile
            tool = (TOOLS["pytest"] if mod[0] in ("pytest", "py.test") else
                    MODULE_TOOLS.get(mod[0])) if mod is not None else None
            return _getopt(inv, tool, inv.argv[mod[1]:]) if tool is not None else []
    if tool.style == "find":
        return _find(inv, tool)
    if tool.style == "xxd":
        return _xxd(inv, tool)
    if tool.style in ("operands", "socat"):
        return _prefixed(inv, tool)
    if tool.style == "code":
        return _code(inv, tool)
    args = inv.argv[inv.subcommand_at:] if sub else inv.argv[1:]
    return _getopt(inv, tool, args)
