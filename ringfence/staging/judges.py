"""What the host obeys: the ONE registry, and the judge of a sandbox's change to it.

A sandboxed run's writes are staged (``ringfence/staging/mount.py``); before they reach the
workspace, every changed path is looked up here. A path the host will later
execute or obey *implicitly* (plain ``git status``, ``cd`` with direnv, opening
the editor or the agent) is applied only when its new content is judged
harmless; anything else is HELD for a person (``ringfence approve RUN_ID``).

The limit, on purpose: ``package.json`` scripts, Makefiles and source files are
code too, but the user runs them on purpose (``npm test``, ``make``); this
registry is about what tools run without being asked.

Each row: (pattern, kind, why the host obeys it). ``kind`` picks the judge:

* ``git-config``  harmless when every key it adds or changes satisfies
  ``not key_can_run_program`` (ringfence/staging/git/keys.py, the classifier's table);
* ``git-redirect`` (a gitfile ``.git``, ``commondir``, ``gitdir``): harmless when
  it points, inside the workspace, at a path with a ``.git`` component (so what it
  points at is itself judged here);
* ``hook``        harmless only as ``*.sample`` (git never runs those);
* ``attributes``  harmless unless an added line names a filter/diff/merge driver;
* ``gitmodules``  harmless when every key is plain data (path, url, branch...);
* ``git-data``    objects, refs, index, HEAD, logs...: data git reads, never runs;
* ``held``        always held: there is no content rule that makes it safe.
"""

from __future__ import annotations

import fnmatch
import os
import posixpath
import stat

from ringfence.staging.inside import git_kind, in_git_dir
from ringfence.staging.git.keys import (key_can_run_program, key_hides_changes,
                                        key_redirects_push, split_key, to_new_remote)
from ringfence.staging.registry import AT_TOP, BY_NAME, HOLD_DELETE, OTHER_TOOLS  # noqa: E402

KINDS = frozenset({"held", "git-config", "git-redirect", "hook", "attributes", "gitmodules",
                   "git-data", "git-head", "git-index", "git-exclude", "git-alternates",
                   "git-object", "git-cache", "ancestor", "git-packed-refs",
                   "git-shallow", "gitignore", "dotenv", "git-reflog", "git-ref"})


