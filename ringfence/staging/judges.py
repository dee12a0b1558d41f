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

from ringfence.staging.git.keys import key_can_run_program

from ringfence.staging.registry import AT_TOP, BY_NAME, HOLD_DELETE, IN_GIT_DIR  # noqa: E402


class Registry:
    """The registry for one workspace, with what its pre-run state adds.

    ``extra`` (relative path prefix -> (kind, why)): ``core.hooksPath`` targets and
    ``include.path`` targets read from the pre-run config, the profile's
    ``write_protect`` entries and ringfence's private dirs inside the workspace.
    """

    def __init__(self, workspace: str, extra: dict[str, tuple[str, str]] | None = None,
                 globs: tuple[str, ...] = ()) -> None:
        self.workspace = workspace
        self.extra = dict(extra or {})
        self.globs = globs      # write_protect globs (relative): always held

    def lookup(self, rel: str) -> tuple[str, str] | None:
        """(kind, why) for a relative path, or None when the host does not obey it."""
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
        if ".git" in parts:
            at = len(parts) - 1 - parts[::-1].index(".git")     # the innermost .git
            inner = parts[at + 1:]
            if not inner:
                return ("git-redirect", "a .git file (gitfile) tells git where the repository is") \
                    if at == len(parts) - 1 else None
            return _in_git_dir(inner)
        for part in parts:
            for name, kind, why in BY_NAME:
                if part == name:
                    return (kind, why)
        return None


def _in_git_dir(inner: list[str]) -> tuple[str, str]:
    # By name at ANY depth below .git, not only at git's usual places: a commondir
    # or gitdir can make git read .git/x/config or .git/x/hooks as its own.
    last = inner[-1]
    if "hooks" in inner[:-1]:
        return ("hook", "git runs hooks on commit, checkout, merge, push")
    if inner[-2:] == ["info", "attributes"]:
        return ("attributes", "info/attributes: filter/diff/merge drivers")
    for name, kind, why in IN_GIT_DIR:
        if last == name and kind not in ("attributes", "hook"):
            return (kind, why)
    if last == "hooks":
        return ("git-data", "the hooks directory itself")
    return ("git-data", "repository data git reads, never runs")


def judge(kind: str, rel: str, new: bytes | None, old: bytes | None, *, is_link: bool,
          workspace: str) -> str | None:
    """None when the change is harmless, else the reason it is held."""
    if kind == "held":
        return "the host obeys this file; no content rule makes a change to it safe"
    if new is None:                                     # a deletion
        if posixpath.basename(rel) in HOLD_DELETE:
            return "deleting it changes what the host does next"
        return None
    if is_link and kind != "git-data":
        return "a symbolic link where the host obeys a file"
    if kind == "git-data":
        return "a symbolic link inside a git directory" if is_link else None
    if kind == "hook":
        return None if rel.endswith(".sample") else "a git hook runs on the host's next git command"
    try:
        text = new.decode("utf-8")
        old_text = old.decode("utf-8", "replace") if old is not None else ""
    except UnicodeDecodeError:
        return "not UTF-8 text; git may read it in a way ringfence cannot judge"
    if kind == "git-redirect":
        return _judge_redirect(rel, text, workspace)
    if kind == "attributes":
        return _judge_attributes(text, old_text)
    from ringfence.staging.git.config import ConfigSyntaxError, added, parse

    try:
        pairs, old_pairs = parse(text), (parse(old_text) if old_text else [])
    except ConfigSyntaxError as exc:
        return f"git config syntax ringfence cannot judge ({exc})"
    if kind == "gitmodules":
        return _judge_gitmodules(added(old_pairs, pairs))
    bad = [k for k, v in added(old_pairs, pairs) if key_can_run_program(k, v)]
    if bad:
        return "adds git config keys that can run programs: " + ", ".join(sorted(set(bad)))
    return None


def _judge_redirect(rel: str, text: str, workspace: str) -> str | None:
    line = text.strip().splitlines()[0] if text.strip() else ""
    target = line.split(":", 1)[1].strip() if line.startswith("gitdir:") else line
    if not target:
        return "an empty git redirect"
    base = posixpath.join(workspace, posixpath.dirname(rel))
    if posixpath.basename(rel) in ("commondir", "gitdir") or not posixpath.isabs(target):
        where = posixpath.normpath(posixpath.join(base, target))
    else:
        where = posixpath.normpath(target)
    inside = where == workspace or where.startswith(workspace.rstrip("/") + "/")
    if not inside:
        return f"points git outside the workspace ({target})"
    parts = os.path.relpath(where, workspace).split("/")
    if ".git" not in parts:
        return f"points git at a directory that is not a .git directory ({target})"
    # Only where git itself points: a .git dir, or its worktrees/<n> and
    # modules/<n>(/modules/<m>...) git dirs; never a made-up dir inside .git.
    rest = parts[len(parts) - parts[::-1].index(".git"):]
    if len(rest) % 2 or any(rest[i] not in ("worktrees", "modules") for i in range(0, len(rest), 2)):
        return f"points git at a directory that is not a .git directory ({target})"
    return None


_DRIVER_ATTRS = ("filter=", "diff=", "merge=")


def _judge_attributes(text: str, old_text: str) -> str | None:
    before = set(old_text.splitlines())
    for line in text.splitlines():
        if line in before or line.lstrip().startswith("#"):
            continue
        for word in line.split()[1:]:
            if word.startswith(_DRIVER_ATTRS):
                return f"names a filter/diff/merge driver ({word})"
    return None


_SUBMODULE_DATA = frozenset({"path", "url", "branch", "shallow", "ignore",
                             "fetchrecursesubmodules", "update"})


def _judge_gitmodules(new_pairs) -> str | None:
    for key, value in new_pairs:
        section, _, var = key.partition(".")
        var = var.rpartition(".")[2].lower()
        v = (value or "").strip().lower()
        if section.lower() != "submodule" or var not in _SUBMODULE_DATA:
            return f"a .gitmodules key ringfence cannot judge ({key})"
        if var == "update" and v not in ("checkout", "rebase", "merge", "none"):
            return f"submodule update command ({value})"
        if var == "url" and v.startswith(("ext::", "fd::")):
            return f"a submodule url through a transport that runs a program ({value})"
    return None
