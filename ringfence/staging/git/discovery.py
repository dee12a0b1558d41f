"""Where git looks, by git's own rules: the merged view of a stage, git directories
found by their files, and redirect targets resolved without following a link.

git does not only read ``.git``. Its discovery (``setup.c``: ``is_git_directory``,
``read_gitfile_gently``, ``setup_git_directory_gently_1``) walks up from the
current directory and, in each directory, takes

* ``D/.git`` when it is a directory holding a repository, or a *gitfile*
  (``gitdir: PATH``);
* ``D`` itself when it holds a repository: a valid ``HEAD`` and ``objects/`` and
  ``refs/`` (in ``D``, or in the directory its ``commondir`` names). That is a bare
  repository, or a workspace laid out as one (``core.worktree`` puts the work tree
  anywhere).

So a sandbox that writes ``HEAD``, ``objects/`` and ``refs/`` anywhere makes a
repository the host's ``git status`` obeys (its ``config``, hooks, ``commondir``).
:class:`View` answers questions about the tree as the host will see it once the
stage is applied (upper over workspace, whiteouts and opaque dirs honoured), and
:meth:`View.is_git_dir` applies the rule by *names*, over-inclusively: an entry
called ``HEAD`` of any type (git follows links and reads any file) with
``commondir`` or with both ``objects`` and ``refs``. A directory named ``.git`` is
one whatever it holds.

:func:`resolve` follows a redirect (``commondir``, a gitfile, an alternate) the way
the kernel would, one component at a time from the workspace, but refuses every
symbolic link on the way instead of following it: a target that leaves the
workspace, crosses a link, or goes through something that is not a directory is
reported, and the judge holds it. :meth:`View.realpath` is the same walk that does
follow links (bounded), to tell where a new symbolic link really points.
"""

from __future__ import annotations

import os
import stat

OPAQUE = ("user.overlay.opaque", "trusted.overlay.opaque")
MAX_HOPS = 40          # the kernel's own limit on links followed in one lookup


def _lstat(path: str):
    try:
        return os.lstat(path)
    except (OSError, ValueError):
        return None


def _opaque(path: str) -> bool:
    for name in OPAQUE:
        try:
            if os.getxattr(path, name, follow_symlinks=False) == b"y":
                return True
        except OSError:
            continue
    return False


def whiteout(st) -> bool:
    return st is not None and stat.S_ISCHR(st.st_mode) and st.st_rdev == 0


class View:
    """The tree the host sees after the apply: ``upper`` over ``workspace``.

    ``upper=None`` is the workspace as it is now (the pre-run view). Per-directory
    answers are cached, so a deep tree costs O(entries), not O(depth^2).
    """

    def __init__(self, upper: str | None, workspace: str) -> None:
        self.upper = upper
        self.workspace = workspace
        self._dirs: dict[str, tuple[bool, bool]] = {"": (upper is not None, True)}
        self._git: dict[str, bool] = {}
        self._root: dict[str, str | None] = {}

    def _dir(self, rel: str) -> tuple[bool, bool] | None:
        """(upper has this dir, the workspace's dir shows through) or None when the
        merged ``rel`` is not a directory. Iterative: ancestors first, cached."""
        if rel in self._dirs:
            return self._dirs[rel]
        chain = []
        cur = rel
        while cur not in self._dirs:
            chain.append(cur)
            cur = cur.rpartition("/")[0]
        for r in reversed(chain):
            pstate = self._dirs[r.rpartition("/")[0]]
            out = None
            if pstate is not None:
                in_upper, lower = pstate
                ust = _lstat(f"{self.upper}/{r}") if in_upper else None
                if ust is not None:
                    if stat.S_ISDIR(ust.st_mode):
                        out = (True, lower and not _opaque(f"{self.upper}/{r}")
                               and self._lower_is_dir(r))
                elif lower and self._lower_is_dir(r):
                    out = (False, True)
            self._dirs[r] = out
        return self._dirs[rel]

    def _lower_is_dir(self, rel: str) -> bool:
        st = _lstat(os.path.join(self.workspace, rel))
        return st is not None and stat.S_ISDIR(st.st_mode)

    def entry(self, rel: str):
        """``(path on disk, lstat)`` of the merged ``rel``, or None when absent."""
        if rel == "":
            return self.workspace, _lstat(self.workspace)
        parent, _, _ = rel.rpartition("/")
        pstate = self._dir(parent)
        if pstate is None:
            return None
        in_upper, lower = pstate
        if in_upper:
            up = f"{self.upper}/{rel}"
            st = _lstat(up)
            if st is not None:
                return None if whiteout(st) else (up, st)
        if lower:
            low = os.path.join(self.workspace, rel)
            st = _lstat(low)
            if st is not None:
                return low, st
        return None

    def pre_is_dir(self, rel: str) -> bool:
        """``rel`` is a directory the workspace had and the stage did not replace."""
        state = self._dir(rel)
        return state is not None and state[1]

    def is_dir(self, rel: str) -> bool:
        return self._dir(rel) is not None

    def is_git_dir(self, rel: str) -> bool:
        hit = self._git.get(rel)
        if hit is None:
            hit = self.is_dir(rel) and (
                rel.rpartition("/")[2] == ".git"
                or (self._has(rel, "HEAD") and (self._has(rel, "commondir") or (
                    self._has(rel, "objects") and self._has(rel, "refs")))))
            self._git[rel] = hit
        return hit

    def _has(self, rel: str, name: str) -> bool:
        return self.entry(f"{rel}/{name}" if rel else name) is not None

    def git_root(self, rel_dir: str) -> str | None:
        """The innermost git directory at or above ``rel_dir`` (a directory), or None."""
        chain = []
        cur = rel_dir
        while True:
            if cur in self._root:
                found = self._root[cur]
                break
            chain.append(cur)
            if self.is_git_dir(cur):
                found = cur
                break
            if cur == "":
                found = None
                break
            cur = cur.rpartition("/")[0]
        for c in chain:          # each is at or below ``found``
            self._root[c] = found
        return found

    def realpath(self, rel_dir: str, target: str) -> tuple[str | None, str | None]:
        """Where a link in ``rel_dir`` pointing at ``target`` ends up, following links
        in the merged view (at most MAX_HOPS): (path relative to the workspace, None),
        or (None, the absolute path outside it where the chain leaves it; None when
        it climbs out with ``..`` or loops)."""
        out = _walk(self, rel_dir, target, follow=True)
        if out[1] is None:
            return out[0], None
        return None, out[1][len(_OUT):] if out[1].startswith(_OUT) else None


