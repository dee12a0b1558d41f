"""How each host reader parses its options, as getopt/getopt_long does (issue 20b).

``session.host_reads`` lets a reader run on the host unasked only while it reads
files in the project. That depends on reading its argv the way the program does:
an attached short value (``-fX``), a cluster (``-nf X``), ``--file X``,
``--file=X`` and any abbreviation getopt_long accepts (``--fil``). Per reader:

* ``value``: the options that take a value (the next word, the rest of a cluster,
  the text after ``=``). A value option missing here only makes the scan stricter
  (its value is then read as an operand or as options), never looser; a *flag*
  listed here would hide the next word, so only options the manual documents as
  taking a mandatory argument are listed.
* ``opaque``: options that hand the program text to run or a list of names to
  read that the rule cannot see into (``sed -f``, ``grep -f``, ``file -m``,
  ``--files0-from``), or that make it write or run a program (``sed -i``,
  ``rg --pre``, ``rg -z`` runs decompressors). Any of them means the host
  read-allow does not apply. A long option is opaque when it is any prefix of an
  opaque long option (``--fi``): getopt_long accepts an unambiguous prefix, and
  an ambiguous one makes the program fail, so asking is never wrong.

Sources: sed(1), grep(1), rg(1), file(1), sort(1), wc(1), du(1), head(1),
tail(1), ls(1), stat(1), diff(1), cut(1), uniq(1), nl(1), jq(1), gawk(1),
less(1), tree(1). Pure: stdlib and the classifier's option scanner.
"""

from __future__ import annotations

from typing import NamedTuple

from ringfence.classifier.ir import Word
from ringfence.classifier.optscan import scan_args
from ringfence.classifier.optspec import Opts


class Reader(NamedTuple):
    spec: Opts
    opaque: frozenset[str]
    longs: frozenset[str] = frozenset()     # flag long options (for prefix resolution)


def _r(value: str, opaque: str, longs: str = "", value2: str = "") -> Reader:
    return Reader(Opts(frozenset(value.split()), frozenset(value2.split())),
                  frozenset(opaque.split()), frozenset(longs.split()))


_GREP = _r("-e --regexp -m --max-count -A --after-context -B --before-context -C "
           "--context --label --binary-files -D --devices -d --directories --include "
           "--exclude --exclude-dir --group-separator",
           "-f --file --exclude-from")
