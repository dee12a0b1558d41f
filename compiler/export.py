"""``ringfence profile compile NAME --format FMT``: one entry point for every export.

  bwrap        the bubblewrap argv (compiled spec → ``backends.bwrap.render``)
  json         the compiled SandboxSpec as JSON (``spec.to_json()``)
  srt          Anthropic sandbox-runtime settings (``backends.srt``)
  seatbelt     a macOS SBPL profile (``backends.seatbelt``)
  claude-code  a Claude Code settings.json block (``backends.claude_code``)

Where a format cannot express part of the profile, the output says so (a
comment or an ``_unsupported`` key) and :func:`export` repeats each item as a
warning on stderr. Nothing is dropped silently.
"""

from __future__ import annotations

import json
import os
import shlex
import sys
from typing import Callable

from ringfence.profiles.model import Profile
from ringfence.rfcore.errors import EXIT_USAGE, UsageError

from .backends.exportlib import Export

FORMATS = ("bwrap", "json", "srt", "seatbelt", "claude-code")

# Placeholders the bwrap export leaves for the caller, as shell expansions.
_ARGV = "@RINGFENCE_ARGV@"
_PROXY_DIR = "@RINGFENCE_PROXY_DIR@"
_SECCOMP_FD = 9


def render(profile: Profile, fmt: str, *, workspace: str, host=None, env=None) -> Export:
    """``env`` locates ringfence's own dirs for srt/seatbelt (default: os.environ)."""
    """The export text and the list of what the format could not express."""
    if fmt not in FORMATS:
        raise UsageError(f"unknown export format {fmt!r}",
                         hint=f"use one of: {', '.join(FORMATS)}")
    if fmt == "srt":
        from .backends import srt
        return srt.render(profile, workspace=workspace, env=env)
    if fmt == "seatbelt":
        from .backends import seatbelt
        return seatbelt.render(profile, workspace=workspace, env=env)
    if fmt == "claude-code":
        from ringfence.compiler.backends import claude_settings as claude_code
        return claude_code.render(profile, workspace=workspace)
    spec = _compile(profile, workspace, host)
    if fmt == "json":
        return Export(json.dumps(spec.to_json(), indent=2) + "\n",
                      [f"{n.code}: {n.message}" for n in spec.notes])
    return _bwrap(spec, arch=getattr(host, "arch", None) or _host_arch())


def _host_arch() -> str | None:
    from .seccomp import host_arch

    return host_arch()


class ExportUsageError(UsageError):
    """An export asked for something `run` would refuse: exit 2 (nothing exported)."""

    exit_code = EXIT_USAGE


def export(profile: Profile, fmt: str, *, workspace: str, host=None,
           warn: Callable[[str], None] | None = None, home: str | None = None) -> str:
    """Render ``profile`` as ``fmt``; each unsupported item is also warned on stderr.

    The workspace is checked as `run` checks it (RF609, RF616): an export never
    makes writable what a run would refuse to.
    """
    from ringfence.compiler.writable import refuse_unusable_workspace

    refuse_unusable_workspace(profile, workspace, home or os.path.expanduser("~"),
                              error=ExportUsageError, action="nothing was exported")
    result = render(profile, fmt, workspace=workspace, host=host)
    emit = warn or (lambda msg: print(msg, file=sys.stderr))
    for item in result.unsupported:
        emit(f"ringfence: warning: {fmt} export cannot express: {item}")
    return result.text


def _compile(profile: Profile, workspace: str, host):
    from .compile import compile_profile
    from .host import probe

    facts = host if host is not None else probe()
    if not facts.paths:
        facts = facts.for_profile(profile, workspace)
    return compile_profile(profile, workspace, facts)


_HANDOFF_FD = 8


def _seccomp_preamble(spec, arch: str | None) -> tuple[list[str], list[str]]:
    """Shell lines that write the seccomp program and open fd 9 themselves, so the
    printed script runs as it is (one filter: bwrap applies it to every process
    in the sandbox). The filter is embedded (base64): nothing of ringfence is needed to load
    it. ([], reason) when this architecture has no filter."""
    import base64

    from .seccomp import _ALIASES, build_filter

    if arch is None:
        return [], ["no seccomp filter for this architecture: the script runs without one"]
    names = sorted({arch, *(k for k, v in _ALIASES.items() if v == arch)})
    lines = ["set -eu",
             f'case "$(uname -m)" in {"|".join(names)}) ;; *)',
             f'  echo "ringfence export: this seccomp filter is for {arch}, not $(uname -m);'
             ' nothing was run" >&2; exit 125;; esac']
    programs = [(_SECCOMP_FD, spec.seccomp.deny_unix_sockets)]
    for fd, deny_unix in programs:
        data = base64.b64encode(build_filter(arch, deny_unix_sockets=deny_unix)).decode()
        body = [data[i:i + 76] for i in range(0, len(data), 76)]
        lines += [f'f=$(mktemp) || exit 125',
                  f"base64 -d > \"$f\" <<'RINGFENCE_SECCOMP'", *body, "RINGFENCE_SECCOMP",
                  f'exec {fd}<"$f"', 'rm -f "$f"']
    return lines, []


