"""A fixed, fake HostFacts for golden tests: compile is pure, so no kernel or disk."""

from __future__ import annotations

import re

from ringfence.compiler.compile import wanted_paths
from ringfence.compiler.host import HostFacts, PathFact
from ringfence.rfcore.credentials import locations

HOME = "/home/agent"
WS = "/home/agent/src/app"

# The fake disk: path -> (kind, real). Everything else is missing.
DISK = {
    "/run": ("dir", "/run"),
    WS: ("dir", WS),
    f"{WS}/.git/hooks": ("dir", f"{WS}/.git/hooks"),
    f"{WS}/.git/config": ("file", f"{WS}/.git/config"),
    f"{WS}/.vscode": ("dir", f"{WS}/.vscode"),
    f"{WS}/.env": ("file", f"{WS}/.env"),
    f"{WS}/config/.env.local": ("file", f"{WS}/config/.env.local"),
    f"{WS}/certs/server.pem": ("file", f"{WS}/certs/server.pem"),
    HOME: ("dir", HOME),
    f"{HOME}/.gitconfig": ("file", f"{HOME}/.gitconfig"),
    f"{HOME}/.local/bin": ("dir", f"{HOME}/.local/bin"),
    f"{HOME}/.local/lib/python3.11": ("dir", f"{HOME}/.local/lib/python3.11"),
    f"{HOME}/.ssh": ("dir", f"{HOME}/.ssh"),
    f"{HOME}/.aws": ("dir", "/data/agent-aws"),          # a symlinked credential store
    f"{HOME}/.netrc": ("file", f"{HOME}/.netrc"),
    f"{HOME}/.config/gh": ("dir", f"{HOME}/.config/gh"),
    f"{HOME}/.cache/ringfence/tooling": ("dir", f"{HOME}/.cache/ringfence/tooling"),
}
LINKS = {f"{HOME}/.aws"}
ENV_NAMES = ("HOME", "LANG", "LC_ALL", "PATH", "SHELL", "TERM", "GITHUB_TOKEN",
             "AWS_SECRET_ACCESS_KEY", "USER")


def _glob_re(pattern: str) -> re.Pattern:
    out, i = "", 0
    while i < len(pattern):
        if pattern.startswith("/**/", i):
            out += "/(?:.*/)?"
            i += 4
        elif pattern[i] == "*":
            out += "[^/]*"
            i += 1
        elif pattern[i] == "?":
            out += "[^/]"
            i += 1
        else:
            out += re.escape(pattern[i])
            i += 1
    return re.compile(out + r"\Z")


def fake_host(profile, workspace: str | None = WS, disk: dict | None = None,
              links: set | None = None, env_names=ENV_NAMES, git_includes=()) -> HostFacts:
    disk = DISK if disk is None else disk
    links = LINKS if links is None else links
    base = HostFacts(uid=1000, gid=1000, home=HOME, arch="x86_64", python="/usr/bin/python3",
                     bwrap="/usr/bin/bwrap", env_names=tuple(sorted(env_names)), seccomp=True,
                     credential_paths=tuple(p for p, _ in locations(HOME, {})),
                     git_includes=tuple(git_includes))
    plain, patterns = wanted_paths(profile, workspace, base)
    globs = {p: tuple(sorted(x for x in disk if _glob_re(p).match(x))) for p in patterns}
    facts = {}
    for p in set(plain) | {x for found in globs.values() for x in found}:
        kind, real = disk.get(p, ("missing", p))
        facts[p] = PathFact(p, kind, real, p in links)
    return HostFacts(**{**base.__dict__, "paths": facts, "globs": globs})
