"""Shells and interpreters: which options mean "inline code follows" (RF107,
RF108, RF116).

Split out of classifier/data.py, which re-exports every name (callers use
``data.X``).
"""

from functools import lru_cache
from typing import NamedTuple

from ringfence.rfcore.lazyre import lazy


# --- shells and interpreters -------------------------------------------------


class Interp(NamedTuple):
    kind: str                                  # 'shell' or 'interpreter'
    inline_letters: str = ""                   # short letters meaning "code follows"
    inline_long: frozenset[str] = frozenset()  # exact long options meaning "code follows"
    value_letters: str = ""                    # short letters taking a value (attached or next)
    attached_letters: str = ""                 # short letters eating the rest of the cluster only
    digit_letters: str = ""                    # short letters followed by optional digits (-l0)
    value_long: frozenset[str] = frozenset()
    stop_letters: str = ""                     # -m module: the rest is the program's
    info: frozenset[str] = frozenset({"--version", "--help"})
    inline_subcommands: frozenset[str] = frozenset()   # deno eval
    case_insensitive_prefix: tuple[str, ...] = ()       # pwsh -Command / -EncodedCommand
    # Programs whose operands are data, not the program (interp.stdin_mode): the
    # program is standard input unless more than ``data_operands`` operands or
    # one of ``script_opts`` give it (-1: standard input always, as for at, ed).
    data_operands: int = 0
    script_opts: frozenset[str] = frozenset()
    program_from_stdin: bool = False
    script_suffixes: tuple[str, ...] = ()      # mongosh FILE.js: an operand that is a script


_SHELL = Interp("shell", inline_letters="c", value_letters="oO",
                value_long=frozenset({"--rcfile", "--init-file"}),
                info=frozenset({"--version", "--help"}))
SHELLS = frozenset({"sh", "bash", "dash", "zsh", "ksh", "mksh", "ash", "yash", "rbash", "fish",
                    "tcsh", "csh", "busybox", "toybox", "ksh93", "pdksh", "oksh", "lksh",
                    "posh", "nu", "xonsh", "elvish", "osh", "ysh", "oil", "rc", "es",
                    "sash", "hush"})

