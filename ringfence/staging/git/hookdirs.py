"""Where the host's git runs hooks from and which files it reads as config, for
every git directory of the workspace, read from the PRE-run state.

git takes ``core.hooksPath`` (relative to the work tree the hooks run in) and
``include.path`` / ``includeIf.*.path`` (relative to the including file) from each
repository's own config. A workspace holds more than one repository: submodules
(their git dirs under ``.git/modules/``), nested repositories the top index
records as gitlinks, and, when the workspace is a linked worktree, the main
repository's config found through ``commondir`` (often outside the workspace).
Each of those configs is read here, and every target inside the workspace is
returned, so that a write there is judged as a hook or as config.

Cost: O(git directories + their config files), never a walk of the work tree:
gitlinks come from the top index, modules from ``modules/`` (bounded).
"""

from __future__ import annotations

import os

MAX_GIT_DIRS = 256
MAX_CONFIGS = 512


def _read(path: str) -> str | None:
    try:
        with open(path, encoding="utf-8", errors="replace") as fh:
            return fh.read(1 << 20)
    except OSError:
        return None


def _pairs(path: str):
    from ringfence.staging.git.config import ConfigSyntaxError, parse

    text = _read(path)
    if text is None:
        return []
    try:
        return parse(text)
    except ConfigSyntaxError:
        return []


def _gitfile(path: str) -> str | None:
    """The git dir a ``.git`` names: itself when a directory, a gitfile's target."""
    if os.path.isdir(path) and not os.path.islink(path):
        return path
    text = _read(path)
    if text and text.startswith("gitdir:"):
        return os.path.normpath(os.path.join(os.path.dirname(path),
                                             text.split(":", 1)[1].strip()))
    return None


def _common(gitdir: str) -> str:
    text = _read(os.path.join(gitdir, "commondir"))
    if text and text.strip():
        return os.path.normpath(os.path.join(gitdir, text.strip()))
    return gitdir


def _modules(common: str, out: list) -> None:
    """Submodule git dirs below ``modules/`` (nested: ``modules/a/modules/b``)."""
    stack = [os.path.join(common, "modules")]
    while stack and len(out) < MAX_GIT_DIRS:
        d = stack.pop()
        try:
            names = os.listdir(d)
        except OSError:
            continue
        for name in names:
            sub = os.path.join(d, name)
            if os.path.islink(sub) or not os.path.isdir(sub):
                continue
            if os.path.exists(os.path.join(sub, "HEAD")):
                out.append(sub)
                stack.append(os.path.join(sub, "modules"))
            else:
                stack.append(sub)        # a module name with a slash: modules/a/b


def _gitlinks(gitdir: str, worktree: str) -> list[str]:
    """Work trees of the gitlinks (mode 160000) the index records."""
    from ringfence.staging.git.index import MAX_INDEX, stat_data

    try:
        with open(os.path.join(gitdir, "index"), "rb") as fh:
            data = fh.read(MAX_INDEX)
    except OSError:
        return []
    if b"\x00\x00\xe0\x00" not in data:     # no entry can have mode 160000: no parse
        return []
    entries = stat_data(data) or {}
    return [os.path.join(worktree, name) for name, (st, _) in entries.items()
            if int.from_bytes(st[24:28], "big") & 0o170000 == 0o160000][:MAX_GIT_DIRS]


def repositories(workspace: str) -> list[tuple[list[str], list[str]]]:
    """``[(config files git reads, work tree candidates for hooksPath)]`` for every
    git directory of the workspace found without walking it."""
    out: list[tuple[list[str], list[str]]] = []
    top = _gitfile(os.path.join(workspace, ".git"))
    if top is None:
        return out
    common = _common(top)
    out.append(([os.path.join(common, "config"), os.path.join(top, "config.worktree")],
                [workspace]))
    seen = {os.path.realpath(common)}
    mods: list[str] = []
    _modules(common, mods)
    pending: list[tuple[str, str | None]] = [(m, None) for m in mods]
    for tree in _gitlinks(top, workspace):
        g = _gitfile(os.path.join(tree, ".git"))
        if g is not None:
            pending.append((g, tree))
    for g, tree in pending[:MAX_GIT_DIRS]:
        c = _common(g)
        real = os.path.realpath(c)
        if real in seen and tree is None:
            continue
        seen.add(real)
        trees = [tree] if tree else []
        for key, value in _pairs(os.path.join(c, "config")):
            if key.lower() == "core.worktree" and value:
                trees.append(os.path.normpath(os.path.join(g, value)))
        if not trees:
            trees = [os.path.dirname(g) if os.path.basename(g) == ".git" else g]
        out.append(([os.path.join(c, "config"), os.path.join(g, "config.worktree")], trees))
    return out


def targets(workspace: str, home: str, global_configs: list[str]):
    """``(kind, path)`` for each hooksPath dir and include target git would use,
    as absolute paths (the caller keeps those inside the workspace)."""
    from ringfence.staging.git.config import get_all

    found: list[tuple[str, str]] = []
    repos = repositories(workspace)
    # a relative hooksPath in a global config applies in every repository's work tree
    trees = list(dict.fromkeys([workspace] + [t for _, ts in repos for t in ts]))
    todo = [([cfg], trees) for cfg in global_configs] + repos
    read = 0
    for cfgs, trees in todo:
        queue = list(cfgs)
        while queue and read < MAX_CONFIGS:
            cfg = queue.pop(0)
            read += 1
            pairs = _pairs(cfg)
            for value in get_all(pairs, "core.hooksPath"):
                if not value:
                    continue
                value = home + value[1:] if value.startswith("~/") else value
                for tree in trees:
                    found.append(("hook", value if os.path.isabs(value)
                                  else os.path.join(tree, value)))
            for key, value in pairs:
                low = key.lower()
                if value and low.endswith(".path") and low.startswith(("include.", "includeif.")):
                    value = home + value[1:] if value.startswith("~/") else value
                    target = value if os.path.isabs(value) else os.path.join(
                        os.path.dirname(cfg), value)
                    found.append(("git-config", target))
                    queue.append(target)     # an included file may set hooksPath too
    return found
