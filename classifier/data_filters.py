"""Filters that are decoration as non-first pipeline stages (RF305).

Split out of classifier/data.py, which re-exports every name (callers use
``data.X``).
"""

from typing import NamedTuple

from .optspec import Opts, opts


# --- filters that are decoration as non-first pipeline stages -----------------


class Filter(NamedTuple):
    opts: Opts = Opts()
    deny: frozenset[str] = frozenset()       # options that disqualify (write, exec, read files)
    deny_letters: str = ""                   # short letters that disqualify inside clusters
    operands: int = 0                        # positional words allowed when reading stdin
    operand_opts: frozenset[str] = frozenset()   # giving one of these uses up the operand
    checker: str = ""                        # 'sed' / 'awk' / 'tee': program text check


FILTERS: dict[str, Filter] = {
    "head": Filter(opts("-n", "-c", "--lines", "--bytes")),
    "tail": Filter(opts("-n", "-c", "--lines", "--bytes", "-s", "--sleep-interval", "--pid",
                        "--max-unchanged-stats")),
    "grep": Filter(opts("-e", "-m", "-A", "-B", "-C", "--regexp", "--max-count",
                        "--after-context", "--before-context", "--context", "--label",
                        "--binary-files", "-D", "--devices"),
                   deny=frozenset({"-r", "-R", "--recursive", "--dereference-recursive", "-f",
                                   "--file", "-d", "--directories", "--include", "--exclude",
                                   "--exclude-dir", "--exclude-from"}),
                   deny_letters="rRfd", operands=1, operand_opts=frozenset({"-e", "--regexp"})),
    "wc": Filter(deny=frozenset({"--files0-from"})),
    "sort": Filter(opts("-k", "-t", "-S", "-T", "--key", "--field-separator", "--buffer-size",
                        "--temporary-directory", "--parallel", "--batch-size"),
                   deny=frozenset({"-o", "--output", "--compress-program", "--files0-from",
                                   "--random-source"}), deny_letters="o"),
    "uniq": Filter(opts("-f", "-s", "-w", "--skip-fields", "--skip-chars", "--check-chars")),
    "cut": Filter(opts("-b", "-c", "-d", "-f", "--bytes", "--characters", "--delimiter",
                       "--fields", "--output-delimiter")),
    "tr": Filter(operands=2),
    "cat": Filter(),
    "tac": Filter(opts("-s", "--separator")),
    "nl": Filter(opts("-b", "-d", "-f", "-h", "-i", "-l", "-n", "-s", "-v", "-w",
                      "--body-numbering", "--section-delimiter", "--footer-numbering",
                      "--header-numbering", "--line-increment", "--join-blank-lines",
                      "--number-format", "--number-separator", "--starting-line-number",
                      "--number-width")),
    "column": Filter(opts("-c", "-s", "-o", "-N", "-R", "-H", "-W", "-E", "-O", "-d", "-r",
                          "--output-width", "--separator", "--output-separator",
                          "--table-columns", "--table-right", "--table-hide", "--table-wrap")),
    "fold": Filter(opts("-w", "--width")),
    "rev": Filter(),
    "jq": Filter(opts("--indent", value2=("--arg", "--argjson")),
                 deny=frozenset({"-f", "--from-file", "--slurpfile", "--rawfile", "-L",
                                 "--args", "--jsonargs"}), operands=1, checker="jq"),
    "base64": Filter(opts("-w", "--wrap"), deny=frozenset({"-o", "--output", "-i", "--input"})),
    "sed": Filter(opts("-e", "-l", "--expression", "--line-length"),
                  deny=frozenset({"-i", "--in-place", "-f", "--file", "-s", "--separate"}),
                  deny_letters="if", operands=1,
                  operand_opts=frozenset({"-e", "--expression"}), checker="sed"),
    # awk: -W takes a value (mawk `-W interactive`, gawk `-W lint`): the program follows
    "awk": Filter(opts("-F", "-v", "-e", "-W", "--field-separator", "--assign", "--source"),
                  deny=frozenset({"-f", "--file", "-i", "--include", "-l", "--load", "-E",
                                  "--exec", "-o", "--pretty-print", "-p", "--profile", "-d",
                                  "--dump-variables"}),
                  deny_letters="filEopd", operands=1,
                  operand_opts=frozenset({"-e", "--source"}), checker="awk"),
    "tee": Filter(checker="tee"),
}
# Every long option of GNU sed 4.9 and gawk 5.2 (sed --help, gawk --help): a
# unique prefix is the option (`sed --fil=-` is --file=-)
SCRIPT_LONGS = {
    "sed": frozenset("--quiet --silent --debug --expression --file --follow-symlinks "
                     "--in-place --line-length --posix --regexp-extended --separate "
                     "--sandbox --unbuffered --null-data --zero-terminated --help "
                     "--version".split()),
    "awk": frozenset("--assign --bignum --characters-as-bytes --copyright --debug "
                     "--dump-variables --exec --field-separator --file --gen-pot --help "
                     "--include --lint --load --no-optimize --non-decimal-data --optimize "
                     "--posix --pretty-print --profile --re-interval --sandbox --source "
                     "--traditional --use-lc-numeric --version --csv".split()),
}
FILTER_ALIASES = {"egrep": "grep", "fgrep": "grep", "gawk": "awk", "mawk": "awk",
                  "nawk": "awk", "gsed": "sed"}
AWKS = frozenset({"awk", "gawk", "mawk", "nawk"})
SEDS = frozenset({"sed", "gsed"})
STD_STREAMS = frozenset({"/dev/stdout", "/dev/stderr"})
TEE_SINKS = frozenset({"/dev/null", "/dev/stdout", "/dev/stderr"})
