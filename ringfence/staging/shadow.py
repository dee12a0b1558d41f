"""PATH shadowing: a program the run puts where the host's shell looks first.

A workspace directory that a shell puts on ``PATH`` (an activated venv's
``bin``, ``node_modules/.bin`` through npm scripts and direnv layouts, ``bin/``,
the dirs ``.envrc`` names with ``PATH_add``) turns a new ``bin/git`` into the
host's ``git``. So a new or replaced executable file (or link) there whose name
is a program on the host's ``PATH`` outside the workspace is held.

Decision for a venv's ``bin`` (a ``pyvenv.cfg`` beside it) and
``node_modules/.bin``, where installers write programs on every install
(``python -m venv .venv && pip install x``, ``npm install``): only a name found
in the system's own dirs (``/bin``, ``/usr/bin``, ``/sbin``, ``/usr/sbin``: git,
sh, ls, make, ssh...) is held there, and in a venv never ``python*``, ``pip*``,
``activate*``, which ``venv`` and ``pip`` themselves write. (So a console script
named like a system program, Debian's ``/usr/bin/pytest``, is held for a
person.) Elsewhere (``bin/``, ``PATH_add`` dirs) any name on the host's
``PATH`` outside the workspace is held.
"""

from __future__ import annotations

import fnmatch
import os
import posixpath
import stat

SYSTEM_DIRS = ("/bin", "/usr/bin", "/sbin", "/usr/sbin")
VENV_OWN = ("python", "python3", "python3.*", "pip", "pip3", "pip3.*", "activate",
            "activate.*", "Activate.ps1", "deactivate", "pypy*", "easy_install*")


class _Host:
    def __init__(self, workspace: str, path: str) -> None:
        ws = os.path.realpath(workspace)
        self.all: set[str] = set()
        self.system: set[str] = set()
        for d in [p for p in path.split(":") if p] + list(SYSTEM_DIRS):
            real = os.path.realpath(d)
            if real == ws or real.startswith(ws + "/"):
                continue
            try:
                names = os.listdir(d)
            except OSError:
                continue
            self.all.update(names)
            if d in SYSTEM_DIRS:
                self.system.update(names)


def _envrc_dirs(workspace: str) -> list[str]:
    """Dirs the pre-run top ``.envrc`` adds with ``PATH_add`` / ``path_add PATH``."""
    try:
        with open(os.path.join(workspace, ".envrc"), encoding="utf-8",
                  errors="replace") as fh:
            lines = fh.read(1 << 20).splitlines()
    except OSError:
        return []
    out = []
    for line in lines:
        if "PATH=" in line:              # export PATH="$PWD/tools/bin:$PATH"
            for m in line.split("PATH=", 1)[1].split(":"):
                m = m.strip().strip("\"'")
                for pre in ("$PWD/", "${PWD}/", "$(pwd)/", "$(expand_path "):
                    if m.startswith(pre):
                        m = m[len(pre):].rstrip(")").rstrip("/")
                        if m and not m.startswith(("/", "$", "~")):
                            out.append(posixpath.normpath(m))
        words = line.split("#", 1)[0].split()
        if len(words) >= 2 and words[0] == "PATH_add":
            args = words[1:]
        elif len(words) >= 3 and words[0] == "path_add" and words[1] == "PATH":
            args = words[2:]
        else:
            continue
        for a in args:
            a = a.strip("\"'").removeprefix("$PWD/").removeprefix("./").rstrip("/")
            if a and not a.startswith(("/", "$", "~")):
                out.append(posixpath.normpath(a))
    return out


def _venv_root(view, d: str) -> str | None:
    if posixpath.basename(d) not in ("bin", "Scripts"):
        return None
    root = posixpath.dirname(d)
    return root if view.entry(f"{root}/pyvenv.cfg" if root else "pyvenv.cfg") else None


def _path_like(registry, d: str) -> tuple[bool, bool, str | None]:
    """(on a shell's PATH, an installer's dir, venv root)."""
    venv = _venv_root(registry.post, d)
    if venv is not None:
        return True, True, venv
    if posixpath.basename(d) == ".bin" and posixpath.basename(posixpath.dirname(d)) == \
            "node_modules":
        return True, True, None
    if d in ("bin", ".venv/bin", "venv/bin", ".direnv/bin"):
        return True, False, None
    if registry.envrc_path is None:
        registry.envrc_path = _envrc_dirs(registry.workspace)
    return d in registry.envrc_path, False, None


def shadow_reason(registry, rel: str, st) -> str | None:
    if st is None or not (stat.S_ISLNK(st.st_mode)
                          or (stat.S_ISREG(st.st_mode) and st.st_mode & 0o111)):
        return None
    if registry.post is None or registry.pre is None:
        return None
    d, _, name = rel.rpartition("/")
    if stat.S_ISLNK(st.st_mode) and registry.pre.entry(rel) is None and (
            _path_like(registry, rel)[0] or rel in (".venv", "venv")):
        return (f"a new symbolic link where a directory a shell puts on PATH is ({rel}): "
                "what it points at would run in place of the host's programs")
    on_path, installer, venv = _path_like(registry, d)
    if not on_path:
        return None
    if registry.host is None:
        registry.host = _Host(registry.workspace, registry.host_path)
    host = registry.host
    if installer:
        if venv is not None and any(fnmatch.fnmatchcase(name, p) for p in VENV_OWN):
            return None
        if name not in host.system:
            return None
    elif name not in host.all:
        return None
    return (f"an executable named like the host's own {name!r} in {d}/, a directory a "
            "shell puts on PATH: it would run in its place")
