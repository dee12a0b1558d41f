"""A workspace whose git repository can push to a bare repository inside it.

Tests of hidden pushes (`git send-pack`, aliases, ...) assert on the host side:
after the run, ``branches(ws)`` must still be empty.
"""

from __future__ import annotations

import os
import subprocess


def pushable_workspace(tmp_path):
    """(workspace, env): a repository with one commit and an empty ``inrepo.git``."""
    ws = tmp_path / "ws"
    ws.mkdir()
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(tmp_path),
           "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@x", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@x"}
    for cmd in (["git", "init", "-q", "--bare", "inrepo.git"], ["git", "init", "-q"],
                ["git", "commit", "-q", "--allow-empty", "-m", "x"]):
        subprocess.run(cmd, cwd=ws, env=env, check=True)
    return ws, {**env, "RINGFENCE_HOME": str(tmp_path / "state")}


def branches(ws) -> str:
    """The branches of the bare repository: what a push would have created."""
    return subprocess.run(["git", "-C", str(ws / "inrepo.git"), "branch", "--list"],
                          capture_output=True, text=True, check=True).stdout
