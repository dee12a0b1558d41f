"""Shared pieces of the foreign-format exporters (srt, seatbelt, claude-code).

The exporters translate a *profile* (policy), not a compiled spec: the target
tools do their own mounting, so what they need is the intent (writable roots,
read-denied paths, protected paths, domains, command rules), expressed in their
vocabulary. Anything a format cannot say goes into ``Export.unsupported``; the
exporter also writes it into the output (comment or ``_unsupported`` key) and
``ringfence.compiler.export.export`` repeats it on stderr. Nothing is dropped silently.
"""

from __future__ import annotations

import os
import posixpath
from typing import Mapping
from ringfence.rfcore.records import field, record

from ringfence.profiles.domains import ANY_PORT, WEB_PORTS, parse_pattern
from ringfence.profiles.model import Profile

DEFAULT_TOOLING = "~/.cache/ringfence/tooling"


@record(frozen=False)
class Export:
    text: str
    unsupported: list[str] = field(default_factory=list)


def _norm(path: str) -> str:
    return posixpath.normpath(path)


def expand_path(template: str, *, workspace: str, tooling: str) -> str:
    """``{workspace}``/``{tooling}`` substituted; ``~`` kept (the targets expand it)."""
    text = template.replace("{workspace}", workspace).replace("{tooling}", tooling)
    return _norm(text)


def tooling_dir(profile: Profile) -> str:
    return _norm(profile.tooling.dir or DEFAULT_TOOLING)


def writable_roots(profile: Profile, workspace: str) -> list[str]:
    tooling = tooling_dir(profile)
    out = [expand_path(t, workspace=workspace, tooling=tooling) for t in profile.filesystem.writable]
    if profile.tooling.enabled and tooling not in out:
        out.append(tooling)
    return list(dict.fromkeys(out))


def read_denied(profile: Profile, workspace: str, env: Mapping[str, str] | None = None
                ) -> list[str]:
    """The profile's read_deny plus, for a sandboxed profile, the one table of
    credential locations (``rfcore/credentials.py``): the targets have no home mask,
    so the table is what keeps the agents', clouds' and registries' tokens hidden."""
    from ringfence.rfcore.credentials import export_paths

    tooling = tooling_dir(profile)
    out = [expand_path(p, workspace=workspace, tooling=tooling)
           for p in profile.filesystem.read_deny]
    if profile.sandbox:
        out += export_paths(env)
    return list(dict.fromkeys(out))


def home_mask_gap(profile: Profile) -> list[str]:
    out = [f"[[credentials]] {c.name!r}: the target has no credential broker; nothing is "
           "brokered (the token is not available inside)" for c in profile.credentials]
    if not profile.filesystem.mask_home:
        return out
    return out + ["filesystem.mask_home: ringfence hides the whole home except its toolchain "
            "allowlist and serves ~/.gitconfig, ~/.npmrc and pip.conf with their secrets "
            "removed; this format gets the credential table as read denies instead (a "
            "credential file the table does not name stays readable)"]


def protected(profile: Profile, workspace: str) -> list[str]:
    """Always-write-protected paths: relative entries under every writable root.

    ringfence itself stages writes and judges the host-obeyed registry by content;
    these formats cannot, so they deny writing the registry's fixed paths
    (``rfcore.obeyed.EXPORT_DENY_WRITE``) plus the profile's ``write_protect``."""
    from ringfence.staging.registry import EXPORT_DENY_WRITE

    tooling = tooling_dir(profile)
    roots = writable_roots(profile, workspace)
    out: list[str] = []
    for entry in EXPORT_DENY_WRITE + tuple(profile.filesystem.write_protect):
        entry = entry.rstrip("/") or entry
        if entry.startswith(("/", "~", "{")):
            out.append(expand_path(entry, workspace=workspace, tooling=tooling))
        else:
            out.extend(_norm(posixpath.join(r, entry)) for r in roots)
    return list(dict.fromkeys(out))


