"""Tables the analysis and the rules read: wrappers, launchers, multiplexers,
shells and interpreters, filters, dangerous assignments.

Long lists are data rows, not code. Programs are matched by *basename* for
semantics (``/usr/bin/env bash -c`` is still ``env`` running ``bash -c``);
capability keys keep the full program word (``./sed`` is not ``sed``).

Rows are NamedTuples (cheap to define: this module is on the CLI's cold path).

Option specs: ``value`` options consume a value (the next word, or the rest of
a short-option cluster, or text after ``=``); every other option is a flag.
An unknown option is assumed to be a flag: if it really took a value we would
mistake that value for the program, which yields a new (unapproved) key or a
one-time finding, never a wider grant.
"""


import re
from functools import lru_cache
from typing import NamedTuple

# RF122's table of assignments that change what runs is shared with the
# workspace-overlay rule (RF513): rfcore/execvars.py.
from ringfence.rfcore.execvars import (EXEC_VAR_PREFIXES, EXEC_VAR_SUFFIXES,  # noqa: F401
                                       EXEC_VARS, GIT_SAFE_VARS, exec_var)


class Opts(NamedTuple):
    value: frozenset[str] = frozenset()       # '-n', '--lines' (take one value)
    value2: frozenset[str] = frozenset()      # options that take two values (jq --arg)


def opts(*value: str, value2: tuple[str, ...] = ()) -> Opts:
    return Opts(frozenset(value), frozenset(value2))


# --- transparent wrappers ----------------------------------------------------

class Wrapper(NamedTuple):
    opts: Opts = Opts()
    positionals: int = 0          # words between the options and the program (timeout D)
    fact: str = ""                # a one-time fact this wrapper carries ('escalation', ...)
    stop_opts: frozenset[str] = frozenset()   # options that mean "not wrapping anything"
    writes: frozenset[str] = frozenset()      # options whose value is a file it writes (RF129)
    longs: frozenset[str] = frozenset()       # every long option: getopt_long takes prefixes


# Files a wrapper may write without it being a write (as for redirections, RF303/RF304).
HARMLESS_OUTPUTS = frozenset({"/dev/null", "/dev/stdout", "/dev/stderr"})

WRAPPERS: dict[str, Wrapper] = {
    # The *program* time (GNU time: `\time`, `command time`, `env time`, `A=1 time`,
    # `x | time`), parsed by getopt_long("+af:o:pqvV"): `-o FILE`/`--output=FILE`
    # writes FILE (`-a` appends). The bash *keyword* `time` (first word, only
    # `-p` and `--`) is handled in analysis.
    "time": Wrapper(opts("-f", "-o", "--format", "--output"),
                    stop_opts=frozenset({"-V", "--version", "--help"}),
                    writes=frozenset({"-o", "--output"}),
                    longs=frozenset({"--append", "--format", "--help", "--output",
                                     "--portability", "--quiet", "--verbose", "--version"})),
    "timeout": Wrapper(opts("-s", "-k", "--signal", "--kill-after"), positionals=1),
    "nice": Wrapper(opts("-n", "--adjustment")),
    "nohup": Wrapper(),
    "stdbuf": Wrapper(opts("-i", "-o", "-e", "--input", "--output", "--error")),
    "ionice": Wrapper(opts("-c", "-n", "--class", "--classdata")),
    "command": Wrapper(stop_opts=frozenset({"-v", "-V"})),
    "builtin": Wrapper(),
    "exec": Wrapper(opts("-a")),
    "env": Wrapper(opts("-u", "--unset", "-C", "--chdir", "-S", "--split-string")),
    # privilege escalation: unwrapped so the inner program is still analysed
    "sudo": Wrapper(opts("-u", "-g", "-C", "-D", "-h", "-p", "-r", "-t", "-U", "-T", "--user",
                         "--group", "--chdir", "--prompt", "--role", "--type", "--host",
                         "--other-user", "--close-from", "--command-timeout"),
                    fact="escalation"),
    "doas": Wrapper(opts("-u", "-C"), fact="escalation"),
    "pkexec": Wrapper(opts("--user"), fact="escalation"),
    "run0": Wrapper(opts("-u", "--user", "-g", "--group", "-D", "--chdir", "--setenv", "--nice",
                         "--property", "--unit", "--description", "--slice", "--machine"),
                    fact="escalation"),
    # detached / async execution
    "setsid": Wrapper(fact="detach"),
    "coproc": Wrapper(fact="coproc"),
}

