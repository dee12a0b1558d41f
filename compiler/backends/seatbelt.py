"""Export a profile as a macOS Seatbelt (SBPL) profile for ``sandbox-exec``.

Run it as::

  sandbox-exec -f profile.sb -D HOME="$HOME" -D TMPDIR="$TMPDIR" -- CMD...

Shape: ``(deny default)``; the allowances a working shell needs, each narrowed to
what srt (anthropic-experimental/sandbox-runtime, ``macos-sandbox-utils.ts``) and
Codex (openai/codex, ``seatbelt_base_policy.sbpl``) allow, and every one commented
with which of them does the same; then writes limited to the writable roots and
the temp dir (Seatbelt has no private /tmp); then the denials (read-denied paths,
macOS credential stores, ringfence's own dirs, always-protected paths). SBPL gives
precedence to the later matching rule, so denials come last. ``~`` becomes
``(param "HOME")``; globs become ``(regex ...)``.

Seatbelt matches *resolved* paths: ``/tmp``, ``/var`` and ``/etc`` are symlinks
into ``/private`` on macOS, and ``TMPDIR`` is ``/var/folders/…/T/``. Every such
path is written in both forms, so a rule never silently misses.

Network: Seatbelt filters by address, not by name. ringfence has no proxy on
macOS, so a proxy profile's export allows only TCP to ``localhost:PROXY_PORT``,
where the user must run a filtering proxy of their own; without one, every
connection fails (closed, never open).
"""

from __future__ import annotations

import re
from typing import Mapping

from ringfence.profiles.model import Profile

from .exportlib import (Export, own_dirs, policy_gaps, protected,
                        read_denied, writable_roots)

PROXY_PORT = 3128

# Mach services a shell and common tools look up (user and group names, logging,
# notifications, the per-user temp dir, Launch Services, fonts). srt allows these;
# Codex allows the first two (libinfo, PowerManagement). Left out on purpose: the
# keychain (com.apple.securityd.xpc, com.apple.SecurityServer, both in srt's list)
# and trustd (srt: only with its weaker network isolation).
MACH_SERVICES = (
    ("com.apple.system.opendirectoryd.libinfo", "srt, Codex"),
    ("com.apple.PowerManagement.control", "srt, Codex"),
    ("com.apple.system.opendirectoryd.membership", "srt"),
    ("com.apple.logd", "srt"),
    ("com.apple.system.logger", "srt"),
    ("com.apple.system.notification_center", "srt"),
    ("com.apple.distributed_notifications@Uv3", "srt"),
    ("com.apple.bsd.dirhelper", "srt"),
    ("com.apple.lsd.mapdb", "srt"),
    ("com.apple.coreservices.launchservicesd", "srt"),
    ("com.apple.fonts", "srt"),
    ("com.apple.FontObjectsServer", "srt"),
)

# sysctl names both srt and Codex allow (CPU, memory, OS version, limits), plus the
# prefixes ps/pgrep need (kern.proc.all: srt) and CPU features.
SYSCTL_NAMES = (
    "hw.activecpu", "hw.busfrequency_compat", "hw.byteorder", "hw.cacheconfig",
    "hw.cachelinesize_compat", "hw.cpufamily", "hw.cpufrequency", "hw.cpufrequency_compat",
    "hw.cputype", "hw.l1dcachesize_compat", "hw.l1icachesize_compat",
    "hw.l2cachesize_compat", "hw.l3cachesize_compat", "hw.logicalcpu", "hw.logicalcpu_max",
    "hw.machine", "hw.memsize", "hw.ncpu", "hw.nperflevels", "hw.packages", "hw.pagesize",
    "hw.pagesize_compat", "hw.physicalcpu", "hw.physicalcpu_max", "hw.tbfrequency_compat",
    "hw.vectorunit", "kern.argmax", "kern.hostname", "kern.maxfilesperproc", "kern.maxproc",
    "kern.osproductversion", "kern.osrelease", "kern.ostype", "kern.osvariant_status",
    "kern.osversion", "kern.secure_kernel", "kern.usrstack64", "kern.version",
    "machdep.cpu.brand_string", "sysctl.proc_cputype", "vm.loadavg")
SYSCTL_PREFIXES = (
    ("hw.optional.arm.", "srt, Codex"), ("hw.optional.armv8_", "srt, Codex"),
    ("hw.perflevel", "srt, Codex"), ("kern.proc.pgrp.", "srt, Codex"),
    ("kern.proc.pid.", "srt, Codex"), ("net.routetable.", "srt, Codex"),
    ("kern.proc.all", "srt"), ("machdep.cpu.", "srt"))

# macOS homes of what the Linux deny list names (a profile that hides the Linux
# store hides the Mac one too). Sources: Apple's and the browsers' documented
# profile locations.
MAC_CREDENTIALS = {
    "~/.local/share/keyrings": ("~/Library/Keychains",),
    "~/.password-store": ("~/Library/Keychains",),
    "~/.mozilla": ("~/Library/Application Support/Firefox", "~/Library/Caches/Firefox"),
    "~/.config/google-chrome": ("~/Library/Application Support/Google/Chrome",),
    "~/.config/chromium": ("~/Library/Application Support/Chromium",),
}
MAC_ALWAYS = ("~/Library/Cookies", "~/Library/Safari", "~/Library/Containers/com.apple.Safari",
              "~/Library/Application Support/BraveSoftware",
              "~/Library/Application Support/Microsoft Edge",
              "~/Library/Application Support/gcloud")

