"""Tools whose options run a command (RF113) and programs whose own options
or operands write files (RF130). The option-effects table of RF131-RF133 is
classifier/effects_data.py.

Split out of classifier/data.py, which re-exports every name (callers use
``data.X``).
"""

import re
from typing import NamedTuple

from ringfence.rfcore.lazyre import lazy
from .optspec import Opts, opts

# --- tools whose options execute code (RF113) ---------------------------------
# (program, option) -> why. A prefix ending in '=' also matches `--opt=value`.
EXEC_OPTIONS: dict[str, dict[str, str]] = {
    "tar": {"--to-command": "runs a command for every member",
            "--checkpoint-action": "runs an action (exec=...) at checkpoints",
            "--use-compress-program": "runs the given compressor program",
            "-I": "runs the given compressor program",
            "--info-script": "runs a script at volume changes",
            "-F": "runs a script at volume changes",
            "--new-volume-script": "runs a script at volume changes"},
    "rsync": {"-e": "runs the given remote shell", "--rsh": "runs the given remote shell",
              "--rsync-path": "runs the given program on the remote side"},
    "rg": {"--pre": "runs a preprocessor program on every file"},
    "npm": {"-c": "runs a shell string (npm exec -c)", "--call": "runs a shell string"},
    "npx": {"-c": "runs a shell string", "--call": "runs a shell string"},
    "vim": {"-c": "runs an ex command", "--cmd": "runs an ex command", "-S": "sources a script"},
    "nvim": {"-c": "runs an ex command", "--cmd": "runs an ex command", "-S": "sources a script"},
    "vi": {"-c": "runs an ex command", "--cmd": "runs an ex command"},
    "zip": {"-TT": "runs the given test command", "--unzip-command": "runs the given command"},
    "man": {"-P": "uses the given program as pager", "--pager": "uses the given pager",
            "-H": "runs the given browser", "--html": "runs the given browser"},
    # ssh-family -o is judged by its value (EXEC_OPTION_VALUES)
    "ssh": {"-o": ""}, "scp": {"-o": "", "-S": "runs the given program as ssh"},
    "sftp": {"-o": "", "-S": "runs the given program as ssh"},
}
# Options that run a command only for some values (ssh -o ProxyCommand=...).
EXEC_OPTION_VALUES: dict[str, tuple[frozenset[str], re.Pattern]] = {
    name: (frozenset({"-o"}), lazy(r"(?i)^\s*(proxycommand|localcommand|"
                                   r"permitlocalcommand|knownhostscommand|proxyjump)"))
    for name in ("ssh", "scp", "sftp")
}

# Options that run a command, matched after GNU long-option prefixes are read
# as getopt_long reads them (`sort --compress=sh` is `--compress-program=sh`).
# A prefix is resolved against the table's own long options plus these, every
# long option of the program that matters for ambiguity (`sort --c` is
# ambiguous with `--check`, so sort refuses it) or that is itself a prefix of
# an exec option (`tar --checkpoint` is not `--checkpoint-action`).
EXEC_LONGS: dict[str, frozenset[str]] = {
    "sort": frozenset({"--batch-size", "--buffer-size", "--check", "--compress-program",
                       "--debug", "--dictionary-order", "--field-separator", "--files0-from",
                       "--general-numeric-sort", "--help", "--human-numeric-sort",
                       "--ignore-case", "--ignore-leading-blanks", "--ignore-nonprinting",
                       "--key", "--merge", "--month-sort", "--numeric-sort", "--output",
                       "--parallel", "--random-sort", "--random-source", "--reverse", "--sort",
                       "--stable", "--temporary-directory", "--unique", "--version",
                       "--version-sort", "--zero-terminated"}),
    "split": frozenset({"--additional-suffix", "--bytes", "--elide-empty-files", "--filter",
                        "--help", "--hex-suffixes", "--line-bytes", "--lines", "--number",
                        "--numeric-suffixes", "--separator", "--suffix-length", "--unbuffered",
                        "--verbose", "--version"}),
    "tar": frozenset({"--checkpoint", "--check-device", "--check-links", "--to-stdout",
                      "--totals", "--newer", "--newer-mtime", "--usage"}),
}
# bash(1) mapfile/readarray: -C CALLBACK is evaluated every -c lines; vim(1)
# -s scriptin reads Normal-mode keystrokes (`:!cmd`) from a file; lftp(1) -c/-e
# run lftp commands (`!cmd` runs a shell command); gdb -ex: effects_code.py
_MAPFILE = {"-C": "evaluates the callback as shell code every -c lines"}
EXEC_OPTIONS.update({"mapfile": _MAPFILE, "readarray": _MAPFILE,
                     "lftp": {"-c": "runs lftp commands (`!` runs a shell command)",
                              "-e": "runs lftp commands (`!` runs a shell command)",
                              "-f": "runs a file of lftp commands"}})
for _vim in ("vim", "nvim", "vi", "view", "gvim", "vimdiff"):
    EXEC_OPTIONS.setdefault(_vim, {}).update({
        "-c": "runs an ex command", "--cmd": "runs an ex command", "-S": "sources a script",
        "-s": "reads Normal-mode keystrokes (`:!cmd`) from the file",
        "-u": "uses the file as its vimrc (commands)",
        "-e": "reads Ex commands from standard input", "-E": "reads Ex commands from "
        "standard input", "-es": "reads Ex commands from standard input", "-Es": "reads Ex "
        "commands from standard input", "-l": "runs a Lua script (nvim)",
        "--remote-send": "sends keys to a running vim", "--remote-expr": "evaluates an "
        "expression in a running vim"})
