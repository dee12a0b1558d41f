"""A ``.gitignore`` that hides the run's own writes from the host's ``git status``.

A sandbox that writes ``tools/conftest.py`` and ``tools/.gitignore`` = ``*``
leaves a file pytest runs that ``git status`` never lists. So a new or changed
``.gitignore`` is held when a pattern it ADDS makes git ignore a file the same
run created or modified below its directory (read from the stage's upper dir:
O(the run's changes there), bounded).

Exempt, by decision: files inside a directory the run created WHOLE that is a
known tool cache or build output, the things ``.gitignore`` exists for: a dir
named ``.pytest_cache``, ``.mypy_cache``, ``.ruff_cache``, ``__pycache__``,
``node_modules``, ``.tox``, ``.nox``, ``.cache``, ``.eggs``, ``*.egg-info``,
``build``, ``dist``, ``target``, a dir holding ``pyvenv.cfg`` (a venv) or
``CACHEDIR.TAG``, and a package an installer unpacked (a new dir directly in
``node_modules``, ``node_modules/@scope``, ``site-packages``); a ``.gitignore``
inside such a dir is not judged at all. Such a dir that existed before the run
is not exempt.

The matcher follows gitignore(5) over-inclusively: ``*`` may cross ``/``, a
negation (``!``) never un-ignores (so a doubt holds); a pattern with a ``/``
before its end is anchored to the file's directory, one without matches a name
at any depth; a trailing ``/`` matches directories only.
"""

from __future__ import annotations

import fnmatch
import os
import posixpath
import stat

CACHES = frozenset({".pytest_cache", ".mypy_cache", ".ruff_cache", "__pycache__",
                    "node_modules", ".tox", ".nox", ".cache", ".eggs", "build", "dist",
                    "target"})
MARKERS = ("pyvenv.cfg", "CACHEDIR.TAG")
PACKAGE_DIRS = ("node_modules", "site-packages", "dist-packages")
MAX_SCAN = 50000


def _patterns(text: str, old_text: str) -> list[tuple[str, bool, bool]]:
    before = set(old_text.split("\n"))
    out = []
    for line in text.split("\n"):
        if line in before:
            continue
        p = line.rstrip(" ")
        if not p or p.startswith("#") or p.startswith("!"):
            continue
        if p.startswith("\\"):
            p = p[1:]
        dir_only = p.endswith("/")
        p = p.rstrip("/")
        anchored = "/" in p
        out.append((p.lstrip("/"), dir_only, anchored))
    return out


def _ignored(path: str, pats) -> str | None:
    parts = path.split("/")
    for i in range(len(parts)):
        q = "/".join(parts[:i + 1])
        is_dir = i < len(parts) - 1
        for p, dir_only, anchored in pats:
            if dir_only and not is_dir:
                continue
            if fnmatch.fnmatchcase(q if anchored else parts[i], p):
                return p
    return None


def exempt_dir(view, rel: str) -> bool:
    """A directory the run created whole that is a tool cache or build output, or
    a package an installer unpacked (a new dir in ``node_modules``/``site-packages``)."""
    if view.pre_is_dir(rel):
        return False
    name = posixpath.basename(rel)
    if name in CACHES or name.endswith(".egg-info"):
        return True
    parent = posixpath.dirname(rel)
    if parent.startswith("@") or "/@" in parent:
        parent = posixpath.dirname(parent)              # node_modules/@scope/pkg
    if posixpath.basename(parent) in PACKAGE_DIRS:
        return True
    return any(view.entry(f"{rel}/{m}" if rel else m) is not None for m in MARKERS)


def _exempt_base(view, base: str) -> bool:
    parts = base.split("/") if base else []
    return any(exempt_dir(view, "/".join(parts[:i + 1])) for i in range(len(parts)))


def judge(view, rel: str, text: str, old_text: str) -> str | None:
    """None, or why the ``.gitignore`` at ``rel`` is held."""
    pats = _patterns(text, old_text)
    if not pats or view is None or view.upper is None:
        return None
    base = posixpath.dirname(rel)
    if _exempt_base(view, base):
        return None
    from ringfence.staging.git.discovery import whiteout
    from ringfence.staging.git.repo_judges import _same_file

    stack = [base]
    seen = 0
    while stack:
        d = stack.pop()
        up = os.path.join(view.upper, d) if d else view.upper
        try:
            entries = list(os.scandir(up))
        except OSError:
            continue
        for e in entries:
            seen += 1
            if seen > MAX_SCAN:
                return "adds ignore patterns over more new files than ringfence checks"
            er = f"{d}/{e.name}" if d else e.name
            st = e.stat(follow_symlinks=False)
            if whiteout(st) or er == rel:
                continue
            if stat.S_ISDIR(st.st_mode):
                if not exempt_dir(view, er):
                    stack.append(er)
                continue
            low = os.path.join(view.workspace, er)
            try:
                lst = os.lstat(low)
            except OSError:
                lst = None
            if (lst is not None and stat.S_ISREG(st.st_mode) and stat.S_ISREG(lst.st_mode)
                    and st.st_size == lst.st_size and st.st_mtime_ns == lst.st_mtime_ns
                    and _same_file(e.path, low)):
                continue                     # a copy-up: not written by the run
            inner = er[len(base) + 1:] if base else er
            hit = _ignored(inner, pats)
            if hit is not None:
                return f"makes git ignore {er}, which this run wrote ({hit})"
    return None