# macOS's top-level symlinks into /private (Seatbelt sees the resolved path).
_PRIVATE_LINKS = ("/tmp", "/var", "/etc")


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


def _forms(path: str) -> list[str]:
    """``path`` and, under a macOS /private symlink, its resolved form."""
    for link in _PRIVATE_LINKS:
        if path == link or path.startswith(link + "/"):
            return [path, "/private" + path]
    return [path]


def _filters(paths, *, subpath: bool = True) -> list[str]:
    return [f"  {_filter(form, subpath=subpath)}" for p in paths for form in _forms(p)]


def _credential_paths(profile: Profile, workspace: str) -> list[str]:
    denied = read_denied(profile, workspace)
    if not denied:
        return []
    out = [mac for linux in denied for mac in MAC_CREDENTIALS.get(linux, ())]
    return list(dict.fromkeys(out + list(MAC_ALWAYS)))


def _base() -> list[str]:
    lines = ["(version 1)", "(deny default)",
             ";; processes (srt, Codex)",
             "(allow process-exec)", "(allow process-fork)",
             "(allow signal (target same-sandbox))",
             ";; ps, pgrep: own processes only (srt, Codex)",
             "(allow process-info* (target same-sandbox))",
             ";; CoreFoundation preferences, read only (srt, Codex)",
             "(allow user-preference-read)",
             ";; host CPU info for os.cpus()/host_processor_info (Codex)",
             "(allow mach-host*)",
             ";; POSIX shared memory (srt) and semaphores: Python multiprocessing (srt, Codex)",
             "(allow ipc-posix-shm)", "(allow ipc-posix-sem)",
             ";; named Mach services only, never (allow mach-lookup) (srt, Codex)",
             "(allow mach-lookup"]
    lines += [f'  (global-name {_quote(name)})   ; {who}' for name, who in MACH_SERVICES]
    lines.append(")")
    lines += [";; named sysctls only, never (allow sysctl-read) (srt, Codex)", "(allow sysctl-read"]
    lines += [f"  (sysctl-name {_quote(n)})" for n in SYSCTL_NAMES]
    lines += [f"  (sysctl-name-prefix {_quote(n)})   ; {who}" for n, who in SYSCTL_PREFIXES]
    lines.append(")")
    lines += [";; terminal and null devices (srt: file-ioctl; Codex: /dev/null writes)",
              "(allow file-ioctl (literal \"/dev/null\") (literal \"/dev/zero\")",
              "  (literal \"/dev/random\") (literal \"/dev/urandom\") (literal \"/dev/tty\"))",
              ";; pseudo-terminals: openpty() and the /dev/ttysNNN a shell writes to (Codex;",
              ";; srt with allowPty)",
              "(allow pseudo-tty)",
              "(allow file-read* file-write* file-ioctl (literal \"/dev/ptmx\"))",
              "(allow file-read* file-write* file-ioctl (regex #\"^/dev/ttys[0-9]+$\"))",
              ";; reads: everything but the denials below (srt, Codex full-disk read)",
              "(allow file-read*)"]
    return lines


def render(profile: Profile, *, workspace: str, env: Mapping[str, str] | None = None) -> Export:
    unsupported: list[str] = []
    lines = [f";; ringfence profile {profile.name!r} as a macOS Seatbelt profile.",
             ';; sandbox-exec -f THIS.sb -D HOME="$HOME" -D TMPDIR="$TMPDIR" -- CMD...']
    lines += _base()
    if not profile.sandbox:
        unsupported.append("profile runs with the sandbox off (full host access); exported "
                           "as the closest restrictive reading")
    lines += [";; writable roots, the temp dir in both forms (TMPDIR is /var/folders/…,",
              ";; really /private/var/folders/…: srt allows both too)",
              "(allow file-write*"]
    lines += _filters(writable_roots(profile, workspace))
    lines += ['  (subpath (param "TMPDIR"))',
              '  (subpath (string-append "/private" (param "TMPDIR")))',
              '  (literal "/dev/null") (literal "/dev/tty")',
              '  (regex #"^/dev/fd/[0-9]+$"))']
    denied = read_denied(profile, workspace, env)
    if denied:
        lines.append(";; read-denied (credential stores and secrets)")
        lines.append("(deny file-read* file-write*")
        lines += _filters(denied)
        lines[-1] += ")"
    mac = _credential_paths(profile, workspace)
    if mac:
        lines.append(";; macOS credential stores: keychains, browser profiles and cookies")
        lines.append("(deny file-read* file-write*")
        lines += _filters(mac)
        lines[-1] += ")"
    lines.append(";; ringfence's own state and config (ledger, grants): hidden as by `run`")
    lines.append("(deny file-read* file-write*")
    lines += _filters(own_dirs(env))
    lines[-1] += ")"
    prot = protected(profile, workspace)
    if prot:
        lines.append(";; always write-protected inside writable roots")
        lines.append("(deny file-write*")
        lines += _filters(prot)
        lines[-1] += ")"
    net = profile.network
    if net.mode == "proxy" and net.allow:
        lines += [f";; network: only a filtering proxy on localhost:{PROXY_PORT}. ringfence has",
                  ";; NO proxy on macOS: run one there yourself, or every connection fails",
                  f'(allow network-outbound (remote tcp "localhost:{PROXY_PORT}"))']
        unsupported.append(f"domain allow/deny lists: Seatbelt filters by address only, and "
                           f"ringfence has no proxy on macOS; outbound traffic is limited to "
                           f"localhost:{PROXY_PORT}, where you must run a filtering proxy "
                           "yourself (and set HTTP(S)_PROXY); without one every connection "
                           "fails")
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
