"""Which directory is the workspace (the project) when none is given (SPEC §6).

One rule for ``ringfence run`` without ``--workspace``, for the Claude Code hook
and for ``profile show``:

1. ``CLAUDE_PROJECT_DIR`` when it is set, is a directory and holds the cwd
   (Claude Code sets it to the project the session was started in; its shell
   keeps its ``cd``, so the cwd is often a subdirectory);
2. else the git root of the cwd: the nearest ancestor holding ``.git``, a
   directory or a gitfile (worktrees, submodules). Found by walking up, never by
   running git: git would obey the very config files a sandbox may have written;
3. else the cwd.

Why the project and not the cwd: run from ``repo/sub``, a sandbox whose
workspace is ``sub`` cannot write ``repo/.git/index.lock``, so ``git commit``
fails with "Read-only file system".

A candidate that is ``/`` or the home directory itself is never taken by rules
1-2 (a dotfiles repository in ``~`` would make the whole home writable): the cwd
is used instead, and the reason says so.

stdlib only: this runs on every hook call and every ``ringfence run``.
"""

from __future__ import annotations

import os
from typing import Mapping

RULES = ("--workspace", "CLAUDE_PROJECT_DIR", "git root", "cwd")


def _inside(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip("/") + "/")


def _too_broad(path: str, env: Mapping[str, str]) -> bool:
    home = env.get("HOME") or os.path.expanduser("~")
    return path == "/" or (bool(home) and path == os.path.realpath(home))


def git_root(start: str) -> str | None:
    """The nearest ancestor of ``start`` (itself included) holding ``.git``."""
    path = start
    while True:
        if os.path.lexists(os.path.join(path, ".git")):
            return path
        parent = os.path.dirname(path)
        if parent == path:
            return None
        path = parent


def find_workspace(cwd: str | None = None, env: Mapping[str, str] | None = None,
                   explicit: str | None = None) -> tuple[str, str]:
    """``(workspace, why)``; ``why`` starts with one of :data:`RULES`."""
    env = os.environ if env is None else env
    if explicit:
        return os.path.abspath(explicit), "--workspace"
    cwd = os.path.realpath(cwd or os.getcwd())
    skipped = ""
    project = env.get("CLAUDE_PROJECT_DIR", "").strip()
    if project:
        real = os.path.realpath(project)
        if not os.path.isdir(real):
            skipped = f" (CLAUDE_PROJECT_DIR {project!r} is not a directory)"
        elif not _inside(cwd, real):
            skipped = f" (the cwd is outside CLAUDE_PROJECT_DIR {project!r})"
        elif _too_broad(real, env):
            skipped = f" (CLAUDE_PROJECT_DIR {project!r} is / or the home directory)"
        else:
            return real, f"CLAUDE_PROJECT_DIR={project}"
    root = git_root(cwd)
    if root is not None:
        if _too_broad(root, env):
            skipped += f" (git root {root} is / or the home directory; not used)"
        else:
            return root, f"git root of the cwd{skipped}"
    return cwd, f"cwd{skipped}"
