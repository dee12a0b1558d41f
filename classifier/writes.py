"""Files a program writes through its own options, operands or embedded program.

A redirection (`> f`, RF105) is not the only way a command string writes a
file: `sort -o f`, `uniq in out`, `tee f`, `sed 'w f'`, `awk '{print > "f"}'`,
`split` and `csplit` write files too, and they are tools a person approves as
read-only filters. Read by the RF130 check (each write is one-time) and by the
RF305 filter-decoration check (a stage that writes is never stripped).

Writes to /dev/null, /dev/stdout and /dev/stderr are not writes, exactly as for
redirections (RF303/RF304). A target decided at run time is a write: it may
name any file.
"""

from __future__ import annotations

from . import data
from .analysis import Invocation, scan_args
from .embedded import awk_program, awk_writes, sed_script, sed_writes, UNKNOWN
from .ir import Span, Word

Write = tuple[Span, str]          # (span, message)


def _harmless(w: Word | None) -> bool:
    """Not a file write: /dev/null, /dev/stdout, /dev/stderr, or a process
    substitution (`tee >(wc -l)` writes a pipe; RF102 already forces one-time)."""
    if w is None:
        return False
    if w.raw.startswith((">(", "<(")) and w.raw.endswith(")"):
        return True
    return w.static and w.value in data.HARMLESS_OUTPUTS


def _span(inv: Invocation) -> Span:
    return inv.argv[0].span[0], inv.argv[-1].span[1]


def program_words(inv: Invocation, spec: data.Filter) -> list[Word]:
    """The program texts of a sed or awk invocation: every -e/--expression
    (--source) value, else the first operand unless a program file is given."""
    opts, operands = scan_args(inv.argv[1:], spec.opts, spec.deny | spec.operand_opts)
    progs = [v for o, v in opts if o in spec.operand_opts and v is not None]
    awk = spec.checker == "awk"
    from_file = any(o in ("-f", "--file") or awk and (o in ("-E", "--exec") or (
        o == "-W" and v is not None and _w_option(v) in ("file", "text"))) for o, v in opts)
    if not progs and not from_file and operands:
        progs.append(operands[0])
    return progs


# awk -W NAME[=VALUE]: mawk(1) takes any prefix of its -W names (`-W e FILE` is
# `-W exec FILE`), gawk(1) reads `-W NAME` as the long option --NAME
_AWK_W = {"exec": "file", "file": "file", "source": "text", "include": "lib", "load": "lib"}
_FILE_OPTS = {"sed": ("-f", "--file"),
              "awk": ("-f", "--file", "-E", "--exec", "-i", "--include")}   # gawk -l: RF113
_FILE_SPECS: dict[str, data.Opts] = {}


def _w_option(w: Word) -> str:
    """What an awk `-W` value is: 'file' (the program is in a file), 'text' (the
    program follows), 'lib' (code to include or load), or '' (a setting)."""
    if not w.static:
        return "file"
    name = w.value.partition("=")[0].lower()
    return next((k for n, k in _AWK_W.items() if name and n.startswith(name)), "")


def script_files(inv: Invocation, spec: data.Filter) -> list[tuple[Word | None, str]]:
    """(file word, why) for each program text a sed or awk invocation reads from a
    file it names (`sed -f F`, `awk -f F`, gawk `-E F`/`-i F`, mawk `-W
    exec F`). Standard input (`-f -`) is not listed: it is RF116's; gawk `-l LIB` is
    RF113's."""
    kind = "awk" if spec.checker == "awk" else "sed"
    fspec = _FILE_SPECS.get(kind)
    if fspec is None:
        fspec = _FILE_SPECS[kind] = data.Opts(spec.opts.value | set(_FILE_OPTS[kind]),
                                              spec.opts.value2)
    opts, operands = scan_args(inv.argv[1:], fspec, data.SCRIPT_LONGS[kind])
    out: list[tuple[Word | None, str]] = []
    for opt, v in opts:
        if opt not in _FILE_OPTS[kind] and not (kind == "awk" and opt == "-W"):
            continue
        if v is not None and v.static and v.value in data.STDIN_PATHS:
            continue
        if opt in ("-f", "--file", "-E", "--exec"):
            out.append((v, "reads its program from the file"))
        elif opt in ("-i", "--include"):
            if not (v is not None and v.static and v.value in ("inplace", "inplace.awk")):
                out.append((v, "includes the source file"))
        elif v is not None and (what := _w_option(v)):
            file = v._replace(value=v.value.partition("=")[2], raw=v.raw.partition("=")[2]) \
                if "=" in v.value else (operands[0] if what == "file" and operands else v)
            out.append((file, {"file": "reads its program from the file",
                               "text": "takes a program text given as a -W value",
                               "lib": "includes or loads the code in"}[what]))
    return out


def _embedded(inv: Invocation) -> list[Write]:
    """Writes inside a sed script or an awk program. A program the scanners
    cannot follow is RF110/RF111's business (unverifiable), not reported here."""
    is_sed = inv.name in data.SEDS
    spec = data.FILTERS["sed" if is_sed else "awk"]
    out: list[Write] = []
    for w in program_words(inv, spec):
        if not w.static:
            continue
        if is_sed:
            targets = sed_writes(w.value) if sed_script(w.value) != UNKNOWN else []
        else:
            targets = awk_writes(w.value) if awk_program(w.value) != UNKNOWN else []
        what = "sed script" if is_sed else "awk program"
        out.extend((w.span, f"the {what} writes the file `{t}`")
                   for t in targets if t not in data.HARMLESS_OUTPUTS)
    return out


def file_writes(inv: Invocation) -> list[Write]:
    """Every file this invocation writes by its own means, with a message."""
    if not inv.argv or not inv.name:
        return []
    name = inv.name
    out = _embedded(inv) if name in data.SEDS or name in data.AWKS else []
    spec = data.WRITERS.get(data.WRITER_ALIASES.get(name, name))
    if spec is None:
        return out
    args = inv.argv[1:]
    opts, operands = scan_args(args, spec.opts, spec.longs)
    seen = {o for o, _ in opts}
    if seen & spec.stop_opts:
        return out                        # --help / --version: prints and exits
    prog = inv.argv[0].value
    for opt, value in opts:
        if opt in spec.writes and value is not None:
            if not _harmless(value):
                out.append(((value.span[0], value.span[1]),
                            f"`{prog} {opt}` writes the file `{value.raw}`"))
        elif opt in spec.bare_writes and value is None:
            out.append((_span(inv), f"`{prog} {opt}` writes a file of its own naming"))
    if spec.operand >= 0 and len(operands) > spec.operand:
        target = operands[spec.operand]
        if not _harmless(target) and not (target.static and target.value == "-"):
            out.append((target.span, f"`{prog}` writes its output to the file `{target.raw}`"))
    if spec.all_operands:
        out.extend((t.span, f"`{prog}` writes the file `{t.raw}`")
                   for t in operands if not _harmless(t))
    if spec.always and not (seen & spec.unless):
        out.append((_span(inv), f"`{prog}` {spec.always}"))
    return out


def writers() -> frozenset[str]:
    """Program basenames whose invocations may write files (the RF130 gate)."""
    return frozenset(data.WRITERS) | frozenset(data.WRITER_ALIASES) | data.SEDS | data.AWKS
