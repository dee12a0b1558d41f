"""Asks that can succeed (issue 20 §7): what the hook says before it wraps a call
that ringfence knows will fail.

* No usable workspace: Claude Code started in ``/`` or the home directory, so
  every wrapped run would be refused (RF616). The hook asks instead, with the
  reason and the fix, rather than wrapping a command that cannot run.
* An asked command that needs a host the profile's network cannot reach: a
  ``git push`` (fetch, pull, clone) to a remote the proxy blocks, or over ssh
  (the sandbox has no network but the proxy, and ``~/.ssh`` is hidden). A yes
  would only buy a 403, so the ask says so and offers the host route.

Runs on the hook path: stdlib + our packages, and only for calls that ask or wrap.
"""

from __future__ import annotations

import os

from ringfence.rfcore.lazyre import lazy

_NAME = lazy(r"[A-Za-z0-9][A-Za-z0-9.+-]{0,252}")
# git subcommands that talk to a remote named by their first operand.
_REMOTE_SUBS = frozenset({"push", "fetch", "pull", "clone", "ls-remote"})


def unusable_workspace(profile, workspace: str, env) -> str | None:
    """Why ``ringfence run`` would refuse this workspace, with the fix; or None."""
    from ringfence.compiler.writable import refuse_unusable_workspace
    from ringfence.rfcore.errors import RingfenceError

    home = env.get("HOME") or os.path.expanduser("~")
    try:
        refuse_unusable_workspace(profile, workspace, home, action="not wrapped")
    except RingfenceError as exc:
        return (f"{exc}; fix: start Claude Code in the project directory (or set "
                "CLAUDE_PROJECT_DIR to it)")
    return None


def _remote_url(workspace: str, name: str) -> str | None:
    """``remote.NAME.url`` from ``WORKSPACE/.git/config`` (a plain read: no git runs)."""
    import stat

    path = os.path.join(workspace, ".git", "config")
    try:
        # Never block on a FIFO or follow a link: a regular file, read without waiting.
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW)
    except OSError:
        return None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        lines = os.read(fd, 256 * 1024).decode("utf-8", "replace").splitlines()
    except OSError:
        return None
    finally:
        os.close(fd)
    section = None
    for line in lines:
        t = line.strip()
        if t.startswith("["):
            section = t.strip("[]").strip()
            continue
        if section in (f'remote "{name}"',) and t.split("=", 1)[0].strip() == "url":
            return t.split("=", 1)[1].strip() if "=" in t else None
    return None


def _url_host(url: str) -> tuple[str | None, str]:
    """``(host, scheme)`` of a git URL: https://h/x, ssh://u@h/x, u@h:x (scp-like)."""
    if "://" in url:
        scheme, rest = url.split("://", 1)
        host = rest.split("/", 1)[0].rsplit("@", 1)[-1].split(":", 1)[0]
        return host or None, scheme.lower()
    if ":" in url and not url.startswith(("/", ".")):
        return url.split(":", 1)[0].rsplit("@", 1)[-1] or None, "ssh"
    return None, "file"


def _operand(argv, sub_index: int) -> str | None:
    for a in argv[sub_index + 1:]:
        if not a.startswith("-"):
            return a
    return None


def blocked_hosts(verdict, profile, workspace: str) -> str | None:
    """The ask's note when a git command in ``verdict`` needs a host the sandbox of
    ``profile`` cannot reach, with the host route; or None."""
    from ringfence.profiles.domains import decide

    notes = []
    for cap in verdict.capabilities:
        parts = cap.key.split(" ")
        if len(parts) != 2 or parts[0].rsplit("/", 1)[-1] != "git" \
                or parts[1] not in _REMOTE_SUBS:
            continue
        argv = list(cap.argv)
        i = argv.index(parts[1]) if parts[1] in argv else len(argv)
        target = _operand(argv, i) or ("origin" if parts[1] != "clone" else None)
        if target is None:
            continue
        url = target if ("://" in target or "@" in target) else _remote_url(workspace, target)
        if url is None:
            continue
        host, scheme = _url_host(url)
        # The URL comes from a file in the workspace: only a plain host name and
        # scheme may reach the person's prompt, never free text.
        if host is None or scheme == "file" or not _NAME.fullmatch(host) \
                or not _NAME.fullmatch(scheme):
            continue
        if scheme not in ("http", "https"):
            notes.append(f"`{cap.key}` uses {scheme} to {host}: the '{profile.name}' sandbox "
                         "has no network but its HTTP proxy and hides ~/.ssh, so it would fail")
            continue
        port = 80 if scheme == "http" else 443
        allowed = profile.network.mode == "proxy" and decide(
            host, port, profile.network.allow, profile.network.deny)[0]
        if not allowed:
            notes.append(f"`{cap.key}` needs {host}, which the '{profile.name}' sandbox "
                         "cannot reach (its proxy would answer 403)")
    if not notes:
        return None
    return ("; ".join(notes) + "; a yes here would only fail. Host route: resend the call "
            "with dangerouslyDisableSandbox: true (judged as a host request), or run it "
            f"yourself in a terminal: ringfence run --host -c {_quote(verdict.command)}")


def _quote(text: str) -> str:
    import shlex

    return shlex.quote(text)


__all__ = ["blocked_hosts", "unusable_workspace"]
