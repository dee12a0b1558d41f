"""Judges of the text files git reads from the work tree: ``.gitattributes`` (and
``info/attributes``) and ``.gitmodules``. Each returns None when the change is
harmless, else why it is held (``ringfence/staging/judges.py`` calls them)."""

from __future__ import annotations

_DRIVER_ATTRS = ("filter=", "diff=", "merge=")
# Attributes that make git diff show no content ("Binary files differ") or merge
# without looking: a run's own edit to the file then stays out of the review.
_HIDING_ATTRS = frozenset({"-diff", "!diff", "binary", "-merge", "!merge"})


def judge_attributes(text: str, old_text: str) -> str | None:
    # git reads a line up to "\n" only (a bare CR is a blank inside the line);
    # Python's splitlines would split on CR, FF, VT and more.
    before = set(old_text.split("\n"))
    for line in text.split("\n"):
        if line in before:
            continue
        words = line.replace("\r", " ").replace("\t", " ").split(" ")
        words = [w for w in words if w]
        if not words or words[0].startswith("#"):
            continue
        for word in words[1:]:
            if word.startswith(_DRIVER_ATTRS):
                return f"names a filter/diff/merge driver ({word})"
            if word in _HIDING_ATTRS:
                return f"makes git diff or merge skip the file's content ({word})"
    return None


_SUBMODULE_DATA = frozenset({"path", "url", "branch", "shallow", "ignore",
                             "fetchrecursesubmodules", "update"})


def judge_gitmodules(new_pairs) -> str | None:
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