def _bwrap(spec, arch: str | None = None) -> Export:
    """A complete shell script: it writes and opens the seccomp filter itself; the
    caller supplies the argv (and, with a proxy, RINGFENCE_PROXY_DIR)."""
    from .backends import bwrap

    unsupported = [f"{n.code}: {n.message}" for n in spec.notes]
    if not spec.sandboxed:
        return Export("# the host profile runs without a sandbox: no bwrap command\n",
                      unsupported + ["sandbox off: there is no bwrap rendering"])
    # Passed variables keep their run-time value: "$NAME" in the shell line.
    passed = {op.name: f"@RINGFENCE_ENV:{op.name}@" for op in spec.ops
              if type(op).__name__ == "PassEnv"}
    preamble: list[str] = []
    if spec.seccomp:
        preamble, gaps = _seccomp_preamble(spec, arch)
        unsupported += gaps
    have_filter = bool(preamble)
    argv = bwrap.render(spec, [_ARGV], env=passed,
                        seccomp_fd=_SECCOMP_FD if have_filter else None,
                        proxy_dir=_PROXY_DIR if spec.proxy else None, inline_env=True,
                        handoff_fd=_HANDOFF_FD if spec.proxy else None)
    envwords = {v: f'"${k}"' for k, v in passed.items()}
    header = ["#!/bin/sh",
              f"# ringfence profile {spec.profile!r} as a bubblewrap command line.",
              f"# spec digest {spec.digest()}"]
    header.append("# usage: sh THIS.sh PROGRAM [ARGS...]   (runs it in the sandbox)")
    if spec.proxy:
        header.append(f"# RINGFENCE_PROXY_DIR must hold relay.py, and fd {_HANDOFF_FD} the "
                      "sandbox's end of a running ringfence proxy's hand-off socket pair "
                      "(ProxyServer.handoff_fd: domain filtering happens there)")
        preamble += [f'[ -f "${{RINGFENCE_PROXY_DIR:-}}/relay.py" ] && [ -S /dev/fd/{_HANDOFF_FD} ] || {{',
                     '  echo "ringfence export: RINGFENCE_PROXY_DIR must hold relay.py and fd '
                     f"{_HANDOFF_FD} a running ringfence proxy's hand-off socket; nothing was "
                     'run" >&2',
                     '  exit 125; }']
    rlimits = [op for op in spec.ops if type(op).__name__ == "Rlimit"]
    if rlimits:
        unsupported.append("rlimits are applied by ringfence's executor, not by bwrap: "
                           + ", ".join(f"{op.kind}={op.value}" for op in rlimits))
    stages = [op for op in spec.ops if type(op).__name__ == "Stage"]
    if stages:
        unsupported.append("the workspace's writes are staged in an overlay by ringfence's "
                           "executor (bwrap 0.8 has no --overlay): plain bwrap writes "
                           "straight into " + ", ".join(op.path for op in stages)
                           + " and nothing judges what the host obeys")
    words = []
    for word in argv:
        if word == _ARGV:
            words.append('"$@"')
        elif word == _PROXY_DIR:
            words.append('"$RINGFENCE_PROXY_DIR"')
        elif word in envwords:
            words.append(envwords[word])
        else:
            words.append(shlex.quote(word))
    header += [f"# UNSUPPORTED: {u}" for u in unsupported]
    lines: list[list[str]] = []
    for word in words:     # one option (with its arguments) per line
        if not lines or word.startswith("--") or word in ("python3", shlex.quote(bwrap.RELAY)):
            lines.append([word])
        else:
            lines[-1].append(word)
    body = "exec " + " \\\n  ".join(" ".join(line) for line in lines) + "\n"
    pre = "".join(line + "\n" for line in preamble)
    return Export("\n".join(header) + "\n" + pre + body, unsupported)
