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
