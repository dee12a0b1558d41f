"""Judges of what a sandbox wrote inside a git directory, beyond its config.

* redirects (a gitfile, ``commondir``, ``gitdir``): the target is resolved from the
  workspace one component at a time without following a link
  (:func:`discovery.resolve`) and must be a ``.git`` directory (or its
  ``worktrees/<n>`` / ``modules/<n>`` git dirs) inside the workspace;
* ``objects/info/alternates``: every line is resolved the same way and must stay
  inside the workspace;
* the index: a run that sets assume-unchanged or skip-worktree on an entry hides
  its own edits from the host's ``git status`` and ``git diff``; held, naming the
  entries. A split index (``link`` extension) keeps the flags in another file:
  held too;
* ``info/exclude`` and ``info/sparse-checkout``: a line added there hides a file
  the run created from ``git status``; held, naming the lines.

Each returns None when the change is harmless, else why it is held.
"""

from __future__ import annotations

import os
import posixpath

from .discovery import View, resolve


def _where(rel: str, target: str, workspace: str, view: View | None):
    """(workspace-relative target, None) or (None, why)."""
    base = posixpath.dirname(rel)
    if view is not None:
        return resolve(view, base, target)
    where = posixpath.normpath(target if posixpath.isabs(target)
                               else posixpath.join(workspace, base, target))
    if where == workspace:
        return "", None
    if not where.startswith(workspace.rstrip("/") + "/"):
        return None, f"outside the workspace ({target})"
    return os.path.relpath(where, workspace), None


def _read_target(rel: str, text: str) -> str | None:
    """The path git itself reads (setup.c): a gitfile is ``gitdir: PATH`` with
    trailing whitespace trimmed; ``commondir``/``gitdir`` lose trailing newlines
    only. None when ringfence and git could read it differently."""
    if posixpath.basename(rel) == ".git":
        if not text.startswith("gitdir: "):
            return None
        target = text[len("gitdir: "):].rstrip()
    else:
        target = text.rstrip("\r\n")
    if not target or "\n" in target or "\r" in target or "\0" in target \
            or target != target.strip():
        return None
    return target


def judge_redirect(rel: str, text: str, workspace: str, view: View | None) -> str | None:
    target = _read_target(rel, text)
    if target is None:
        return "a git redirect ringfence cannot read exactly as git does"
    where, why = _where(rel, target, workspace, view)
    if why:
        return f"points git {why}"
    parts = where.split("/") if where else []
    if ".git" not in parts:
        return f"points git at a directory that is not a .git directory ({target})"
    # Only where git itself points: a .git dir, or its worktrees/<n> and
    # modules/<n>(/modules/<m>...) git dirs; never a made-up dir inside .git.
    rest = parts[len(parts) - parts[::-1].index(".git"):]
    if len(rest) % 2 or any(rest[i] not in ("worktrees", "modules") for i in range(0, len(rest), 2)):
        return f"points git at a directory that is not a .git directory ({target})"
    return None


def judge_alternates(rel: str, text: str, old_text: str, workspace: str,
                     view: View | None) -> str | None:
    # Relative lines are relative to the object directory (gitrepository-layout(5)).
    objects_rel = posixpath.dirname(posixpath.dirname(rel))
    before = set(old_text.splitlines())
    for line in text.splitlines():
        s = line.strip()
        if not s or s.startswith("#") or line in before:
            continue
        if s.startswith('"'):
            return f"a quoted alternate ringfence does not judge ({s})"
        where, why = _where(f"{objects_rel}/x", s, workspace, view)
        if why:
            return f"an alternate object store {why}"
    return None


def judge_index(new: bytes, old: bytes | None) -> str | None:
    from ringfence.staging.git.index import parse_entries

    got = parse_entries(new)
    if got is None:
        return "an index ringfence cannot read (its entry flags cannot be checked)"
    entries, exts = got
    prev = parse_entries(old) if old else None
    had = {name: (av, sw) for name, av, sw in prev[0]} if prev else {}
    if b"link" in exts and not (prev and b"link" in prev[1]):
        return "a split index (its entry flags live in another file ringfence does not judge)"
    hidden = []
    for name, av, sw in entries:
        oav, osw = had.get(name, (False, False))
        if av and not oav:
            hidden.append(f"assume-unchanged {name}")
        if sw and not osw:
            hidden.append(f"skip-worktree {name}")
    if hidden:
        more = f" and {len(hidden) - 5} more" if len(hidden) > 5 else ""
        return ("sets index flags that hide edits from git status and git diff: "
                + ", ".join(hidden[:5]) + more)
    return None


def judge_exclude(rel: str, text: str, old_text: str) -> str | None:
    before = set(old_text.splitlines())
    added = [ln for ln in text.splitlines()
             if ln not in before and ln.strip() and not ln.lstrip().startswith("#")]
    if rel.endswith("sparse-checkout") and text != old_text:
        return "changes the sparse-checkout patterns (which files git shows)"
    if added:
        more = f" and {len(added) - 5} more" if len(added) > 5 else ""
        return "hides files from git status: " + ", ".join(added[:5]) + more
    return None