def to_parts(workspace: str, base_rel: str, target: str) -> list[str] | None:
    """The components of ``target`` (relative to ``base_rel``) from the workspace
    root, ``..`` kept; None for an absolute target outside the workspace."""
    if target.startswith("/"):
        ws = workspace.rstrip("/")
        if target == ws or target.startswith(ws + "/"):
            return target[len(ws):].split("/")
        return None
    return (base_rel.split("/") if base_rel else []) + target.split("/")


_OUT = "\0out:"


def _walk(view: View, base_rel: str, target: str, *, follow: bool, hops: int = 0):
    """(relative path, None) or (None, why)."""
    parts = to_parts(view.workspace, base_rel, target)
    if parts is None:
        return None, (_OUT + target if follow and hops else f"outside the workspace ({target})")
    stack: list[str] = []
    for i, part in enumerate(parts):
        if part in ("", "."):
            continue
        if part == "..":
            if not stack:
                return None, f"outside the workspace ({target})"
            stack.pop()
            continue
        rel = "/".join(stack + [part])
        hit = view.entry(rel)
        if hit is not None and stat.S_ISLNK(hit[1].st_mode):
            if not follow:
                return None, f"through a symbolic link ({rel})"
            if hops >= MAX_HOPS:
                return None, f"too many symbolic links ({target})"
            try:
                link = os.readlink(hit[0])
            except OSError:
                return None, f"an unreadable symbolic link ({rel})"
            rest = "/".join(parts[i + 1:])
            joined = link + ("/" + rest if rest else "")
            return _walk(view, "/".join(stack), joined, follow=True, hops=hops + 1)
        stack.append(part)
        last = i == len(parts) - 1 or all(p in ("", ".") for p in parts[i + 1:])
        if not last and (hit is None or not stat.S_ISDIR(hit[1].st_mode)):
            if hit is None:              # the rest does not exist: no link can be on it
                for p in parts[i + 1:]:
                    if p == "..":
                        if not stack:
                            return None, f"outside the workspace ({target})"
                        stack.pop()
                    elif p not in ("", "."):
                        stack.append(p)
                return "/".join(stack), None
            return None, f"through something that is not a directory ({rel})"
    return "/".join(stack), None


def resolve(view: View, base_rel: str, target: str) -> tuple[str | None, str | None]:
    """A redirect target, never following a link: (relative path, None) or
    (None, why it must be held)."""
    return _walk(view, base_rel, target, follow=False)