# bash(1) compgen: -C COMMAND runs it, -F FUNCTION runs it, -W WORDLIST is
# expanded (a `$(...)` in it runs; judged by EXEC_OPTION_VALUES); less(1)
# -k/--lesskey-file loads key bindings that can set LESSOPEN
EXEC_OPTIONS.update({
    "compgen": {"-C": "runs the command to generate completions",
                "-F": "runs the shell function to generate completions", "-W": ""},
    "less": {"-k": "reads a lesskey file (its #env section can set LESSOPEN)",
             "--lesskey-file": "reads a lesskey file (its #env section can set LESSOPEN)",
             "--lesskey-src": "reads a lesskey source file (#env can set LESSOPEN)"}})
EXEC_OPTION_VALUES["compgen"] = (frozenset({"-W"}), lazy(r"[$`]"))
# emacs(1) --eval/--execute EXPR, -l/--load FILE, -f/--funcall, --script/-x;
# nmap(1) --script runs NSE (Lua) scripts; tcpdump(8) -z runs the postrotate
# command; gawk(1) -l/--load loads a shared-library extension
EXEC_OPTIONS.update({
    "emacs": {o: "evaluates Lisp code or loads a file of it" for o in (
        "--eval", "--execute", "-l", "--load", "-f", "--funcall", "--script", "-x")},
    "nmap": {"--script": "runs NSE scripts", "--interactive": "runs an interactive shell"},
    "tcpdump": {"-z": "runs the postrotate command on every saved file"},
    "gawk": {"-l": "loads a shared-library extension", "--load": "loads a shared-library "
             "extension"}})
EXEC_OPTIONS["sort"] = {"--compress-program": "runs the given program to compress temporary "
                                              "files (`sh` would run the data as a script)"}
EXEC_OPTIONS["split"] = {"--filter": "runs a shell command for every output piece"}

# --- programs whose own options or operands write files (RF130) -----------------


class Writer(NamedTuple):
    opts: Opts = Opts()                      # options that take a value (to find operands)
    longs: frozenset[str] = frozenset()      # every long option: getopt_long takes prefixes
    writes: frozenset[str] = frozenset()     # options whose value is a file it writes
    bare_writes: frozenset[str] = frozenset()  # options that write a default file (gawk -p)
    operand: int = -1                        # this operand (from 0) is an output file (uniq)
    all_operands: bool = False               # every operand is written (tee)
    always: str = ""                         # writes files whenever it runs (split, csplit)
    unless: frozenset[str] = frozenset()     # options that send the output elsewhere instead
    stop_opts: frozenset[str] = frozenset({"--help", "--version"})   # runs nothing else


_AWK_WRITES = frozenset({"-o", "--pretty-print", "-p", "--profile", "-d", "--dump-variables"})
WRITERS: dict[str, Writer] = {
    # sort -o FILE / --output=FILE (also `-uoFILE`, `--out=FILE`)
    "sort": Writer(opts("-k", "-o", "-S", "-t", "-T", "-y", "--key", "--output", "--buffer-size",
                        "--field-separator", "--temporary-directory", "--parallel",
                        "--batch-size", "--compress-program", "--files0-from",
                        "--random-source", "--sort"),
                   longs=EXEC_LONGS["sort"], writes=frozenset({"-o", "--output"})),
    # uniq [INPUT [OUTPUT]]: the second operand is written ("-" is stdout)
    "uniq": Writer(opts("-f", "-s", "-w", "--skip-fields", "--skip-chars", "--check-chars"),
                   longs=frozenset({"--all-repeated", "--check-chars", "--count", "--group",
                                    "--help", "--ignore-case", "--repeated", "--skip-chars",
                                    "--skip-fields", "--unique", "--version",
                                    "--zero-terminated"}), operand=1),
    # tee FILE...: every operand is written (GNU tee does not treat "-" specially)
    "tee": Writer(longs=frozenset({"--append", "--help", "--ignore-interrupts",
                                   "--output-error", "--version"}), all_operands=True),
    # base64 -o FILE: BSD/macOS (GNU base64 rejects -o; being wrong here costs one approval)
    "base64": Writer(opts("-w", "--wrap", "-b", "--break", "-o", "--output", "--input"),
                     writes=frozenset({"-o", "--output"})),
    "split": Writer(opts("-a", "-b", "-C", "-l", "-n", "-t", "--suffix-length", "--bytes",
                         "--line-bytes", "--lines", "--number", "--separator",
                         "--additional-suffix", "--filter", "--numeric-suffixes",
                         "--hex-suffixes"),
                    longs=EXEC_LONGS["split"], always="writes its input into new files "
                    "(xaa, xab, ... or PREFIXaa, ...)", unless=frozenset({"--filter"})),
    "csplit": Writer(always="writes the pieces of its input into new files (xx00, xx01, ...)"),
    # gawk: -o/-p/-d write a pretty-printed program, a profile or a variable dump
    # (to awkprof.out / awkvars.out, or the attached file name)
    "awk": Writer(opts("-F", "-v", "-e", "-f", "-i", "-l", "-E", "-W", "--field-separator",
                       "--assign", "--source", "--file", "--include", "--load", "--exec"),
                  longs=_AWK_WRITES | frozenset({"--field-separator", "--assign", "--source",
                                                 "--file", "--include", "--load", "--exec"}),
                  writes=_AWK_WRITES, bare_writes=_AWK_WRITES),
}
WRITER_ALIASES = {"gawk": "awk", "mawk": "awk", "nawk": "awk"}