INTERPRETERS: dict[str, Interp] = {
    "python": Interp("interpreter", inline_letters="c", value_letters="WX", stop_letters="m",
                     info=frozenset({"-V", "--version", "-h", "--help"})),
    "node": Interp("interpreter", inline_letters="ep",
                   inline_long=frozenset({"--eval", "--print"}), value_letters="rC",
                   value_long=frozenset({"--require", "--import", "--loader", "--input-type",
                                         "--experimental-loader", "--conditions", "--env-file",
                                         "-r"}),
                   info=frozenset({"-v", "--version", "-h", "--help"})),
    "bun": Interp("interpreter", inline_letters="ep", inline_long=frozenset({"--eval", "--print"}),
                  info=frozenset({"-v", "--version", "-h", "--help"})),
    "deno": Interp("interpreter", inline_subcommands=frozenset({"eval"}),
                   info=frozenset({"-V", "--version", "-h", "--help"})),
    # perl -le: -l takes only optional digits, so the `e` after it is still -e
    "perl": Interp("interpreter", inline_letters="eE", attached_letters="CdDFiImMx",
                   digit_letters="0l", info=frozenset({"-v", "-V", "--version", "-h", "--help"})),
    "ruby": Interp("interpreter", inline_letters="e", value_letters="IrCE",
                   attached_letters="xFKTW", digit_letters="0", info=frozenset({"-v", "--version", "-h", "--help"})),
    "php": Interp("interpreter", inline_letters="rRBEd", value_letters="cfzSt",
                  info=frozenset({"-v", "--version", "-h", "--help", "-i", "-m"})),
    "lua": Interp("interpreter", inline_letters="e", value_letters="l",
                  info=frozenset({"-v"})),
    "Rscript": Interp("interpreter", inline_letters="e", info=frozenset({"--version", "--help"})),
    "R": Interp("interpreter", inline_letters="e", info=frozenset({"--version", "--help"})),
    "osascript": Interp("interpreter", inline_letters="e", value_letters="ls"),
    "pwsh": Interp("interpreter", case_insensitive_prefix=("-command", "-encodedcommand", "-ec"),
                   info=frozenset({"-v", "-version", "--version", "-h", "-help", "--help"})),
    "julia": Interp("interpreter", inline_letters="eE", info=frozenset({"-v", "--version"})),
    "expect": Interp("interpreter", inline_letters="c", value_letters="f"),
    "elixir": Interp("interpreter", inline_letters="e", info=frozenset({"-v", "--version"})),
    # Tcl: tclsh(1)/wish(1) [fileName [arg ...]] (no file: commands from stdin)
    "tclsh": Interp("interpreter", value_letters="", info=frozenset()),
    # m4(1): syscmd()/esyscmd() run shell commands; operands are input files
    "m4": Interp("interpreter", value_letters="DUIdloFRt",
                 info=frozenset({"--version", "--help"})),
    # dc(1): `!` runs a shell command; -e/--expression EXPR, -f FILE
    "dc": Interp("interpreter", inline_letters="e", inline_long=frozenset({"--expression"}),
                 value_letters="f", info=frozenset({"-V", "--version", "-h", "--help"})),
    # gnuplot(1) -e "command list"; `system`/`!` run shell commands
    "gnuplot": Interp("interpreter", inline_letters="e", info=frozenset({"-V", "--version",
                                                                           "-h", "--help"})),
    # GNU guile(1) -c EXPR, racket(1) -e EXPR, octave(1) --eval CODE, sbcl --eval
    "guile": Interp("interpreter", inline_letters="c", value_letters="LlsxeC",
                    info=frozenset({"-v", "--version", "-h", "--help"})),
    "racket": Interp("interpreter", inline_letters="e", inline_long=frozenset({"--eval"})),
    "octave": Interp("interpreter", inline_long=frozenset({"--eval"})),
    "sbcl": Interp("interpreter", inline_long=frozenset({"--eval"})),
    # Standard input is the program, operands are data (see Interp.data_operands).
    # ed(1)/ex: commands from stdin (`!cmd`, `w !cmd`, `r !cmd` run a shell);
    # ftp(1)/lftp: `!cmd` runs a shell command
    "ed": Interp("interpreter", data_operands=-1, value_letters="p",
                 info=frozenset({"-V", "--version", "-h", "--help"})),
    "ftp": Interp("interpreter", data_operands=-1, info=frozenset({"--help"})),
    # gdb(1): commands from stdin unless -batch (then -ex/-x: effects_code.py)
    "gdb": Interp("interpreter", data_operands=-1, value_letters="xpcd",
                  value_long=frozenset({"-ex", "-iex", "-ix", "--eval-command", "--command",
                                        "--init-command", "--init-eval-command", "-x",
                                        "--pid", "--core", "--directory", "-cd", "--cd",
                                        "--data-directory", "-D", "-p", "-c", "-d"}),
                  script_opts=frozenset({"-batch", "--batch", "-batch-silent",
                                         "--batch-silent"}),
                  info=frozenset({"--version", "-version", "--help", "-help",
                                  "--configuration", "-configuration"})),
    # lldb(1): commands from stdin unless -b/--batch
    "lldb": Interp("interpreter", data_operands=-1, value_letters="oOkKsSpnca",
                   value_long=frozenset({"--one-line", "--source", "--attach-pid", "--core",
                                         "--attach-name", "--arch", "--file"}),
                   script_opts=frozenset({"-b", "--batch"}),
                   info=frozenset({"--version", "-v", "--help", "-h"})),
    # sqlite3(1) [OPTIONS] FILENAME [SQL...]; mysql(1) -e; psql(1) -c/-f
    "sqlite3": Interp("interpreter", data_operands=1,
                      value_long=frozenset({"-cmd", "-init", "-separator", "-newline",
                                            "-nullvalue", "-vfs", "-mmap", "-lookaside",
                                            "-pagecache", "-heap", "-maxsize", "-A",
                                            "--cmd", "--init", "--separator", "--newline",
                                            "--nullvalue", "--vfs"}),
                      info=frozenset({"-version", "--version", "-help", "--help"})),
    "mysql": Interp("interpreter", data_operands=1, value_letters="uhPpSDe",
                    value_long=frozenset({"--user", "--host", "--port", "--socket",
                                          "--database", "--execute", "--pager",
                                          "--defaults-file", "--defaults-extra-file",
                                          "--init-command", "--plugin-dir",
                                          "--default-auth", "--protocol",
                                          "--default-character-set", "--password"}),
                    script_opts=frozenset({"-e", "--execute"}),
                    info=frozenset({"-V", "--version", "-?", "--help"})),
    "psql": Interp("interpreter", data_operands=2, value_letters="cdfhpUvPoLFRTW",
                   value_long=frozenset({"--command", "--dbname", "--file", "--host",
                                         "--port", "--username", "--set", "--variable",
                                         "--pset", "--output", "--log-file",
                                         "--field-separator", "--record-separator",
                                         "--table-attr"}),
                   script_opts=frozenset({"-c", "--command", "-f", "--file"}),
                   info=frozenset({"-V", "--version", "-?", "--help", "-l", "--list"})),
    # IPython (ipython --help-all): -c CODE; traitlets options that run code or load
    # extensions; -m MODULE; no file: the shell reads standard input
    "ipython": Interp("interpreter", inline_letters="c", stop_letters="m",
                      inline_long=frozenset({
                          "--ext", "--InteractiveShellApp.exec_lines",
                          "--InteractiveShellApp.code_to_run", "--InteractiveShellApp.exec_files",
                          "--InteractiveShellApp.extensions", "--InteractiveShellApp.extra_extensions",
                          "--InteractiveShellApp.module_to_run", "--TerminalIPythonApp.code_to_run",
                          "--TerminalIPythonApp.exec_lines", "--TerminalIPythonApp.exec_files",
                          "--TerminalIPythonApp.extensions"}),
                      value_long=frozenset({"--profile", "--profile-dir", "--ipython-dir",
                                            "--log-level", "--config", "--logfile",
                                            "--logappend", "--colors"}),
                      info=frozenset({"--version", "-V", "-h", "--help", "--help-all"})),
    # jshell(1) [options] [load-files]: the load files run, then jshell reads snippets
    # and commands from standard input (`/exit` or end of input stops it)
    "jshell": Interp("interpreter", data_operands=-1,
                     value_long=frozenset({"--class-path", "--module-path", "--add-modules",
                                           "--add-exports", "--startup", "--feedback",
                                           "--execution"}),
                     info=frozenset({"--version", "-version", "--full-version", "-h", "--help",
                                     "-?", "--help-extra", "-X"})),
    # mongosh [options] [db address] [file names (ending in .js)]: JavaScript run by
    # Node.js on this machine (require('child_process') runs programs); --eval CODE;
    # no file and no --eval: the shell reads standard input. (The legacy `mongo`
    # shell: run()/runProgram() start local programs.)
    "mongosh": Interp("interpreter", data_operands=1, inline_long=frozenset({"--eval"}),
                      value_long=frozenset({"--host", "--port", "-u", "--username", "-p",
                                            "--password", "--authenticationDatabase",
                                            "--authenticationMechanism", "--apiVersion",
                                            "--tlsCAFile", "--tlsCertificateKeyFile",
                                            "--tlsCertificateKeyFilePassword",
                                            "--gssapiServiceName", "--eval", "-f", "--file"}),
                      script_opts=frozenset({"-f", "--file"}), script_suffixes=(".js",),
                      info=frozenset({"--version", "-h", "--help", "--build-info"})),
}
INTERPRETER_ALIASES = {"nodejs": "node", "luajit": "lua", "powershell": "pwsh",
                       "pypy": "python", "pypy3": "python", "gawk": "awk", "wish": "tclsh",
                       "jimsh": "tclsh", "ex": "ed", "lftp": "ftp",
                       "mariadb": "mysql", "gdb-multiarch": "gdb", "sqlite": "sqlite3",
                       "gm4": "m4", "mongo": "mongosh"}
