"""Which workspaces a profile may make writable: the one check `run` and every export share.

`ringfence run` and `ringfence profile compile … --format srt|seatbelt|claude-code|bwrap|json`
both turn ``{workspace}`` into a writable root. A workspace that does not exist
(RF609), or that is ``/`` or contains the home directory (RF616), is refused in
both, so an export can never say ``allowWrite: ["/"]`` where `run` would refuse.
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
    if not profile.sandbox or "{workspace}" not in profile.filesystem.writable:
        return
    real, home = os.path.realpath(workspace), os.path.realpath(home)
    if real == "/" or home == real or home.startswith(real.rstrip("/") + "/"):
        raise error(f"workspace {workspace} is / or contains your home directory "
                    f"({home}); refusing to make it writable; {action} (RF616)",
                    hint="run from the project directory or pass --workspace DIR")
    system = _system_dir(real)
    if system:
        raise error(f"workspace {workspace} is the system directory {system} (or inside "
                    f"it), whose files the host runs or obeys; refusing to make it "
                    f"writable; {action} (RF616)",
                    hint="run from the project directory or pass --workspace DIR")


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