READERS: dict[str, Reader] = {
    "sed": _r("-e --expression -l --line-length",
              "-f --file -i --in-place -s --separate"),
    "grep": _GREP, "egrep": _GREP, "fgrep": _GREP,
    "rg": _r("-e --regexp -g --glob --iglob -t --type -T --type-not -m --max-count -A "
             "--after-context -B --before-context -C --context -j --threads -M "
             "--max-columns -d --max-depth -E --encoding --type-add --type-clear "
             "--colors -r --replace --path-separator --sort --sortr --max-filesize "
             "--context-separator --field-match-separator --field-context-separator "
             "--engine --dfa-size-limit --regex-size-limit",
             "-f --file --pre --pre-glob -z --search-zip --ignore-file --hostname-bin"),
    "file": _r("-F --separator -e --exclude --exclude-quiet -P --parameter",
               "-m --magic-file -C --compile -f --files-from -z --uncompress -Z "
               "--uncompress-noreport"),
    "sort": _r("-k --key -t --field-separator -S --buffer-size --parallel --batch-size",
               "-o --output -T --temporary-directory --compress-program --files0-from "
               "--random-source"),
    "wc": _r("", "--files0-from"),
    "du": _r("-d --max-depth -B --block-size -t --threshold --exclude --time-style",
             "--files0-from -X --exclude-from"),
    "head": _r("-n --lines -c --bytes", ""),
    "tail": _r("-n --lines -c --bytes -s --sleep-interval --pid --max-unchanged-stats", ""),
    "ls": _r("-I --ignore -w --width -T --tabsize --hide --format --sort --time "
             "--time-style --block-size --quoting-style", ""),
    "stat": _r("-c --format --printf", ""),
    "diff": _r("-x --exclude -I --ignore-matching-lines -F --show-function-line -L "
               "--label -W --width --tabsize -S --starting-file --horizontal-lines -D "
               "--ifdef --palette", "-X --exclude-from"),
    "cut": _r("-b --bytes -c --characters -d --delimiter -f --fields --output-delimiter",
              ""),
    "uniq": _r("-f --skip-fields -s --skip-chars -w --check-chars", ""),
    "nl": _r("-b -d -f -h -i -l -n -s -v -w --body-numbering --section-delimiter "
             "--footer-numbering --header-numbering --line-increment --join-blank-lines "
             "--number-format --number-separator --starting-line-number --number-width",
             ""),
    "jq": _r("--indent -L", "-f --from-file -L --rawfile --slurpfile",
             value2="--arg --argjson --rawfile --slurpfile"),
    "awk": _r("-F --field-separator -v --assign -e --source",
              "-f --file -i --include -l --load -E --exec -o --pretty-print -p --profile "
              "-d --dump-variables"),
    "less": _r("-b -h -j -k -o -O -p -P -t -T -x -y -z --lesskey-file --log-file "
               "--LOG-FILE --pattern --prompt --tag --tag-file --tabs --max-forw-scroll "
               "--window", "-k -o -O --lesskey-file --lesskey-src --log-file --LOG-FILE"),
    "tree": _r("-L -P -I -H -T --charset --filelimit --timefmt --sort", "-o --fromfile"),
}
READERS["more"] = READERS["less"]
READERS["gawk"] = READERS["mawk"] = READERS["nawk"] = READERS["awk"]
READERS["gsed"] = READERS["sed"]


def _opaque(opt: str, table: frozenset[str]) -> bool:
    if opt in table:
        return True
    return opt.startswith("--") and len(opt) > 2 and any(
        o.startswith(opt) for o in table if o.startswith("--"))


def scan(prog: str, argv) -> tuple[str | None, list[str], list[str]]:
    """(the first opaque option as written, or None; option values; operands) of
    ``argv`` (after the program name) as ``prog`` parses it. A program without a
    row here gets every word as an operand."""
    if prog == "git":
        # git's parse-options takes any unique prefix: `git log --outp=x` writes x
        out = next((a for a in argv if len(a.split("=", 1)[0]) >= 4 and
                    "--output".startswith(a.split("=", 1)[0])), None)
        if out is not None:
            return out, [], list(argv)
    row = READERS.get(prog)
    words = tuple(Word(a, a, (0, 0)) for a in argv)
    if row is None:
        return None, [], list(argv)
    if prog in ("less", "more"):
        plus = next((a for a in argv if a.startswith("+")), None)
        if plus is not None:
            return plus, [], []         # `less +cmd` runs a command on every file
    known = row.longs | row.opaque | {o for o in row.spec.value if o.startswith("--")}
    opts, operands = scan_args(words, row.spec, frozenset(known))
    for opt, _ in opts:
        if _opaque(opt, row.opaque):
            return opt, [], []
    values = [v.value for o, v in opts if v is not None]
    return None, values, [w.value for w in operands]


def sed_programs(argv) -> list[str] | None:
    """sed's inline scripts: every -e value, else its first operand; None when the
    script comes from a file (opaque)."""
    row = READERS["sed"]
    known = row.opaque | {o for o in row.spec.value if o.startswith("--")}
    opts, operands = scan_args(tuple(Word(a, a, (0, 0)) for a in argv), row.spec,
                               frozenset(known))
    if any(_opaque(o, row.opaque) for o, _ in opts):
        return None
    progs = [v.value for o, v in opts if o in ("-e", "--expression") and v is not None]
    if not progs and operands:
        progs.append(operands[0].value)
    return progs


__all__ = ["READERS", "Reader", "scan", "sed_programs"]
