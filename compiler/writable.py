"""Which workspaces a profile may make writable: the one check `run` and every export share.

`ringfence run` and `ringfence profile compile … --format srt|seatbelt|claude-code|bwrap|json`
both turn ``{workspace}`` into a writable root. A workspace that does not exist
(RF609), or that is ``/`` or contains a home directory (``$HOME`` or the account's
home in the password database; RF616) is refused in both, in every sandboxed
profile (read-only too: Observe at ``~`` would show every secret the credential
table does not name), so an export can never say ``allowWrite: ["/"]`` where
`run` would refuse.
"""

from __future__ import annotations

import os

from ringfence.profiles.model import Profile
from ringfence.rfcore.errors import RingfenceError, SandboxError


def refuse_unusable_workspace(profile: Profile, workspace: str, home: str, *,
                              error: type[RingfenceError] = SandboxError,
                              action: str = "nothing was run") -> None:
    """Raise ``error`` (RF609 / RF616) if ``workspace`` cannot be the writable project."""
    if not os.path.isdir(workspace):
        raise error(f"workspace {workspace} is not an existing directory; {action} (RF609)",
                    hint="pass --workspace DIR with a directory that exists")
    if not profile.sandbox:
        return
    real = os.path.realpath(workspace)
    for h in _homes(home):
        if real == "/" or h == real or h.startswith(real.rstrip("/") + "/"):
            raise error(f"workspace {workspace} is / or contains a home directory ({h}); "
                        f"a sandbox would see (or write) the whole home, not just the "
                        f"credential table's files; {action} (RF616)",
                        hint="run from the project directory or pass --workspace DIR")
    if "{workspace}" not in profile.filesystem.writable:
        return
    system = _system_dir(real)
    if system:
        raise error(f"workspace {workspace} is the system directory {system} (or inside "
                    f"it), whose files the host runs or obeys; refusing to make it "
                    f"writable; {action} (RF616)",
                    hint="run from the project directory or pass --workspace DIR")


def _homes(home: str) -> list[str]:
    """$HOME and the account's home from the password database (compiler/host.py's
    ``other_homes``): a run with HOME pointing elsewhere must not get the real one."""
    import pwd

    out = [os.path.realpath(home)]
    try:
        out.append(os.path.realpath(pwd.getpwuid(os.getuid()).pw_dir))
    except KeyError:
        pass
    return [h for h in dict.fromkeys(out) if h and h != "/"]


# The host's own directories (issue 23): what the machine executes (/usr, /bin, /lib,
# /boot), obeys (/etc) or is (/proc, /sys, /dev, /run). A project never lives there.
# Projects do live under /usr/src and /usr/local/src (container images), and under
# /var/lib (CI workspaces): those stay allowed.
SYSTEM_DIRS = ("/etc", "/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32",
               "/boot", "/dev", "/proc", "/sys", "/run")
PROJECT_DIRS = ("/usr/src", "/usr/local/src")


def _system_dir(real: str) -> str | None:
    if any(real.startswith(d + "/") for d in PROJECT_DIRS):
        return None
    for d in SYSTEM_DIRS:
        if real == d or real.startswith(d + "/"):
            return d
    return None


def _under(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip("/") + "/")


def refuse_private_state_inside(profile: Profile, workspace: str, home: str, env) -> None:
    """ringfence's private state (ledger, grants, stages, the mask cache and its key)
    never sits inside what a sandbox may write: a run that could rewrite them could
    forge a grant or unmask a secret. Refused with RF645 (exit 125), whatever
    RINGFENCE_HOME / XDG_STATE_HOME / XDG_CACHE_HOME say. (A writable root inside
    the workspace is staged with it: compile drops its own bind, RF646.)"""
    if not profile.sandbox:
        return
    from ringfence.profiles.roots import _tooling_dir, _writable_templates, expand
    from ringfence.rfcore.paths import pattern_cache_dir, state_dir, tooling_dir

    ws = os.path.realpath(workspace)
    ctx = {"workspace": ws, "tooling": _tooling_dir(profile, home, tooling_dir(env)),
           "home": home}
    roots = [os.path.realpath(p) for t in _writable_templates(profile)
             if (p := expand(t, **ctx))]
    state, cache = os.path.realpath(state_dir(env)), os.path.realpath(pattern_cache_dir(env))
    stages = os.path.join(state, "stage")
    for private, what in ((state, "state dir (ledger, grants, stages)"),
                          (cache, "mask and pattern cache")):
        for root in roots:
            # private inside a writable root; or a root that IS it, or holds stages
            if _under(private, root) or _under(root, stages) or _under(root, cache):
                raise SandboxError(
                    f"ringfence's {what} {private} is inside the writable {root} (or holds "
                    "it): a sandboxed run could rewrite it; nothing was run (RF645)",
                    hint="point RINGFENCE_HOME (or XDG_STATE_HOME / XDG_CACHE_HOME) "
                         "outside the workspace and the tooling dir")
