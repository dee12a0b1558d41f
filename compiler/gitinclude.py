"""The files a served gitconfig includes from under a home, found on the host.

``~/.gitconfig`` (and git's XDG config, ``$GIT_CONFIG_GLOBAL``) is served inside
every sandbox with its secrets removed (``compiler/sanitize.py``), over a masked
home. An ``[include] path = ~/.gitconfig.d/user`` or an ``includeIf.*.path``
names another file in that home, which the sandbox cannot read: git there would
lose the identity and settings it holds. :func:`includes` reads the configs on
the host (the run's probe, ``HostFacts.for_profile``) and returns each file they
include, recursively to git's own depth, named as git inside will name it: ``~/``
is the home, a relative path is joined to the including file's directory (git's
``handle_path_include``). ``compiler/homemask.py`` serves each one the same
sanitized way when it lies under a home and its real path does too (a link out
of the home, or into a credential location, is never followed to it).

An ``includeIf`` is served whatever its condition: git inside evaluates it as the
host's git would (same paths), and the file is sanitized either way. Stdlib only
(``run`` path); a config that names no include is not parsed.
"""

from __future__ import annotations

import os
import posixpath

MAX_DEPTH = 10          # git's own bound (config.c, MAX_INCLUDE_DEPTH)
MAX_FILES = 64
MAX_BYTES = 1024 * 1024


def _inside(path: str, roots) -> bool:
    return any(path == r or path.startswith(r.rstrip("/") + "/") for r in roots)


def _targets(path: str, home: str) -> list[str]:
    """The include targets of the config file at ``path`` (read through its real
    path by the caller's check), as git names them."""
    try:
        with open(path, "rb") as fh:
            data = fh.read(MAX_BYTES + 1)
    except OSError:
        return []
    if len(data) > MAX_BYTES or b"include" not in data.lower():
        return []
    from ringfence.staging.git.config import ConfigSyntaxError, parse

    try:
        pairs = parse(data.decode("utf-8", "replace"))
    except ConfigSyntaxError:
        return []       # git itself refuses the file: nothing it includes is read
    out = []
    for key, value in pairs:
        low = key.lower()
        if not value or not low.endswith(".path") or not low.startswith(("include.", "includeif.")):
            continue
        if value.startswith("~/"):
            value = home + value[1:]
        elif value.startswith(("~", "%(")):
            continue                    # another user's home, git's runtime prefix
        elif not value.startswith("/"):
            value = posixpath.join(posixpath.dirname(path), value)
        out.append(value)
    return out


def includes(configs, home: str, roots) -> tuple[tuple[str, str], ...]:
    """``(including file, included file)`` for every include of ``configs``
    (absolute paths as git names them) and, recursively, of the included files
    that lie under ``roots`` (the homes and masked XDG dirs, as written) with
    their real path under a root too (never read otherwise)."""
    roots = tuple(dict.fromkeys([*roots, *(os.path.realpath(r) for r in roots)]))
    out: list[tuple[str, str]] = []
    seen: set[str] = set()
    todo = [(c, 0) for c in configs]
    while todo and len(seen) < MAX_FILES:
        path, depth = todo.pop(0)
        if path in seen:
            continue
        seen.add(path)
        if depth >= MAX_DEPTH:
            continue
        for target in _targets(path, home):
            dest = posixpath.normpath(target)
            out.append((path, dest))
            if _inside(dest, roots) and _inside(os.path.realpath(target), roots):
                todo.append((dest, depth + 1))
    return tuple(dict.fromkeys(out))