class Registry:
    """The registry for one workspace, with what its pre-run state adds.

    ``extra`` (relative path prefix -> (kind, why)): ``core.hooksPath`` targets and
    ``include.path`` targets read from the pre-run config, the profile's
    ``write_protect`` entries and ringfence's private dirs inside the workspace.
    ``views`` (set by ``apply.plan``): the tree after and before the run
    (``staging.git.discovery.View``), where git directories are found by git's own
    discovery rule, not only by the name ``.git``.
    """

    def __init__(self, workspace: str, extra: dict[str, tuple[str, str]] | None = None,
                 globs: tuple[str, ...] = ()) -> None:
        self.workspace = workspace
        self.extra = dict(extra or {})
        self.globs = globs      # write_protect globs (relative): always held
        self.post = None        # View after the run (with the stage)
        self.pre = None         # View before the run (the workspace alone)
        self.guarded: tuple[str, ...] = ()   # writable roots, state: links never go there
        self._new: dict[str, str | None] = {}
        self.host_path = os.environ.get("PATH", "")   # the host's PATH (settle sets it)
        self.host = None                 # its program names, read when first needed
        self.envrc_path: list[str] | None = None
        self.owners = None      # hookdirs.Owners: repositories found up from a write
        self._roots = None      # (post, pre, {rel: git root}) for git_root

    def git_root(self, rel: str) -> str | None:
        """The innermost git directory holding ``rel`` (before or after the run),
        remembered for these views (a settle asks twice per entry)."""
        memo = self._roots
        if memo is None or memo[0] is not self.post or memo[1] is not self.pre:
            memo = self._roots = (self.post, self.pre, {})
        if rel in memo[2]:
            return memo[2][rel]
        parts = rel.split("/")
        best = None
        if ".git" in parts[:-1]:
            at = len(parts) - 1 - parts[-2::-1].index(".git") - 1
            best = "/".join(parts[:at + 1])
        parent = rel.rpartition("/")[0]
        for view in (self.post, self.pre):
            if view is None:
                continue
            root = view.git_root(parent)
            if root is not None and (best is None or len(root) > len(best)):
                best = root
        memo[2][rel] = best
        return best

    def git_roots(self, rel: str) -> list[str]:
        """Every git directory holding ``rel``, innermost first: a repository laid
        out inside another one's directory (``.git/hooks`` given ``HEAD``,
        ``objects/`` and ``refs/``) is a repository to git run there, and the outer
        one's rules still hold for the host's git everywhere else."""
        out: list[str] = []
        root = self.git_root(rel)
        while root is not None:
            out.append(root)
            root = self.git_root(root) if root else None
        return out

    def lookup(self, rel: str) -> tuple[str, str] | None:
        """(kind, why) for a relative path, or None when the host does not obey it."""
        owners = self.owners
        if owners is not None and rel.rpartition("/")[0] not in owners.visited:
            self._owned(rel)
        for prefix, hit in self.extra.items():
            if rel == prefix or rel.startswith(prefix + "/"):
                if hit[0] == "hook" and rel == prefix:
                    return ("git-data", hit[1])     # the hooks dir itself
                return hit
        for pattern in self.globs:
            if fnmatch.fnmatchcase(rel, pattern) or fnmatch.fnmatchcase(rel, pattern + "/*"):
                return ("held", "the profile write-protects it (filesystem.write_protect)")
        parts = rel.split("/")
        if len(parts) == 1:
            for name, kind, why in AT_TOP:
                if rel == name:
                    return (kind, why)
        if parts[-1] == ".git":
            return ("git-redirect", "a .git file (gitfile) tells git where the repository is")
        git = git_kind(rel, self.git_roots(rel))
        if git is not None and git[0] != "git-data":
            return git
        # a repository that is also a work tree (core.worktree) holds ordinary
        # obeyed files too: the stricter row wins over "repository data"
        hit = _by_name(rel, parts)
        if hit is not None:
            return hit
        if git is not None:
            return git
        for prefix in self.extra:
            if prefix.startswith(rel + "/"):
                return ("ancestor", f"on the way to {prefix}, which the host obeys")
        return None

    def _owned(self, rel: str) -> None:
        """Add the hooksPath and include targets of the repositories above ``rel``
        that the pre-run state has and nothing recorded (``hookdirs.Owners``)."""
        if self.pre is None:
            from ringfence.staging.git.discovery import View

            self.pre = View(None, self.workspace)
        found = self.owners.above(rel, self.pre)
        if found:
            from ringfence.staging.git.hookdirs import add_rows

            add_rows(self.extra, self.workspace, found, self.pre)

    def new_repo_reason(self, root: str) -> str | None:
        """Why a git directory that the run CREATED (not one before it) must be held:
        what git will obey in it is judged whole, old content included, since a
        file called ``config`` was harmless data until HEAD, objects and refs made
        its directory a repository."""
        if self.post is None or self.pre is None or self.pre.is_git_dir(root):
            return None
        if root in self._new:
            return self._new[root]
        from ringfence.staging.git.discovery import whiteout

        why = None
        stack = [root]
        seen = 0
        while stack and why is None and seen < 10000:
            d = stack.pop()
            for name in _listdir_merged(self.post, d):
                rel = f"{d}/{name}" if d else name
                seen += 1
                hit = self.post.entry(rel)
                if hit is None or whiteout(hit[1]):
                    continue
                path, st = hit
                inner = rel[len(root) + 1:].split("/") if root else rel.split("/")
                if inner[0] in ("objects", "refs", "logs") or len(inner) > 3:
                    continue
                if stat.S_ISDIR(st.st_mode):
                    stack.append(rel)
                    continue
                kind = in_git_dir(inner)[0]
                if kind == "git-data":
                    continue
                new = b"" if kind == "hook" else _read(path, st)     # judged by name
                if new is None:
                    why = f"{rel}: too large to judge"
                    break
                why = judge(kind, rel, new, None, is_link=stat.S_ISLNK(st.st_mode),
                            workspace=self.workspace, view=self.post)
                if why:
                    why = f"makes {root or 'the workspace'} a git repository: {rel}: {why}"
                    break
        if why is None and stack:
            why = f"makes {root or 'the workspace'} a git repository too large to judge"
        self._new[root] = why
        return why


