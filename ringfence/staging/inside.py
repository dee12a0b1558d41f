"""Which rule a path inside a git directory falls under, by git's own names
(``ringfence/staging/judges.py`` asks; the rows are data in ``registry.py``).

``in_git_dir(inner)`` answers for a path relative to ONE git directory, by name at
any depth (a ``commondir`` or ``gitdir`` can make git read ``.git/x/config`` or
``.git/x/hooks`` as its own); ``git_kind(rel, roots)`` for a path inside several
nested ones (a repository planted inside another's directory): the rule any of them
has for it beyond repository data, held when two disagree.
"""

from __future__ import annotations

from ringfence.staging.registry import IN_GIT_DIR

_HEX = frozenset("0123456789abcdef")
# State of a merge, cherry-pick, revert or am in progress: the host's next plain
# ``git commit`` (or ``--continue``) takes the commit these name as a parent.
_SEQUENCER_HEADS = frozenset({"MERGE_HEAD", "CHERRY_PICK_HEAD", "REVERT_HEAD", "REBASE_HEAD",
                              "AUTO_MERGE", "MERGE_MODE", "BISECT_START", "BISECT_TERMS"})


def object_cache(inner: list[str], last: str) -> tuple[str, str] | None:
    if len(inner) == 3 and len(inner[1]) == 2 and set(inner[1] + last) <= _HEX:
        return ("git-object", "git reads an object by its id and never checks the content")
    if inner[1] == "pack" and last.endswith((".pack", ".idx")) and last.startswith("pack-"):
        return ("git-object", "git reads an object by its id and never checks the content")
    if (inner[1:3] in (["info", "commit-graph"], ["info", "commit-graphs"])
            or last.startswith("multi-pack-index") or last.endswith((".bitmap", ".rev"))):
        return ("git-cache", "git log trusts it over the commits themselves")
    return None


def git_kind(rel: str, roots: list[str]) -> tuple[str, str] | None:
    """The row of ``rel`` inside the git directories ``roots`` (innermost first): the
    one rule any of them has for it beyond repository data; rules that disagree are
    held, since each repository's git reads the file its own way."""
    found = data = None
    for root in roots:
        row = in_git_dir(rel[len(root) + 1:].split("/") if root else rel.split("/"))
        if row[0] == "git-data":
            data = data or row
        elif found is None:
            found = row
        elif row[0] != found[0]:
            return ("held", f"nested git directories read it two ways ({found[0]}, "
                            f"{row[0]})")
    return found or data


def in_git_dir(inner: list[str]) -> tuple[str, str]:
    # By name at ANY depth below a git dir, not only at git's usual places: a
    # commondir or gitdir can make git read .git/x/config or .git/x/hooks as its own.
    last = inner[-1]
    if "hooks" in inner[:-1]:
        return ("hook", "git runs hooks on commit, checkout, merge, push")
    if inner[-2:] == ["info", "attributes"]:
        return ("attributes", "info/attributes: filter/diff/merge drivers")
    if inner[-2:] in (["info", "exclude"], ["info", "sparse-checkout"]):
        return ("git-exclude", "git status hides the files it names")
    if inner[-3:] == ["objects", "info", "alternates"]:
        return ("git-alternates", "git reads objects from the stores it names")
    if inner[0] == "objects" and len(inner) >= 3:
        cache = object_cache(inner, last)
        if cache:
            return cache
    if inner == ["index"]:
        return ("git-index", "git status and diff trust its entry flags")
    if len(inner) == 1 and last.startswith("sharedindex."):
        return ("held", "a split index's shared part: git status trusts its entry flags, "
                        "which ringfence does not judge there")
    if inner == ["HEAD"]:
        return ("git-head", "with objects/ and refs/ it makes the directory a repository")
    if inner[0] in ("rebase-merge", "rebase-apply", "sequencer"):
        return ("held", "git rebase/cherry-pick --continue run the exec lines of its todo")
    if inner[0] in ("remotes", "branches") and len(inner) > 1:
        return ("held", "legacy remote definitions: git push and fetch obey their URL lines")
    if inner[:2] == ["refs", "heads"] and len(inner) > 2:
        return ("git-ref", "the branch the host's next git log, diff and push start from")
    if inner[0] == "logs":
        return ("git-reflog", "git reflog shows what moved HEAD and the branches; git "
                              "only appends to it")
    if inner[0] == "rr-cache":
        return ("held", "rerere replays these resolutions into the host's next merge")
    if inner == ["packed-refs"]:
        return ("git-packed-refs", "its refs/replace/ lines make git show other objects")
    if inner == ["shallow"]:
        return ("git-shallow", "each commit it names hides the history behind it (a graft)")
    if len(inner) == 1 and last in _SEQUENCER_HEADS:
        return ("held", "the host's next git commit makes the commit it names a parent")
    if inner[:2] == ["refs", "replace"] or inner[-2:] == ["info", "grafts"]:
        return ("held", "replace refs and grafts make git show other objects and history "
                        "in place of the real ones")
    for name, kind, why in IN_GIT_DIR:
        if last == name and kind not in ("attributes", "hook"):
            return (kind, why)
    if last == "hooks":
        return ("git-data", "the hooks directory itself")
    return ("git-data", "repository data git reads, never runs")
