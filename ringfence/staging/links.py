"""A new symbolic link the host would follow out of the workspace.

The host's tools write and read through links (``npm install`` into
``node_modules -> ~/.config/autostart``, an agent reading ``notes -> ~/.ssh``),
so a new link whose target, followed through the tree the host will see, leaves
the workspace is held, with two exceptions that cannot be written through by
accident: an executable file (a venv's ``bin/python`` -> the interpreter, wherever
pyenv or uv keep it) and a file in a system tree. Never a directory (a root host
writes through ``dist -> /usr/local/bin`` as root), a target that does not exist
(a write through it creates it), a writable root (the tooling dir) or
ringfence's state.
"""

from __future__ import annotations

import os
import posixpath
import stat

# A new symbolic link may point out of the workspace only at a file in these
# system trees, or at an executable file (a venv's bin/python -> the interpreter,
# wherever pyenv or uv keep it); never at a directory, never into a writable root
# (the tooling dir) or ringfence's state: the host's tools would write through it
# (``node_modules -> ~/.config/autostart``) or read what the sandbox chose.
SYSTEM_PREFIXES = ("/usr/", "/bin/", "/sbin/", "/lib/", "/lib32/", "/lib64/", "/libx32/",
                   "/nix/store/", "/etc/alternatives/")


def _under(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip("/") + "/")


def judge_link(rel: str, target: str, view, guarded: tuple[str, ...] = ()) -> str | None:
    """A new symbolic link anywhere: held when it points out of the workspace
    (following the links it meets in the tree the host will see). ``guarded``:
    real paths a link must never reach (writable roots, ringfence's state)."""
    if view is None:
        return None
    where, out = view.realpath(posixpath.dirname(rel), target)
    if where is not None:
        return None
    why = f"a symbolic link out of the workspace ({target})"
    target = out or target        # where a chain of links leaves the workspace
    if not target.startswith("/") or ".." in target.split("/"):
        return why
    real = os.path.realpath(target)
    if any(_under(real, g) for g in guarded) or _under(real, view.workspace):
        return why + ": into a directory the sandbox could write"
    try:
        st = os.stat(real)
    except OSError:
        return why          # a dangling link: a write through it creates the target
    if stat.S_ISDIR(st.st_mode):
        # a root host writes through ``dist -> /usr/local/bin`` as root
        return why + ": at a directory"
    if posixpath.normpath(target).startswith(SYSTEM_PREFIXES) \
            and real.startswith(SYSTEM_PREFIXES):
        # where it REALLY leads: /usr/lib/ssl/private is a link to /etc/ssl/private
        return None
    if stat.S_ISREG(st.st_mode) and st.st_mode & 0o111:
        return None
    return why