_TABLES: tuple = ()


def _tables():
    """(exact names -> row, [(path suffix, row)], one regex of the name globs, rows by
    glob index): built once, so a lookup is a dict hit per component, not a loop
    over every row (npm writes tens of thousands of paths). Bound in one step: another
    thread sees none or all of them."""
    global _TABLES
    if not _TABLES:
        import re

        exact: dict[str, tuple[str, str]] = {}
        for name, kind, why in BY_NAME:
            exact.setdefault(name, (kind, why))
        suffixes, globs, rows = [], [], []
        for pattern, kind, why, doc in OTHER_TOOLS:
            row = (kind, f"{why} ({doc})")
            if "/" in pattern:
                suffixes.append((pattern, row))
            elif not any(c in pattern for c in "*?["):
                exact.setdefault(pattern, row)
            else:
                globs.append(f"(?P<g{len(rows)}>{fnmatch.translate(pattern)})")
                rows.append(row)
        _TABLES = (exact, suffixes, re.compile("|".join(globs)) if globs else None, rows)
    return _TABLES


def _by_name(rel: str, parts: list[str]) -> tuple[str, str] | None:
    exact, suffixes, globre, rows = _tables()
    for part in parts:
        hit = exact.get(part)
        if hit is not None:
            return hit
    for pattern, row in suffixes:
        # the path itself, at any depth, or anything below it (a directory row)
        if any(c in pattern for c in "*?["):
            if fnmatch.fnmatchcase(rel, pattern) or fnmatch.fnmatchcase(rel, "*/" + pattern):
                return row
        elif (rel == pattern or rel.endswith("/" + pattern) or rel.startswith(pattern + "/")
              or f"/{pattern}/" in rel):
            return row
    if globre is not None:
        for part in parts:
            m = globre.match(part)
            if m:
                return rows[int(m.lastgroup[1:])]
    return None


def _listdir_merged(view, rel: str) -> list[str]:
    names: set[str] = set()
    state = view._dir(rel)
    if state is None:
        return []
    in_upper, lower = state
    for base, on in ((view.upper, in_upper), (view.workspace, lower)):
        if on and base:
            try:
                names.update(os.listdir(os.path.join(base, rel) if rel else base))
            except OSError:
                pass
    return sorted(names)


def _read(path: str, st) -> bytes | None:
    if stat.S_ISLNK(st.st_mode):
        return os.fsencode(os.readlink(path))
    if not stat.S_ISREG(st.st_mode):
        return b""
    if st.st_size > 1 << 20:
        return None
    with open(path, "rb") as fh:
        return fh.read()