# Versioned names, matched by pattern, never listed (python3.11, pypy3.10,
# python3.13t, perl5.36.0, perl5.36-x86_64-linux-gnu as Debian ships it, ruby3.1,
# php8.2, lua5.4, luajit-2.1, tclsh8.6, wish8.6, guile-3.0, ipython3): the
# version follows the name, with an optional `-`, ABI letter and platform triplet.
_VERSIONED = lazy(r"(python|pypy|perl|ruby|php|luajit|lua|tclsh|wish|jimsh|guile|ipython)"
                  r"(?:-?[0-9]+(?:\.[0-9]+)*\.?[dmt]?(?:-[A-Za-z0-9_]+-linux-gnu[A-Za-z0-9_]*)?)?")
_VERSIONED_BASE = {"pypy": "python", "luajit": "lua", "wish": "tclsh", "jimsh": "tclsh"}
# shells by version or build: ksh93, zsh5, zsh-static, mksh-static, bash5.2
_VERSIONED_SHELL = lazy(r"(?:bash|zsh|ksh|mksh|dash|tcsh|csh|yash|fish|ash)"
                        r"(?:[0-9]+(?:\.[0-9]+)*)?(?:-static)?")


@lru_cache(maxsize=4096)
def interp_for(name: str) -> tuple[str, Interp] | None:
    """The shell/interpreter row for a program basename, if any."""
    if name in SHELLS:
        return name, _SHELL
    base = INTERPRETER_ALIASES.get(name, name)
    row = INTERPRETERS.get(base)
    if row:
        return base, row
    m = _VERSIONED.fullmatch(name)
    if m:
        base = _VERSIONED_BASE.get(m.group(1), m.group(1))
        return base, INTERPRETERS[base]
    if name[:1] in "bzkmdtcyfa" and _VERSIONED_SHELL.fullmatch(name):
        return name, _SHELL
    return None
