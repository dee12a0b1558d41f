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
``build``, ``dist``, ``target``, a dot-named dir (or ``venv``, ``env``,
``virtualenv``, ``ENV``) holding ``pyvenv.cfg`` (a venv) or ``CACHEDIR.TAG``
(a marker is the run's own file: in ``tests/helpers/`` it exempts nothing),
and a package an installer unpacked (a new dir directly in
``node_modules``, ``node_modules/@scope``, ``site-packages``); a ``.gitignore``
inside such a dir is not judged at all. Such a dir that existed before the run
is not exempt.

The matcher follows gitignore(5) over-inclusively: ``*`` may cross ``/``, a
bracket expression (``[^x]``, ``[[:alpha:]]``, ``[a-z]``) matches any one
character, a backslash takes the next character literally, case is ignored
(``core.ignorecase``), a line's CR and unescaped trailing blanks are dropped as
git drops them, and a negation (``!``) never un-ignores (so a doubt holds); a
pattern with a ``/`` before its end is anchored to the file's directory, one
without matches a name at any depth; a trailing ``/`` matches directories only.
"""

from __future__ import annotations

import os
import posixpath
import stat

CACHES = frozenset({".pytest_cache", ".mypy_cache", ".ruff_cache", "__pycache__",
                    "node_modules", ".tox", ".nox", ".cache", ".eggs", "build", "dist",
                    "target"})
MARKERS = ("pyvenv.cfg", "CACHEDIR.TAG")
VENV_NAMES = frozenset({"venv", "env", "virtualenv", "ENV"})   # beside any dot-name
PACKAGE_DIRS = ("node_modules", "site-packages", "dist-packages")
MAX_SCAN = 50000
# files x added patterns matched at most (about a second): 40,000 patterns over 200
# files must not keep settle busy past its time bound (the judge is one step of it)
MAX_WORK = 1_000_000
MAX_PATTERNS = 5000


def _trim(line: str) -> str:
    """A line as git keeps it: less its CR, and less trailing blanks that no
    backslash escapes."""
    if line.endswith("\r"):
        line = line[:-1]
    end = len(line)
    while end and line[end - 1] == " " and not _escaped(line, end - 1):
        end -= 1
    return line[:end]


def _escaped(text: str, i: int) -> bool:
    n = 0
    while i - n - 1 >= 0 and text[i - n - 1] == "\\":
        n += 1
    return n % 2 == 1


def _regex(p: str):
    """``p`` (git's wildmatch syntax) as an over-inclusive, case-blind regex."""
    import re

    out, i = [], 0
    while i < len(p):
        c = p[i]
        if c == "\\":
            if i + 1 < len(p):
                out.append(re.escape(p[i + 1]))
            i += 2
        elif c == "*":
            out.append(".*")
            i += 1
        elif c == "?":
            out.append(".")
            i += 1
        elif c == "[":
            j = _bracket_end(p, i)
            out.append("." if j is not None else re.escape(c))
            i = j + 1 if j is not None else i + 1
        else:
            out.append(re.escape(c))
            i += 1
    return re.compile("".join(out), re.IGNORECASE | re.DOTALL)


def _bracket_end(p: str, i: int) -> int | None:
    """The index of the ``]`` closing the bracket expression at ``p[i]``, or None."""
    j = i + 1
    if j < len(p) and p[j] in "!^":
        j += 1
    if j < len(p) and p[j] == "]":
        j += 1                              # a leading ] is a member
    while j < len(p):
        if p[j] == "\\":
            j += 2
            continue
        if p.startswith("[:", j):
            k = p.find(":]", j + 2)
            j = k + 2 if k != -1 else j + 1
            continue
        if p[j] == "]":
            return j
        j += 1
    return None


def _patterns(text: str, old_text: str) -> list[tuple[object, bool, bool, str]]:
    before = {_trim(x) for x in old_text.split("\n")}
    out = []
    for line in text.split("\n"):
        p = _trim(line)
        if p in before or not p or p.startswith("#") or p.startswith("!"):
            continue
        if len(out) >= MAX_PATTERNS:
            out.append(None)            # more than judged: the caller holds
            break
        dir_only = p.endswith("/") and not _escaped(p, len(p) - 1)
        p = p.rstrip("/") if dir_only else p
        anchored = "/" in p
        out.append((_regex(p.lstrip("/")), dir_only, anchored, p))
    return out


def _ignored(path: str, pats) -> str | None:
    parts = path.split("/")
    for i in range(len(parts)):
        q = "/".join(parts[:i + 1])
        is_dir = i < len(parts) - 1
        for rx, dir_only, anchored, p in pats:
            if dir_only and not is_dir:
                continue
            if rx.fullmatch(q if anchored else parts[i]):
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
    if not (name.startswith(".") or name in VENV_NAMES):
        # A marker is a file the run itself writes: only where a person expects a
        # tool's hidden dir (pytest never collects from a dot dir) does it exempt,
        # never in tests/helpers/ beside a conftest.py.
        return False
    return any(view.entry(f"{rel}/{m}" if rel else m) is not None for m in MARKERS)


def _exempt_base(view, base: str) -> bool:
    parts = base.split("/") if base else []
    return any(exempt_dir(view, "/".join(parts[:i + 1])) for i in range(len(parts)))


def judge(view, rel: str, text: str, old_text: str) -> str | None:
    """None, or why the ``.gitignore`` at ``rel`` is held."""
    pats = _patterns(text, old_text)
    if not pats or view is None or view.upper is None:
        return None
    if pats[-1] is None:
        return f"adds more than {MAX_PATTERNS} ignore patterns (more than ringfence checks)"
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
            if seen > MAX_SCAN or seen * len(pats) > MAX_WORK:
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