def judge(kind: str, rel: str, new: bytes | None, old: bytes | None, *, is_link: bool,
          workspace: str, view=None) -> str | None:
    """None when the change is harmless, else the reason it is held."""
    if kind not in KINDS:
        return f"the host obeys this path in a way ringfence has no judge for ({kind})"
    if kind == "dotenv":        # loaded into the host's shell; removing one loads less
        return None if new is None else "the host loads it into its shell environment " \
            "(direnv dotenv); no content rule makes a change to it safe"
    if kind == "held":
        return "the host obeys this file; no content rule makes a change to it safe"
    if new is None:                                     # a deletion
        if posixpath.basename(rel) in HOLD_DELETE:
            return "deleting it changes what the host does next"
        if kind == "git-head":
            return "deletes a git repository (its HEAD)"
        if kind == "git-redirect":
            return "deletes a git redirect (the host's git then finds another repository)"
        if kind == "git-reflog":
            return "deletes reflog history (what moved HEAD and the branches)"
        return None
    if kind == "ancestor":
        return ("a symbolic link on the way to a file the host obeys" if is_link else
                "a file where a directory on the way to a file the host obeys was")
    if is_link and kind != "git-data":
        return "a symbolic link where the host obeys a file"
    if kind in ("git-data", "git-head", "git-object", "git-cache"):
        # (an object rewritten in place, and a cache, are judged by apply.py)
        return "a symbolic link inside a git directory" if is_link else None
    if kind == "hook":
        return None if rel.endswith(".sample") else "a git hook runs on the host's next git command"
    if kind in ("git-reflog", "git-ref"):   # a write is judged by entry.judge_entry
        return None
    from ringfence.staging.git import repo_judges as gj

    if kind == "git-index":
        return gj.judge_index(new, old, rel, view)
    if kind == "git-packed-refs":
        return gj.judge_packed_refs(new, old)
    if kind == "git-shallow":
        return gj.judge_shallow(new, old)
    try:
        text = new.decode("utf-8")
        old_text = old.decode("utf-8", "replace") if old is not None else ""
    except UnicodeDecodeError:
        return "not UTF-8 text; git may read it in a way ringfence cannot judge"
    if kind == "git-redirect":
        return gj.judge_redirect(rel, text, workspace, view)
    if kind == "git-alternates":
        return gj.judge_alternates(rel, text, old_text, workspace, view)
    if kind == "git-exclude":
        return gj.judge_exclude(rel, text, old_text)
    from ringfence.staging.git.file_judges import judge_attributes, judge_gitmodules

    if kind == "attributes":
        return judge_attributes(text, old_text)
    if kind == "gitignore":
        from ringfence.staging.git.ignore import judge as judge_ignore

        return judge_ignore(view, rel, text, old_text)
    from ringfence.staging.git.config import ConfigSyntaxError, added, parse

    try:
        pairs, old_pairs = parse(text), (parse(old_text) if old_text else [])
    except ConfigSyntaxError as exc:
        return f"git config syntax ringfence cannot judge ({exc})"
    if kind == "gitmodules":
        return judge_gitmodules(added(old_pairs, pairs))
    bad = [k for k, v in added(old_pairs, pairs) if key_can_run_program(k, v)]
    if bad:
        return "adds git config keys that can run programs: " + ", ".join(sorted(set(bad)))
    if posixpath.basename(rel) == "config.worktree":
        # read over the repository's config: a remote or upstream set here moves
        # the push and pull the main config names, which this file cannot show
        moved = [k for k, v in added(old_pairs, pairs)
                 if split_key(k.strip())[0] in ("remote", "url")
                 or (split_key(k.strip())[0] == "branch"
                     and split_key(k.strip())[2] in ("remote", "pushremote", "merge"))]
        if moved:
            return ("a worktree config that sets remotes or upstreams (the host's next "
                    "push or pull): " + ", ".join(sorted(set(moved))))
    urls = {k.lower(): v for k, v in old_pairs if k.lower().endswith(".url")}
    moved = [k for k, v in added(old_pairs, pairs) if key_redirects_push(k, v)
             or (k.lower().startswith("remote.") and k.lower() in urls and urls[k.lower()] != v)
             or (old_pairs and to_new_remote(k, v, old_pairs, pairs))]
    if moved:
        return ("adds git config keys that change where or how the host's next push or "
                "pull goes: " + ", ".join(sorted(set(moved))))
    hides = [k for k, v in added(old_pairs, pairs) if key_hides_changes(k, v)]
    if hides:
        return "adds git config keys that hide changes from git status: " + ", ".join(
            sorted(set(hides)))
    return None
