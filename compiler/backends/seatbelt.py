"""Export a profile as a macOS Seatbelt (SBPL) profile for ``sandbox-exec``.

Run it as::

  sandbox-exec -f profile.sb -D HOME="$HOME" -D TMPDIR="$TMPDIR" -- CMD...

Shape: ``(deny default)``, then process/fork/read allowances, then writes
limited to the writable roots (and the temp dir, since Seatbelt has no
private /tmp), then the denials (read-denied paths and always-protected
paths). SBPL gives precedence to the later matching rule, so denials come
last. ``~`` becomes ``(param "HOME")``; globs become ``(regex ...)``.

Seatbelt filters network by address, not by name: with a proxy profile, the
only outbound network allowed is TCP to the filtering proxy on
``localhost:PROXY_PORT``, and the domain list is enforced by that proxy.
"""

from __future__ import annotations

import re

from ringfence.profiles.model import Profile

from .exportlib import (Export, policy_gaps, protected,
                        read_denied, writable_roots)

PROXY_PORT = 3128


def _quote(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _glob_regex(path: str) -> str:
    """A path glob as an anchored SBPL regex: ``**/`` any dirs, ``*`` within one name."""
    out, i = [], 0
    while i < len(path):
        if path.startswith("**/", i):
            out.append("(.*/)?")
            i += 3
        elif path.startswith("**", i):
            out.append(".*")
            i += 2
        elif path[i] == "*":
            out.append("[^/]*")
            i += 1
        elif path[i] == "?":
            out.append("[^/]")
            i += 1
        else:
            out.append(re.escape(path[i]))
            i += 1
    return "^" + "".join(out) + "(/.*)?$"


def _filter(path: str, *, subpath: bool = True) -> str:
    """One SBPL path filter; home-relative paths use the HOME parameter."""
    if any(c in path for c in "*?["):
        if path.startswith("~/"):
            # SBPL regexes cannot splice in a parameter: match under any user's
            # home. For a denial that is broader than asked, never narrower.
            return f'(regex #"^(/Users|/home)/[^/]+/{_glob_regex(path[2:])[1:]}")'
        return f'(regex #"{_glob_regex(path)}")'
    kind = "subpath" if subpath else "literal"
    if path == "~":
        return f'({kind} (param "HOME"))'
    if path.startswith("~/"):
        return f'({kind} (string-append (param "HOME") {_quote(path[1:])}))'
    return f"({kind} {_quote(path)})"


def render(profile: Profile, *, workspace: str) -> Export:
    unsupported: list[str] = []
    lines = [f";; ringfence profile {profile.name!r} as a macOS Seatbelt profile.",
             ';; sandbox-exec -f THIS.sb -D HOME="$HOME" -D TMPDIR="$TMPDIR" -- CMD...',
             "(version 1)", "(deny default)",
             "(allow process-exec)", "(allow process-fork)",
             "(allow signal (target same-sandbox))",
             "(allow sysctl-read)", "(allow mach-lookup)", "(allow ipc-posix-shm)",
             "(allow file-read*)",
             ";; writable roots",
             "(allow file-write*"]
    if not profile.sandbox:
        unsupported.append("profile runs with the sandbox off (full host access); exported "
                           "as the closest restrictive reading")
    for root in writable_roots(profile, workspace):
        lines.append(f"  {_filter(root)}")
    lines += ['  (subpath (param "TMPDIR"))', '  (literal "/dev/null") (literal "/dev/tty")',
              '  (regex #"^/dev/fd/[0-9]+$"))']
    denied = read_denied(profile, workspace)
    if denied:
        lines.append(";; read-denied (credential stores and secrets)")
        lines.append("(deny file-read* file-write*")
        lines += [f"  {_filter(p)}" for p in denied]
        lines[-1] += ")"
    prot = protected(profile, workspace)
    if prot:
        lines.append(";; always write-protected inside writable roots")
        lines.append("(deny file-write*")
        lines += [f"  {_filter(p)}" for p in prot]
        lines[-1] += ")"
    net = profile.network
    if net.mode == "proxy" and net.allow:
        lines += [f";; network: only the filtering proxy on localhost:{PROXY_PORT}; the domain",
                  ";; allow/deny lists are enforced by that proxy, not by Seatbelt",
                  f'(allow network-outbound (remote tcp "localhost:{PROXY_PORT}"))']
        unsupported.append(f"domain allow/deny lists: Seatbelt filters by address only; "
                           f"outbound traffic is limited to a proxy on localhost:{PROXY_PORT}, "
                           "which must enforce the lists (set HTTP(S)_PROXY accordingly)")
    else:
        lines.append(";; network: none")
    if net.allow_unix_sockets:
        lines.append("(allow network-outbound (remote unix-socket))")
    unsupported += policy_gaps(
        profile,
        rules="{n} command rule(s) (allow/ask/deny): Seatbelt has no command policy",
        syscalls="syscall filtering (io_uring, ptrace, bpf, keyctl, nested namespaces) "
                 "is Linux seccomp; Seatbelt has no equivalent list",
        host="host requests ({host}): no approval flow")
    body = "\n".join(lines) + "\n"
    notes = "".join(f";; UNSUPPORTED: {u}\n" for u in unsupported)
    return Export(body + notes, unsupported)
