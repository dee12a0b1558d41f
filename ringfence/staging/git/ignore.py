"""A ``.gitignore`` that hides the run's own writes from the host's ``git status``.

A sandbox that writes ``tools/conftest.py`` and ``tools/.gitignore`` = ``*``
leaves a file pytest runs that ``git status`` never lists. So a new or changed
``.gitignore`` is held when a pattern it ADDS makes git ignore a file the same
run created or modified below its directory (read from the stage's upper dir:
O(the run's changes there), bounded).

Exempt, by decision: files inside a directory the run created WHOLE that is a
known tool cache or build output, the things ``.gitignore`` exists for. Fully, where
no tool walks for code (pytest never collects them): a dir named ``.pytest_cache``,
``.mypy_cache``, ``.ruff_cache``, ``__pycache__``, ``node_modules`` (and a package
in it), ``.tox``, ``.nox``, ``.cache``, ``.eggs``, ``build``, ``dist``, and a
dot-named dir (or ``venv``, ``env``, ``virtualenv``, ``ENV``) holding ``pyvenv.cfg``
(a venv) or ``CACHEDIR.TAG`` (a marker is the run's own file: in ``tests/helpers/``
it exempts nothing). Partly, where pytest still collects (cargo's ``target``,
``*.egg-info``, a package in ``site-packages``): there only a ``conftest.py``
(:data:`IMPLICIT`) counts. Such a dir that existed before the run is not exempt.

The matcher follows gitignore(5) over-inclusively: ``*`` may cross ``/``, a
bracket expression (``[^x]``, ``[[:alpha:]]``, ``[a-z]``) matches any one
character, a backslash takes the next character literally, case is ignored
(``core.ignorecase``), a line's CR and unescaped trailing blanks are dropped as
git drops them (and a UTF-8 BOM), ``**/`` also matches no directory at all, a
negation (``!``) never un-ignores (so a doubt holds) and removing one counts as
adding its pattern; a
pattern with a ``/`` before its end is anchored to the file's directory, one
without matches a name at any depth; a trailing ``/`` matches directories only.
"""

from __future__ import annotations

import os
import posixpath
import stat

CACHES = frozenset({".pytest_cache", ".mypy_cache", ".ruff_cache", "__pycache__",
                    "node_modules", ".tox", ".nox", ".cache", ".eggs", "build", "dist"})
MARKERS = ("pyvenv.cfg", "CACHEDIR.TAG")
VENV_NAMES = frozenset({"venv", "env", "virtualenv", "ENV"})   # beside any dot-name
MAX_SCAN = 50000
# Code a tool loads by its name from any directory it walks, unasked (pytest imports
# every conftest.py in what it collects, and collects target/ and *.egg-info/): never
# exempt, even in a cache or build dir.
IMPLICIT = frozenset({"conftest.py"})
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
        elif p.startswith("**/", i) and (i == 0 or p[i - 1] == "/"):
            out.append("(?:.*/)?")          # zero or more directories: `**/x` is `x` too
            i += 3
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
    """The patterns a change ADDS, as (regex, dir only, anchored, text). A negation
    (``!p``) the change removes counts as adding ``p``: what it un-ignored is ignored
    again. A UTF-8 BOM at the start is skipped, as git does."""
    old_lines = [_trim(x) for x in old_text.removeprefix("\ufeff").split("\n")]
    new_lines = [_trim(x) for x in text.removeprefix("\ufeff").split("\n")]
    before, now = set(old_lines), set(new_lines)
    added = [p for p in new_lines if p not in before and not p.startswith("!")]
    added += [p[1:] for p in old_lines if p.startswith("!") and p not in now]
    out: list = []
    for p in added:
        if not p or p.startswith("#"):
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


def exempt_dir(view, rel: str) -> str | None:
    """How a directory the run created whole is exempt: "full" for a tool cache or
    build output no tool walks for code (pytest never collects it either), "implicit"
    for one pytest still collects (cargo's ``target``, ``*.egg-info``, a package in
    ``site-packages``), where only :data:`IMPLICIT` files count; None when it is
    not exempt."""
    if view.pre_is_dir(rel):
        return None
    name = posixpath.basename(rel)
    parent = posixpath.dirname(rel)
    if parent.startswith("@") or "/@" in parent:
        parent = posixpath.dirname(parent)              # node_modules/@scope/pkg
    if name == "target" or name.endswith(".egg-info") \
            or posixpath.basename(parent) in ("site-packages", "dist-packages"):
        return "implicit"
    if name in CACHES or posixpath.basename(parent) == "node_modules":
        return "full"
    if not (name.startswith(".") or name in VENV_NAMES):
        # A marker is a file the run itself writes: only where a person expects a
        # tool's hidden dir (pytest never collects from a dot dir) does it exempt,
        # never in tests/helpers/ beside a conftest.py.
        return None
    if any(view.entry(f"{rel}/{m}" if rel else m) is not None for m in MARKERS):
        return "full"
    return None


def _exempt_base(view, base: str) -> str | None:
    """The strongest exemption of ``base`` or a directory above it."""
    parts = base.split("/") if base else []
    found = None
    for i in range(len(parts)):
        how = exempt_dir(view, "/".join(parts[:i + 1]))
        if how == "full":
            return how
        found = found or how
    return found


def judge(view, rel: str, text: str, old_text: str) -> str | None:
    """None, or why the ``.gitignore`` at ``rel`` is held."""
    pats = _patterns(text, old_text)
    if not pats or view is None or view.upper is None:
        return None
    if pats[-1] is None:
        return f"adds more than {MAX_PATTERNS} ignore patterns (more than ringfence checks)"
    base = posixpath.dirname(rel)
    top = _exempt_base(view, base)
    if top == "full":
        return None
    from ringfence.staging.git.discovery import whiteout
    from ringfence.staging.git.repo_judges import _same_file

    stack = [(base, top == "implicit")]
    seen = 0
    while stack:
        d, only_implicit = stack.pop()
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
                how = exempt_dir(view, er)
                if how != "full":
                    stack.append((er, only_implicit or how == "implicit"))
                continue
            if only_implicit and e.name not in IMPLICIT:
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
