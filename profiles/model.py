"""Frozen profile model: the contract between `profiles` and `compiler`/`ringfence`.

Policy is data. A profile says *what* is allowed; the compiler decides *how*
(bwrap flags, seccomp, proxy). Paths here are templates, not host paths:

  ``{workspace}``   the workspace directory of the run
  ``{tooling}``     the tooling (cache) directory
  ``~``             the invoking user's home directory

Globs (``*``, ``**``, ``?``) are allowed in ``read_deny`` and ``write_protect``.
They are expanded by the compiler's host probe, never here.
"""

from __future__ import annotations

from ringfence.rfcore.records import field, record
from typing import Literal

Action = Literal["allow", "ask", "deny"]
NetworkMode = Literal["none", "proxy"]
HostPolicy = Literal["deny", "ask", "escalate"]
HookGrant = Literal["session", "once"]


@record
class Located:
    """Where a value came from, so lint and errors can point at it."""

    file: str | None = None
    line: int | None = None
    key: str | None = None      # dotted key path, e.g. "commands.ask[2]"


@record
class Filesystem:
    # Writable roots. "{workspace}" and "{tooling}" are resolved at compile time.
    writable: tuple[str, ...] = ()
    # A private, empty, writable /tmp (tmpfs). Always on for sandboxed profiles.
    private_tmp: bool = True
    # Paths that must not be readable inside the sandbox (masked).
    read_deny: tuple[str, ...] = ()
    # Paths that stay read-only even inside writable roots (SPEC §3 "always
    # write-protected"): .git/hooks, .git/config, .envrc, .vscode/, ...
    # Relative entries are relative to each writable root.
    write_protect: tuple[str, ...] = ()
    # Mask the whole home directory (an empty tmpfs), then let through only the
    # toolchain paths of compiler/homemask.py (each with why) and read_allow.
    mask_home: bool = False
    # Paths under the home added to that allowlist (read-only; lint warns, RF541,
    # when one is or holds a known credential location).
    read_allow: tuple[str, ...] = ()


@record
class Credential:
    """A task-scoped credential (issue 21): read on the host when a run starts,
    handed to git in the sandbox by the broker over an inherited fd, only for a
    request to one of ``domains``, only while the run lives."""
    name: str
    source: str                       # "env:NAME" | "file:PATH" | "command:CMD"
    domains: tuple[str, ...] = ()
    username: str = ""                # what git is told (default: the request's, else
                                      # "x-access-token", which GitHub accepts)
    where: "Located" = field(default_factory=lambda: Located())


@record
class Network:
    mode: NetworkMode = "none"
    allow: tuple[str, ...] = ()     # domain patterns: example.com, *.x.com, **.x.com, host:port
    deny: tuple[str, ...] = ()      # deny beats allow
    allow_unix_sockets: bool = False  # seccomp denies socket(AF_UNIX) unless true


@record
class Env:
    pass_: tuple[str, ...] = ()             # TOML key "pass"; names or globs like "LC_*"
    set: tuple[tuple[str, str], ...] = ()   # TOML table "set", in file order
    # Credential-looking names (TOKEN, SECRET, KEY, PASSWORD, ...) are only passed
    # when also listed here: an explicit opt-in.
    allow_credentials: tuple[str, ...] = ()


@record
class Tooling:
    # Writable cache dir; PIP_CACHE_DIR, UV_CACHE_DIR, npm_config_cache, GOPATH,
    # GOCACHE and XDG_CACHE_HOME are pointed into it when enabled.
    dir: str = "~/.cache/ringfence/tooling"
    enabled: bool = False


@record
class Limits:
    timeout: float | None = None     # seconds of wall clock; kills the whole sandbox
    memory_mb: int | None = None     # RLIMIT_AS
    pids: int | None = None          # RLIMIT_NPROC
    file_size_mb: int | None = None  # RLIMIT_FSIZE
    stage_mb: int | None = None      # the run's staged writes, in all (compiler/limits.py)


@record
class CommandRule:
    action: Action
    pattern: str                     # pattern-language source, e.g. "git push **"
    where: Located = field(default_factory=Located)


@record
class Profile:
    name: str
    description: str = ""
    source: str | None = None        # file path, or "builtin:NAME"
    extends: tuple[str, ...] = ()    # resolved chain, nearest parent first
    sandbox: bool = True             # False only for `host` (--sandbox off)
    filesystem: Filesystem = field(default_factory=Filesystem)
    network: Network = field(default_factory=Network)
    env: Env = field(default_factory=Env)
    tooling: Tooling = field(default_factory=Tooling)
    limits: Limits = field(default_factory=Limits)
    host: HostPolicy = "ask"         # what a host request does under this profile
    rules: tuple[CommandRule, ...] = ()
    credentials: tuple[Credential, ...] = ()
    # What a person's yes to an `ask` in Claude Code grants (hook, issue 13):
    # "session" grants the capability keys for that Claude session; "once" only
    # that one call.
    hook_grant: HookGrant = "session"
    digest: str = ""                 # sha256 of the resolved source texts (pattern cache key)