# Launchers name what they launch.
XARGS_OPTS = opts("-a", "--arg-file", "-d", "--delimiter", "-E", "-I", "-L", "-n", "-P", "-s",
                  "--max-lines", "--max-args", "--max-procs", "--max-chars",
                  "--process-slot-var", "-e", "-i", "-l")
# xargs -e/-i/-l take an *attached* optional value only; handled in analysis.
XARGS_ATTACHED_ONLY = frozenset({"-e", "-i", "-l"})
FIND_EXEC = frozenset({"-exec", "-execdir", "-ok", "-okdir"})
WATCH_OPTS = opts("-n", "--interval", "-q", "--equexit", "-d")
WATCH_EXEC = frozenset({"-x", "--exec"})

# Programs that hand their arguments to a shell: always one-time.
SHELL_LAUNCHERS: dict[str, frozenset[str] | None] = {
    # name -> options that make it run a shell string (None: always)
    "parallel": None,
    "script": None,            # `script` alone spawns an interactive shell
    "su": frozenset({"-c", "--command", "--session-command"}),
    "flock": frozenset({"-c", "--command"}),
}

ESCALATION = frozenset({"sudo", "doas", "su", "pkexec", "run0"})

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


_SHELL = Interp("shell", inline_letters="c", value_letters="oO",
                value_long=frozenset({"--rcfile", "--init-file"}),
                info=frozenset({"--version", "--help"}))
SHELLS = frozenset({"sh", "bash", "dash", "zsh", "ksh", "mksh", "ash", "yash", "rbash", "fish",
                    "tcsh", "csh", "busybox", "toybox"})

