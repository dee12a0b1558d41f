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


def judge_index(new: bytes, old: bytes | None, rel: str = "", view: View | None = None) \
        -> str | None:
    from ringfence.staging.git.index import parse_entries, stat_data

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
    if not hidden and old and view is not None:
        hidden = [f"stat data of {n}" for n in _forged_stat(rel, new, old, view, stat_data)]
    if hidden:
        more = f" and {len(hidden) - 5} more" if len(hidden) > 5 else ""
        return ("sets index flags that hide edits from git status and git diff: "
                + ", ".join(hidden[:5]) + more)
    return None


def _forged_stat(rel: str, new: bytes, old: bytes, view: View, stat_data,
                 stale: list | None = None) -> list[str]:
    """Entries whose stat data changed while their object id did not, where the
    work tree file's content is not what it was: git status trusts the stat data
    and would never look at the new content (a refresh after a touch keeps the
    content: fine). Stat data whose mtime is not the file's, as it will be
    applied, goes to ``stale`` (a later run could write other bytes to match it;
    smudged before apply, not held: ``git stash pop`` leaves such entries). The
    work tree is taken as the git dir's parent (right for a ``.git`` dir)."""
    now, before = stat_data(new), stat_data(old)
    if now is None or before is None:
        return []
    gitdir = posixpath.dirname(rel)
    top = posixpath.dirname(gitdir)
    out = []
    for name, (st, oid) in now.items():
        was = before.get(name)
        if was is None or was[1] != oid or was[0] == st:
            continue
        path = f"{top}/{name}" if top else name
        hit = view.entry(path)
        if hit is None:
            continue
        lower = os.path.join(view.workspace, path)
        if hit[0] != lower and not _same_file(hit[0], lower):
            out.append(name)                  # the content changed, the index says not
        elif stale is not None and not _mtime_matches(st, hit[1]):
            # the same content, but stat data no version of the file had: set up
            # for a later run to write other bytes with these times and size
            stale.append(name)
    return out


def smudge_stale(data: bytes, rel: str, old: bytes | None, view: View | None) -> bytes:
    """The index with the stale entries' size set to 0 (git's own "smudge" of a
    racily clean entry): git then compares their content instead of trusting the
    stat data. The same bytes when there is none."""
    from ringfence.staging.git.index import stat_data

    stale: list[str] = []
    if old and view is not None:
        _forged_stat(rel, data, old, view, stat_data, stale)
    if not stale:
        return data
    from ringfence.staging.git.index import smudge

    return smudge(data, set(stale))


def _mtime_matches(entry: bytes, st) -> bool:
    sec = int.from_bytes(entry[8:12], "big")
    nsec = int.from_bytes(entry[12:16], "big")
    return sec == (int(st.st_mtime) & 0xffffffff) and (
        nsec == 0 or nsec == st.st_mtime_ns % 1_000_000_000)


def _same_file(a: str, b: str) -> bool:
    from ringfence.rfcore.fsops import same_bytes

    try:
        return same_bytes(a, b)
    except OSError:
        return False


def judge_packed_refs(new: bytes, old: bytes | None) -> str | None:
    before = set((old or b"").split(b"\n"))
    added = [ln for ln in new.split(b"\n") if ln not in before]
    bad = [ln.decode("utf-8", "replace").split(" ", 1)[-1] for ln in added
           if b" refs/replace/" in ln]
    if bad:
        return ("packs replace refs (git shows other objects in place of the real ones): "
                + ", ".join(bad[:5]))
    if any(ln.strip() and not ln.startswith((b"#", b"^")) and b" " not in ln.strip()
           for ln in added):
        return "a packed-refs line ringfence cannot read"
    return None


def tie_refs(plan) -> None:
    """A held ``packed-refs`` holds the loose refs the same run deleted in its git
    dir (``git pack-refs`` moves them there): applying those deletions alone would
    lose the branches."""
    dirs = [a.path[:-len("packed-refs")] for a in plan.actions
            if a.held and posixpath.basename(a.path) == "packed-refs"]
    if not dirs:
        return
    for i, a in enumerate(plan.actions):
        if a.op == "delete" and not a.held and any(a.path.startswith(d + "refs/")
                                                   or a.path == d + "refs" for d in dirs):
            plan.actions[i] = type(a)(a.op, a.path, "a ref the held packed-refs replaces",
                                     a.kind)
            plan.deleted[:] = [x for x in plan.deleted
                               if x != a.path and not x.startswith(a.path + "/")]


def judge_shallow(new: bytes, old: bytes | None) -> str | None:
    before = set((old or b"").split())
    added = [x.decode("ascii", "replace") for x in new.split() if x not in before]
    if added:
        return ("marks commits shallow (git log and blame stop there, as a graft would): "
                + ", ".join(added[:3]))
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