def own_dirs(env: Mapping[str, str] | None) -> list[str]:
    """ringfence's own state, pattern cache and config directories (the ledger, grants,
    the user's profile), as an export names them: under the home as ``~/...``.

    The native sandbox hides them (``rfcore.paths.private_dirs``); an export must
    read-deny them too, or a command could read earlier commands and their output
    from the ledger. They honor ``RINGFENCE_HOME``, ``XDG_STATE_HOME``,
    ``XDG_CACHE_HOME`` and ``XDG_CONFIG_HOME`` as the native sandbox does.
    """
    from ringfence.rfcore.paths import private_dirs

    env = dict(os.environ if env is None else env)
    home = _norm(env.get("HOME") or os.path.expanduser("~"))
    out = []
    for path in private_dirs(env):
        path = _norm(path)
        if path == home or path.startswith(home.rstrip("/") + "/"):
            path = "~" + path[len(home):]
        out.append(path)
    return out


def srt_domains(patterns: tuple[str, ...], *, deny: bool, unsupported: list[str]) -> list[str]:
    """ringfence domain patterns in sandbox-runtime's syntax.

    srt: ``example.com`` exact, ``*.example.com`` subdomains only, ``:port``
    optional, no port = any port. So ``**.x`` becomes ``x`` + ``*.x``, and an
    unported ALLOW entry (ringfence: 80/443 only) becomes two ported entries.
    """
    out: list[str] = []
    for text in patterns:
        try:
            p = parse_pattern(text)
        except ValueError as exc:
            unsupported.append(f"network pattern {text!r} is invalid and was not exported: {exc}")
            continue
        host = f"[{p.domain}]" if ":" in p.domain else p.domain
        if not p.is_ip and "." not in p.domain and p.domain != "localhost":
            unsupported.append(f"network pattern {text!r}: single-label host names are not "
                               "accepted by this format; not exported")
            continue
        hosts = {"exact": [host], "subdomains": [f"*.{host}"],
                 "apex_and_subdomains": [host, f"*.{host}"]}[p.kind]
        if p.port == ANY_PORT or (p.port is None and deny):
            ports = [""]
        elif p.port is None:
            ports = [f":{n}" for n in sorted(WEB_PORTS)]
        else:
            ports = [f":{p.port}"]
        out.extend(h + port for h in hosts for port in ports)
    return list(dict.fromkeys(out))


def private_address_note(profile: Profile) -> str | None:
    """ringfence refuses private/loopback answers for wildcard matches; others may not."""
    wild = [t for t in profile.network.allow if t.lstrip().startswith("*")]
    if profile.network.mode == "proxy" and wild:
        return ("ringfence refuses a wildcard-allowed name that resolves to a loopback, "
                "link-local, metadata or private address (only exact entries may); this "
                f"format has no such rule, affecting {', '.join(wild)}")
    return None


def common_unsupported(profile: Profile, *, has_env: bool, has_limits: bool,
                       has_private_tmp: bool) -> list[str]:
    out: list[str] = []
    if not has_env and (profile.env.pass_ or profile.env.set):
        out.append("environment passlist (env.pass/env.set): the target does not clear the "
                   "environment, so every host variable (including credentials) is visible")
    lim = profile.limits
    if not has_limits and any(v is not None for v in (lim.timeout, lim.memory_mb, lim.pids,
                                                       lim.file_size_mb)):
        out.append("limits (timeout, memory, pids, file size) are not expressible")
    if not has_private_tmp and profile.filesystem.private_tmp:
        out.append("private /tmp: the target shares the host's temporary directory")
    return out


def policy_gaps(profile: Profile, *, rules: str, syscalls: str, host: str) -> list[str]:
    """What a target without an environment passlist, limits, a private /tmp, a
    command policy or approvals cannot express, in the order every such export
    lists it. ``rules`` is formatted with ``n`` (the number of command rules) and
    ``host`` with ``host`` (the profile's host policy)."""
    out: list[str] = home_mask_gap(profile)
    note = private_address_note(profile)
    if note:
        out.append(note)
    out += common_unsupported(profile, has_env=False, has_limits=False, has_private_tmp=False)
    if profile.rules:
        out.append(rules.format(n=len(profile.rules)))
    out.append(syscalls)
    if profile.host != "deny":
        out.append(host.format(host=profile.host))
    return out
