"""Change sets as the ledger stores and shows them.

- stored compactly: each path list grouped by directory (``pack_changes``), read
  back as the plain sorted list (``unpack_changes``);
- notes (RF604 ...) as JSON objects, never a Python repr (``json_default``);
- summarized by directory for ``ledger show`` (``summarize``): a venv install
  is one line per directory tree with counts, not 1,685 lines.

Stdlib only: the ledger imports it on the ``run`` path.
"""

from __future__ import annotations

from typing import Any


def json_default(value: Any) -> Any:
    """Records (a compile Note, a network decision) are stored as JSON objects,
    never as their Python repr; anything else unknown is a bug, not a string."""
    from ringfence.rfcore.records import asdict, is_record

    if hasattr(value, "to_json"):
        return value.to_json()
    if is_record(value) and not isinstance(value, type):
        return asdict(value)
    if isinstance(value, (tuple, set, frozenset)):
        return list(value)
    raise TypeError(f"cannot store {type(value).__name__} in the ledger")


# --- change sets: stored grouped by directory -------------------------------------
# A venv install creates ~1,700 paths that share a few long directory prefixes;
# one JSON string per path repeats them. Stored, each path list becomes
# {"by_dir": [[dir, [name, ...]], ...]} (dirs sorted, "" for the top); reads give
# the plain sorted list back, so every reader sees the same shape as before.

_PATH_LISTS = ("created", "modified", "deleted")


def pack_changes(changes: Any) -> Any:
    if not isinstance(changes, dict):
        return changes
    out = dict(changes)
    for kind in _PATH_LISTS:
        paths = out.get(kind)
        if isinstance(paths, (list, tuple)) and all(isinstance(p, str) for p in paths):
            by_dir: dict[str, list[str]] = {}
            for path in sorted(paths):
                head, _, name = path.rpartition("/")
                by_dir.setdefault(head, []).append(name)
            out[kind] = {"by_dir": [[d, names] for d, names in sorted(by_dir.items())]}
    if "protected_created" in out:
        out["protected_created"] = [_note(n) for n in out["protected_created"] or ()]
    return out


def unpack_changes(changes: Any) -> Any:
    if not isinstance(changes, dict):
        return changes
    out = dict(changes)
    for kind in _PATH_LISTS:
        packed = out.get(kind)
        if isinstance(packed, dict) and isinstance(packed.get("by_dir"), list):
            out[kind] = sorted(f"{d}/{n}" if d else n for d, names in packed["by_dir"]
                               for n in names)
    if isinstance(out.get("protected_created"), list):
        out["protected_created"] = [_note(n) for n in out["protected_created"]]
    return out


def _note(value: Any) -> Any:
    """A note as a JSON object. Runs recorded before notes were stored as objects
    hold their Python repr (``"Note(code='RF604', message='...')"``): read back,
    that text is parsed (literals only, never evaluated) into the same object."""
    if isinstance(value, dict) or not isinstance(value, str):
        return json_default(value) if not isinstance(value, (dict, str)) else value
    import ast

    try:
        call = ast.parse(value, mode="eval").body
        if isinstance(call, ast.Call) and isinstance(call.func, ast.Name) and not call.args:
            return {kw.arg: ast.literal_eval(kw.value) for kw in call.keywords if kw.arg}
    except (SyntaxError, ValueError):
        pass
    return {"message": value}


# --- summary for `ledger show` ------------------------------------------------------

SUMMARY_AT = 20          # a path list longer than this is shown by directory
SUMMARY_TOP = 8          # directory rows shown; the rest is "... and K more"


def summarize(paths: list[str], top: int = SUMMARY_TOP) -> tuple[list[tuple[str, int, int]], int, int]:
    """Group ``paths`` into at most ``top`` directory trees, largest first.

    Returns ``(rows, more_paths, more_groups)``; each row is ``(label, paths,
    dirs)``: ``label`` a directory ending in "/" (or one file's path), ``dirs``
    the number of distinct directories holding those paths. A group whose
    paths all share a deeper directory is labelled by that directory; the
    largest group that holds two or more sub-directories is split by its next
    component while fewer than ``top`` groups exist."""
    groups: list[tuple[str, list[str]]] = [_deepen("", sorted(set(paths)))]
    while len(groups) < top:
        splittable = [g for g in groups if _parts(g)]
        if not splittable:
            break
        big = max(splittable, key=lambda g: len(g[1]))
        parts = _parts(big)
        if len(groups) - 1 + len(parts) > top and len(groups) > 1:
            break
        groups.remove(big)
        groups.extend(parts)
    rows = sorted(((ps[0] if len(ps) == 1 else (label or "./"), len(ps),
                    len({p.rpartition("/")[0] for p in ps}))
                   for label, ps in groups), key=lambda r: (-r[1], r[0]))
    shown = rows[:top]
    rest = rows[top:]
    return shown, sum(r[1] for r in rest), len(rest)


def _deepen(label: str, paths: list[str]) -> tuple[str, list[str]]:
    """Extend ``label`` while every path continues with the same directory."""
    while True:
        nxt = {p[len(label):].split("/", 1)[0] for p in paths}
        if len(nxt) != 1 or len(paths) == 1:
            return label, paths
        comp = nxt.pop()
        if any(p == label + comp for p in paths):        # a file named like the dir
            return label, paths
        label = f"{label}{comp}/"


def _parts(group: tuple[str, list[str]]) -> list[tuple[str, list[str]]]:
    """The group split by the next path component ([] if it cannot split)."""
    label, paths = group
    if len(paths) < 2:
        return []
    by: dict[str, list[str]] = {}
    for p in paths:
        rest = p[len(label):]
        head, sep, _ = rest.partition("/")
        by.setdefault(label + head + sep, []).append(p)
    if sum(k.endswith("/") for k in by) < 2:
        return []           # files beside at most one directory: keep it one row
    return [_deepen(k, v) if k.endswith("/") else (k, v) for k, v in by.items()]
