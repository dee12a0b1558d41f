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

Split by family to stay small: option specs (optspec.py), shells and
interpreters (data_interp.py), RF113/RF130 tables (data_exec.py) and filters
(data_filters.py) live in their own modules and are re-exported here; the
RF131-RF133 option-effects table is effects_data.py.
"""


import re
from typing import NamedTuple

# RF122's table of assignments that change what runs is shared with the
# workspace-overlay rule (RF513): rfcore/execvars.py.
from ringfence.rfcore.lazyre import lazy
from ringfence.rfcore.execvars import (EXEC_VAR_PREFIXES, EXEC_VAR_SUFFIXES,  # noqa: F401
                                       EXEC_VARS, GIT_SAFE_VARS, exec_var)
from .optspec import Opts, opts  # noqa: F401


# --- transparent wrappers ----------------------------------------------------

# The Wrapper row and the launcher table live in data_launch.py.
from .data_launch import (LAUNCHERS, LAUNCHER_ALIASES, PRINTS_OPERANDS, SCHEDULERS,  # noqa: E402,F401
                          SHELL_OPERANDS, TMUX_COMMANDS, TMUX_COMMAND_OPTION,
                          TMUX_RUNS, Wrapper)


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
    # doas(1): doas [-Lns] [-C config] [-u user] command [args]; -s: a shell
    "doas": Wrapper(opts("-u", "-C"), fact="escalation"),
    "pkexec": Wrapper(opts("--user"), fact="escalation"),
    "run0": Wrapper(opts("-u", "--user", "-g", "--group", "-D", "--chdir", "--setenv", "--nice",
                         "--property", "--unit", "--description", "--slice", "--machine"),
                    fact="escalation"),
    # detached / async execution
    "setsid": Wrapper(opts(), fact="detach", stop_opts=frozenset({"-h", "--help", "-V",
                                                                  "--version"}),
                      source="setsid(1) setsid [options] program [arguments]"),
    "coproc": Wrapper(fact="coproc"),
    **LAUNCHERS,
}
from .data_longs import BWRAP_LONGS, BWRAP_PLACES, LONGS  # noqa: E402,F401
for _n, _l in ((k, v) for k, v in LONGS.items() if k in WRAPPERS):
    WRAPPERS[_n] = WRAPPERS[_n]._replace(longs=WRAPPERS[_n].longs | _l)
WRAPPERS["bwrap"] = WRAPPERS["bwrap"]._replace(longs=BWRAP_LONGS)
WRAPPERS.update({k: WRAPPERS[v] for k, v in LAUNCHER_ALIASES.items()})

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
    "parallel": None, **{n: None for n in SHELL_OPERANDS},
    "script": None,            # `script` alone spawns an interactive shell
    "su": frozenset({"-c", "--command", "--session-command"}),
    "flock": frozenset({"-c", "--command"}),
}

# Privilege escalation in every form, one family (RF123): the wrappers above
# (sudo, doas, pkexec, run0: with or without a program, `sudo -i`, bare `sudo`)
# and su (SHELL_LAUNCHERS), plus these, by name -> the subcommands that
# escalate (None: every use). Sources: sudoedit = sudo -e (sudo(8)); runuser(1),
# setpriv(1), nsenter(1), chroot(8) (needs root), sg(1)/newgrp(1) (run with
# another group), capsh(1), ksu(1), machinectl(1) shell/login, systemd-run(1)
# (runs a command as a transient service of the system manager, by default root).
ESCALATION: dict[str, frozenset[str] | None] = {
    "sudoedit": None, "runuser": None, "setpriv": None, "nsenter": None, "chroot": None,
    "sg": None, "newgrp": None, "capsh": None, "ksu": None, "calife": None, "please": None,
    "systemd-run": None, "machinectl": frozenset({"shell", "login"}),
}

from .data_interp import (  # noqa: E402,F401  (re-exported: callers use data.X)
    Interp, SHELLS, INTERPRETERS, INTERPRETER_ALIASES, interp_for,
)

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
    # busybox(1)/toybox: `busybox APPLET [arguments]`; each applet is a program of its
    # own, keyed `busybox rm` (analysis also judges the applet as that program)
    "busybox": Multiplexer(), "toybox": Multiplexer(),
    # tmux(1): tmux [-L socket-name] [-S socket-path] [-f file] [-c shell-command] command
    "tmux": Multiplexer(opts("-L", "-S", "-f", "-c", "-T")),
    "brew": Multiplexer(levels=2, groups=frozenset({"services", "bundle"})),
    # ringfence's own read-only commands are keyed like any multiplexer (`ringfence
    # ledger list`); the ones that approve or leave the sandbox are RF134 (selfcontrol.py)
    "ringfence": Multiplexer(levels=2, groups=frozenset({"ledger", "approvals", "grants",
                                                        "profile"})),
}
# tools keyed by their subcommand so that the one that runs a program is peeled
# (SUB_LAUNCHERS): perf(1) stat/record/trace, pyenv exec, bundle exec, mise
# exec/x, conda run, 1Password op run, doppler run, direnv exec DIR
MULTIPLEXERS.update({n: Multiplexer() for n in ("perf", "pyenv", "bundle", "mise", "conda",
                                                "op", "doppler", "direnv", "bun")
                     if n not in MULTIPLEXERS})
MULTIPLEXER_ALIASES = {"pip3": "pip"}
SUBCOMMAND_WORD = lazy(r"[A-Za-z][A-Za-z0-9_.:-]*")

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
    ("pnpm", "dlx"): opts("--package"), ("yarn", "dlx"): opts("-p", "--package"),
    ("bun", "x"): opts("-p", "--package"), ("podman", "unshare"): Opts(),
    ("perf", "stat"): opts("-e", "--event", "-o", "--output", "-p", "--pid", "-t", "--tid",
                           "-C", "--cpu", "-G", "--cgroup", "-r", "--repeat", "-x",
                           "--field-separator", "-I", "--interval-print", "-D", "--delay",
                           "--post", "--pre", "--log-fd", "-M", "--metrics"),
    ("perf", "record"): opts("-e", "--event", "-o", "--output", "-p", "--pid", "-t", "--tid",
                             "-C", "--cpu", "-G", "--cgroup", "-F", "--freq", "-c", "--count",
                             "-m", "--mmap-pages", "--call-graph", "-D", "--delay"),
    ("perf", "trace"): opts("-e", "--event", "-o", "--output", "-p", "--pid", "-t", "--tid",
                            "-C", "--cpu", "-G", "--cgroup", "--duration", "-m"),
    ("pyenv", "exec"): Opts(), ("bundle", "exec"): Opts(),
    ("mise", "exec"): opts("-C", "--cd", "-j", "--jobs"),
    ("mise", "x"): opts("-C", "--cd", "-j", "--jobs"),
    ("conda", "run"): opts("-n", "--name", "-p", "--prefix", "--cwd"),
    ("op", "run"): opts("--env-file"),
    ("doppler", "run"): opts("-p", "--project", "-c", "--config", "--token", "--mount",
                             "--mount-format", "--name-transformer", "--fallback"),
}
# perf --pre/--post run a program around the measured one; doppler run
# --command runs a shell string; the options that name output files
SUB_LAUNCHER_RUNS = {("perf", "stat"): frozenset({"--pre", "--post"}),
                     ("doppler", "run"): frozenset({"--command"})}

# Tools that run a package's binary with the rest of the arguments.
PACKAGE_RUNNERS: dict[str, Opts] = {
    "npx": opts("-p", "--package", "--cache", "--prefix", "-w", "--workspace", "-c", "--call"),
    "bunx": opts("-p", "--package"),
    "uvx": opts("--from", "--with", "--python", "-p", "--index"),
    "pnpx": opts("-p", "--package"),
}

from .data_exec import (  # noqa: E402,F401  (re-exported: callers use data.X)
    EXEC_OPTIONS, EXEC_OPTION_VALUES, EXEC_LONGS, Writer, WRITERS,
    WRITER_ALIASES,
)

# Builtins that assign the variables named in their arguments (RF122).
ASSIGNING_BUILTINS: dict[str, Opts] = {
    "read": opts("-a", "-d", "-i", "-n", "-N", "-p", "-t", "-u"),
    "printf": opts("-v"),
    "mapfile": opts("-d", "-n", "-O", "-s", "-u", "-C", "-c"),
    "readarray": opts("-d", "-n", "-O", "-s", "-u", "-C", "-c"),
    "getopts": Opts(),
}
# Programs whose short options cluster (`rsync -avze ssh`): look inside clusters.
CLUSTER_EXEC = frozenset({"tar", "rsync", "mapfile", "readarray", "compgen"})

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

from .data_filters import (  # noqa: E402,F401  (re-exported: callers use data.X)
    Filter, FILTERS, FILTER_ALIASES, AWKS, SEDS, SCRIPT_LONGS,
    STD_STREAMS, TEE_SINKS,
)

# --- helpers: harmless when every word is literal (RF306) ----------------------
HELPERS = frozenset({"cd", "pushd", "popd", "echo", "printf", "true", "false", ":", "pwd",
                     "exit", "set", "sleep", "test", "[", "[["})
SET_OK_LETTERS = frozenset("eux")
SET_OK_OPTIONS = frozenset({"pipefail", "errexit", "nounset", "xtrace"})
SLEEP_ARG = lazy(r"\d+(\.\d+)?[smhd]?|\.\d+[smhd]?|infinity")
EXIT_ARG = lazy(r"\d{1,3}")
DECLARATION_OK_FLAGS = frozenset("xraAilug")
# builtins the parser reads as declarations; `builtin declare ...` reaches them as a command
DECLARATION_NAMES = frozenset({"declare", "typeset", "local", "readonly", "export", "unset"})   # -f/-F/-p/-n print or alias functions/vars

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
NETWORK_PATH = lazy(r"/dev/(tcp|udp)/")
