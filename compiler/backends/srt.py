"""Export a profile as an Anthropic sandbox-runtime (``srt``) settings file.

Schema (sandbox-runtime ``SandboxRuntimeConfigSchema``): ``network.allowedDomains``,
``network.deniedDomains``, ``network.allowAllUnixSockets``,
``filesystem.denyRead``, ``filesystem.allowWrite``, ``filesystem.denyWrite``.
srt expands ``~`` itself, so home paths stay portable.

What srt cannot express is listed under the top-level ``_unsupported`` key (srt
ignores unknown top-level keys) and returned to the caller for a warning.
"""

from __future__ import annotations

import json
from typing import Mapping

from ringfence.profiles.model import Profile

from .exportlib import (Export, own_dirs, policy_gaps, protected,
                        read_denied, srt_domains, writable_roots)


# srt sets TMPDIR to this directory for every command (on Linux and macOS) but does
# not make it writable by itself; on Linux its bwrap bind also needs it to exist.
SRT_TMPDIR = "/tmp/claude"


def render(profile: Profile, *, workspace: str, env: Mapping[str, str] | None = None) -> Export:
    unsupported: list[str] = []
    if not profile.sandbox:
        unsupported.append("profile runs with the sandbox off (full host access); srt always "
                           "sandboxes, so this export is the closest restrictive reading")
    net = profile.network
    if net.mode == "proxy":
        allowed = srt_domains(net.allow, deny=False, unsupported=unsupported)
        denied = srt_domains(net.deny, deny=True, unsupported=unsupported)
    else:
        allowed, denied = [], []
    unsupported += policy_gaps(
        profile,
        rules="{n} command rule(s) (allow/ask/deny): srt has no command policy; use the "
              "claude-code export for permission rules",
        syscalls="seccomp denials beyond Unix sockets (io_uring, mount, nested user "
                 "namespaces, ptrace, bpf, keyctl, perf_event_open) are srt's own choice",
        host="host requests ({host}): srt has no approval flow")
    settings = {
        "network": {
            "allowedDomains": allowed,
            "deniedDomains": denied,
            "allowAllUnixSockets": bool(net.allow_unix_sockets),
        },
        "filesystem": {
            # ringfence's own dirs (ledger, grants, config): hidden as in `ringfence run`.
            "denyRead": list(dict.fromkeys(read_denied(profile, workspace, env) + own_dirs(env))),
            # srt's temp dir, or mktemp fails: srt exports TMPDIR=/tmp/claude, /tmp is
            # read-only. macOS resolves /tmp to /private/tmp.
            "allowWrite": writable_roots(profile, workspace) + [SRT_TMPDIR,
                                                                "/private" + SRT_TMPDIR],
            "denyWrite": protected(profile, workspace),
        },
        "_setup": [f"mkdir -p -m 700 {SRT_TMPDIR}   # once, before srt runs: srt sets "
                   f"TMPDIR={SRT_TMPDIR} and, on Linux, binds it only if it exists"],
        "_unsupported": unsupported,
        "_source": f"ringfence profile {profile.name!r}",
    }
    return Export(json.dumps(settings, indent=2) + "\n", unsupported)
