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

from ringfence.profiles.model import Profile

from .exportlib import (Export, policy_gaps, protected,
                        read_denied, srt_domains, writable_roots)


def render(profile: Profile, *, workspace: str) -> Export:
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
            "denyRead": read_denied(profile, workspace),
            "allowWrite": writable_roots(profile, workspace),
            "denyWrite": protected(profile, workspace),
        },
        "_unsupported": unsupported,
        "_source": f"ringfence profile {profile.name!r}",
    }
    return Export(json.dumps(settings, indent=2) + "\n", unsupported)