INTERPRETERS: dict[str, Interp] = {
    "python": Interp("interpreter", inline_letters="c", value_letters="WX", stop_letters="m",
                     info=frozenset({"-V", "--version", "-h", "--help"})),
    "node": Interp("interpreter", inline_letters="ep",
                   inline_long=frozenset({"--eval", "--print"}), value_letters="rC",
                   value_long=frozenset({"--require", "--import", "--loader", "--input-type",
                                         "--experimental-loader", "--conditions", "--env-file"}),
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
}
INTERPRETER_ALIASES = {"nodejs": "node", "luajit": "lua", "powershell": "pwsh",
                       "pypy": "python", "pypy3": "python", "gawk": "awk"}
_PYTHON_NAME = re.compile(r"python[0-9.]*|pypy[0-9.]*")
_LUA_NAME = re.compile(r"lua[0-9.]*|luajit")


@lru_cache(maxsize=4096)
def interp_for(name: str) -> tuple[str, Interp] | None:
    """The shell/interpreter row for a program basename, if any."""
    if name in SHELLS:
        return name, _SHELL
    if _PYTHON_NAME.fullmatch(name):
        return "python", INTERPRETERS["python"]
    if _LUA_NAME.fullmatch(name):
        return "lua", INTERPRETERS["lua"]
    base = INTERPRETER_ALIASES.get(name, name)
    row = INTERPRETERS.get(base)
    return (base, row) if row else None


# --- multiplexers: the key includes the subcommand ---------------------------

class Multiplexer(NamedTuple):
    opts: Opts = Opts()                          # global options before the subcommand
    levels: int = 1                              # how many subcommand words make the key
    groups: frozenset[str] | None = None         # 2nd level only after these (None: always)
    exec_opts: frozenset[str] = frozenset()      # global options that execute code / config
    plus_skip: bool = False                      # skip `+toolchain` words (cargo +nightly)


_KUBE = ("-n", "--namespace", "--context", "--kubeconfig", "-s", "--server", "--cluster",
         "--user", "--token", "--as", "--as-group", "--certificate-authority",
         "--client-certificate", "--client-key", "--request-timeout", "-v")
_DOCKER = ("--config", "-c", "--context", "-H", "--host", "-l", "--log-level", "--tlscacert",
           "--tlscert", "--tlskey")
_DOCKER_GROUPS = frozenset({"compose", "container", "image", "network", "volume", "system",
                            "buildx", "builder", "context", "plugin", "swarm", "service",
                            "stack", "secret", "config", "node", "trust", "manifest", "scout"})

MULTIPLEXERS: dict[str, Multiplexer] = {
    "git": Multiplexer(opts("-C", "-c", "--git-dir", "--work-tree", "--namespace",
                            "--super-prefix", "--config-env", "--exec-path", "--list-cmds"),
                       exec_opts=frozenset({"-c", "--config-env", "--exec-path"})),
    "docker": Multiplexer(opts(*_DOCKER), levels=2, groups=_DOCKER_GROUPS),
    "podman": Multiplexer(opts(*_DOCKER, "--root", "--runroot", "--url", "--connection",
                               "--storage-driver", "--cgroup-manager", "--identity"),
                          levels=2, groups=_DOCKER_GROUPS | {"machine", "pod", "generate", "kube"}),
    "kubectl": Multiplexer(opts(*_KUBE), levels=2,
                           groups=frozenset({"config", "rollout", "auth", "certificate",
                                             "plugin"})),
    "helm": Multiplexer(opts("-n", "--namespace", "--kube-context", "--kubeconfig",
                             "--registry-config", "--repository-config", "--repository-cache"),
                        levels=2, groups=frozenset({"repo", "plugin", "registry", "dependency"})),
    "docker-compose": Multiplexer(opts("-f", "--file", "-p", "--project-name", "--env-file",
                                       "--profile", "--project-directory")),
    "npm": Multiplexer(opts("--prefix", "-w", "--workspace", "-C", "--userconfig", "--cache",
                            "--registry", "--loglevel")),
    "pnpm": Multiplexer(opts("-C", "--dir", "-F", "--filter", "--loglevel", "--reporter")),
    "yarn": Multiplexer(opts("--cwd", "--cache-folder", "--modules-folder"), levels=2,
                        groups=frozenset({"workspaces", "config", "cache", "global", "plugin"})),
    "npx": Multiplexer(opts("-p", "--package", "--cache", "--prefix", "-w", "--workspace"),
                       exec_opts=frozenset({"-c", "--call"})),
    "cargo": Multiplexer(opts("-C", "--config", "--color", "-Z", "--manifest-path"),
                         plus_skip=True),
    "go": Multiplexer(opts("-C"), levels=2, groups=frozenset({"mod", "work", "tool"})),
    "gh": Multiplexer(opts("-R", "--repo", "--hostname"), levels=2,
                      groups=frozenset({"pr", "issue", "repo", "release", "run", "workflow",
                                        "gist", "auth", "secret", "variable", "label",
                                        "codespace", "cache", "project", "ruleset", "search",
                                        "ssh-key", "gpg-key", "extension", "alias", "config",
                                        "org", "attestation"})),
    "aws": Multiplexer(opts("--profile", "--region", "--output", "--endpoint-url", "--query",
                            "--color", "--cli-read-timeout", "--cli-connect-timeout",
                            "--ca-bundle"), levels=2),
    "gcloud": Multiplexer(opts("--project", "--account", "--configuration", "--format",
                               "--verbosity", "--impersonate-service-account", "--flags-file"),
                          levels=3),
    "az": Multiplexer(opts("--subscription", "--output", "-o", "--query"), levels=3),
    "terraform": Multiplexer(opts("-chdir"), levels=2,
                             groups=frozenset({"state", "workspace", "providers"})),
    "pip": Multiplexer(opts("--python", "--log", "--proxy", "--cache-dir")),
    "uv": Multiplexer(opts("--directory", "--project", "--config-file", "--cache-dir",
                           "--color", "--python"), levels=2,
                      groups=frozenset({"pip", "python", "tool", "cache", "self"})),
    "pipx": Multiplexer(),
    # package runners: the key names the package (`uvx ruff`, like `npx prettier`)
    "uvx": Multiplexer(opts("--from", "--with", "--python", "-p", "--index")),
    "bunx": Multiplexer(opts("-p", "--package")),
    "pnpx": Multiplexer(opts("-p", "--package")),
    "poetry": Multiplexer(opts("-C", "--directory", "-P", "--project"), levels=2,
                          groups=frozenset({"env", "self", "cache", "source", "config"})),
    "systemctl": Multiplexer(opts("-H", "--host", "-M", "--machine", "-t", "--type", "-p",
                                  "--property", "-s", "--signal", "--state", "-n", "--lines",
                                  "-o", "--output", "--root")),
    "brew": Multiplexer(levels=2, groups=frozenset({"services", "bundle"})),
}
MULTIPLEXER_ALIASES = {"pip3": "pip"}
SUBCOMMAND_WORD = re.compile(r"[A-Za-z][A-Za-z0-9_.:-]*")

# Subcommands that launch another program; its argv is analysed for one-time
# constructs too (the key stays `uv run`, `npm exec` ...).
SUB_LAUNCHERS: dict[tuple[str, str], Opts] = {
    ("uv", "run"): opts("--with", "--python", "-p", "--directory", "--project", "--package",
                        "--extra", "--group", "--env-file", "--index", "--from"),
    ("poetry", "run"): Opts(),
    ("pnpm", "exec"): Opts(),
    ("npm", "exec"): opts("-p", "--package", "-w", "--workspace", "-c", "--call"),
    ("yarn", "exec"): Opts(),
    ("pipx", "run"): opts("--spec", "--python"),
}

# Tools that run a package's binary with the rest of the arguments.
PACKAGE_RUNNERS: dict[str, Opts] = {
    "npx": opts("-p", "--package", "--cache", "--prefix", "-w", "--workspace", "-c", "--call"),
    "bunx": opts("-p", "--package"),
    "uvx": opts("--from", "--with", "--python", "-p", "--index"),
    "pnpx": opts("-p", "--package"),
}

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
    name: (frozenset({"-o"}), re.compile(r"(?i)^\s*(proxycommand|localcommand|"
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

# Builtins that assign the variables named in their arguments (RF122).
ASSIGNING_BUILTINS: dict[str, Opts] = {
    "read": opts("-a", "-d", "-i", "-n", "-N", "-p", "-t", "-u"),
    "printf": opts("-v"),
    "mapfile": opts("-d", "-n", "-O", "-s", "-u", "-C", "-c"),
    "readarray": opts("-d", "-n", "-O", "-s", "-u", "-C", "-c"),
    "getopts": Opts(),
}
# Programs whose short options cluster (`rsync -avze ssh`): look inside clusters.
CLUSTER_EXEC = frozenset({"tar", "rsync"})

# git subcommand options / words that run programs (RF109).
GIT_EXEC_SUB: dict[str, frozenset[str]] = {
    "rebase": frozenset({"-x", "--exec"}),
    "clone": frozenset({"-u", "--upload-pack", "--template", "-c", "--config"}),
    "fetch": frozenset({"--upload-pack"}),
    "pull": frozenset({"--upload-pack"}),
    "ls-remote": frozenset({"--upload-pack"}),
    "push": frozenset({"--receive-pack", "--exec"}),
    "archive": frozenset({"--exec"}),
    "submodule": frozenset({"foreach"}),
    "bisect": frozenset({"run"}),
    "difftool": frozenset({"-x", "--extcmd"}),
    "filter-branch": frozenset({"*"}),
}
# Word-shaped triggers: `vim +cmd`, `less +!cmd`.
PLUS_COMMAND = frozenset({"vim", "nvim", "vi", "less", "more", "ex", "view"})

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
    "awk": Filter(opts("-F", "-v", "-e", "--field-separator", "--assign", "--source"),
                  deny=frozenset({"-f", "--file", "-i", "--include", "-l", "--load", "-E",
                                  "--exec", "-o", "--pretty-print", "-p", "--profile", "-d",
                                  "--dump-variables"}),
                  deny_letters="filEopd", operands=1,
                  operand_opts=frozenset({"-e", "--source"}), checker="awk"),
    "tee": Filter(checker="tee"),
}
FILTER_ALIASES = {"egrep": "grep", "fgrep": "grep", "gawk": "awk", "mawk": "awk",
                  "nawk": "awk", "gsed": "sed"}
AWKS = frozenset({"awk", "gawk", "mawk", "nawk"})
SEDS = frozenset({"sed", "gsed"})
STD_STREAMS = frozenset({"/dev/stdout", "/dev/stderr"})
TEE_SINKS = frozenset({"/dev/null", "/dev/stdout", "/dev/stderr"})

# --- helpers: harmless when every word is literal (RF306) ----------------------
HELPERS = frozenset({"cd", "pushd", "popd", "echo", "printf", "true", "false", ":", "pwd",
                     "exit", "set", "sleep", "test", "[", "[["})
SET_OK_LETTERS = frozenset("eux")
SET_OK_OPTIONS = frozenset({"pipefail", "errexit", "nounset", "xtrace"})
SLEEP_ARG = re.compile(r"\d+(\.\d+)?[smhd]?|\.\d+[smhd]?|infinity")
EXIT_ARG = re.compile(r"\d{1,3}")
DECLARATION_OK_FLAGS = frozenset("xraAilug")   # -f/-F/-p/-n print or alias functions/vars

# --- builtins that force one-time -------------------------------------------
ONE_TIME_BUILTINS: dict[str, str] = {
    # name -> rule code
    "eval": "RF117",
    "source": "RF118",
    ".": "RF118",
    "alias": "RF119",
    "trap": "RF121",
    "disown": "RF126",
    "enable": "RF128",
}

# git settings that make git run a program later (`git config KEY VALUE`, RF109).
# Compiled on first use: it is long and most commands never need it.
_GIT_EXEC_CONFIG = (
    r"(?i)^(core\.(pager|editor|sshcommand|fsmonitor|hookspath|askpass|gitproxy)|"
    r"sequence\.editor|diff\.external|diff\..*\.(textconv|command)|filter\..*\.(clean|smudge|process)|"
    r"merge\..*\.driver|credential(\..*)?\.helper|gpg\.(.*\.)?program|pager\..*|"
    r"web\.browser|browser\..*\.(cmd|path)|uploadpack\.packobjectshook|include\.path|"
    r"includeif\..*|alias\..*|sendemail\..*cmd|remote\..*\.(uploadpack|receivepack))$")


def git_exec_config(key: str) -> bool:
    return re.search(_GIT_EXEC_CONFIG, key) is not None


GIT_CONFIG_READ = frozenset({"--get", "--get-all", "--get-regexp", "--list", "-l", "--unset",
                             "--unset-all", "get", "list", "unset"})

# A program operand that is standard input.
STDIN_PATHS = frozenset({"-", "/dev/stdin", "/dev/fd/0", "/proc/self/fd/0"})

# --- redirections ----------------------------------------------------------------
WRITE_OPS = frozenset({">", ">>", ">|", "&>", "&>>", "<>"})
NETWORK_PATH = re.compile(r"/dev/(tcp|udp)/")
