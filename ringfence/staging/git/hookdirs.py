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

A repository nothing records (an untracked clone ``vendor/lib/.git``, a linked
worktree of a repository elsewhere, a bare layout) is found from the other end:
:class:`Owners` walks UP from each path the run wrote, by git's own discovery
rule (``D/.git`` a directory or a gitfile, ``D`` a bare layout), in the pre-run
tree, inside the workspace, never through a link, each directory once. So its
cost grows with what the run wrote, not with the workspace.
"""

from __future__ import annotations

import os
import stat

MAX_GIT_DIRS = 256
MAX_CONFIGS = 512
MAX_UP = 128           # directories one written path's walk up visits, at most
HOOK_WHY = "core.hooksPath points here: git runs these hooks"
INCLUDE_WHY = "an include target of the repository's config"


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
        real = os.path.realpath(_common(g))
        if real in seen and tree is None:
            continue
        seen.add(real)
        out.append(repository(g, tree))
    return out


def repository(g: str, tree: str | None) -> tuple[list[str], list[str]]:
    """``(config files git reads, work tree candidates)`` of the git dir ``g``, whose
    work tree is ``tree`` when known (else ``core.worktree``, else the parent of a
    ``.git``, else ``g`` itself: a bare repository runs its hooks there)."""
    c = _common(g)
    trees = [tree] if tree else []
    for key, value in _pairs(os.path.join(c, "config")):
        if key.lower() == "core.worktree" and value:
            trees.append(os.path.normpath(os.path.join(g, value)))
    if not trees:
        trees = [os.path.dirname(g) if os.path.basename(g) == ".git" else g]
    return [os.path.join(c, "config"), os.path.join(g, "config.worktree")], trees


def targets(workspace: str, home: str, global_configs: list[str]):
    """``(kind, path)`` for each hooksPath dir and include target git would use,
    as absolute paths (the caller keeps those inside the workspace)."""
    repos = repositories(workspace)
    # a relative hooksPath in a global config applies in every repository's work tree
    trees = list(dict.fromkeys([workspace] + [t for _, ts in repos for t in ts]))
    return _collect([([cfg], trees) for cfg in global_configs] + repos, home, {})


def _collect(todo, home: str, cache: dict) -> list[tuple[str, str]]:
    """The targets of ``[(config files, work trees)]``, following includes (at most
    MAX_CONFIGS files read; ``cache`` keeps each file's pairs)."""
    from ringfence.staging.git.config import get_all

    found: list[tuple[str, str]] = []
    read = 0
    for cfgs, trees in todo:
        queue = list(cfgs)
        while queue and read < MAX_CONFIGS:
            cfg = queue.pop(0)
            read += 1
            pairs = cache.get(cfg)
            if pairs is None:
                pairs = cache[cfg] = _pairs(cfg)
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


def add_rows(extra: dict, workspace: str, found, view) -> None:
    """Put each target inside the workspace into the registry's ``extra``, and
    where the workspace's own links take it (git follows them; ``view`` is the
    pre-run ``discovery.View``). A row the profile or ringfence holds stays held."""
    ws = workspace.rstrip("/")
    for kind, target in found:
        target = os.path.normpath(target)
        if not target.startswith(ws + "/"):
            continue
        rel = target[len(ws) + 1:]
        where, _ = view.realpath("", rel)
        for r in [rel] + ([where] if where and where != rel else []):
            have = extra.get(r, ("",))[0]
            if have in ("held", "hook"):
                continue
            extra[r] = ("hook", HOOK_WHY) if kind == "hook" else ("git-config", INCLUDE_WHY)


class Owners:
    """The repositories above what a run wrote that nothing records, read lazily.

    :meth:`above` walks up from a written path's directory in the PRE-run ``view``
    (``discovery.View(None, workspace)``: lstat only, so a link on the way ends the
    directory, never followed), at most MAX_UP directories, each directory once per
    settle; every repository met (not only the innermost: an outer clone's hooksPath
    may point into an inner one) has its config, its includes, and the global
    configs' relative hooksPath (applied in its work tree) read once.
    """

    def __init__(self, home: str, global_configs: list[str]) -> None:
        self.home = home
        self.global_configs = list(global_configs)
        self.visited: set[str] = {""}        # directories (relative) already looked at
        self._read: set[str] = set()         # git dirs already read (real paths)
        self._cache: dict = {}

    def above(self, rel: str, view) -> list[tuple[str, str]]:
        """Targets of the repositories above ``rel`` not found before."""
        found: list[tuple[str, str]] = []
        d = rel.rpartition("/")[0]
        steps = 0
        while d and d not in self.visited and steps < MAX_UP:
            self.visited.add(d)
            steps += 1
            repo = _repository_at(view, d)
            if repo is not None and os.path.realpath(repo[0]) not in self._read:
                self._read.add(os.path.realpath(repo[0]))
                cfgs, trees = repository(*repo)
                todo = [([cfg], trees) for cfg in self.global_configs] + [(cfgs, trees)]
                found += _collect(todo, self.home, self._cache)
            d = d.rpartition("/")[0]
        return found


def _repository_at(view, d: str) -> tuple[str, str | None] | None:
    """``(git dir, work tree or None)`` of a repository git's discovery takes at the
    workspace directory ``d``: ``d/.git`` a directory or a gitfile, or ``d`` a bare
    layout (``discovery.View.is_git_dir``). Never through a link."""
    if not view.is_dir(d):          # (most of what a run writes is new: nothing there)
        return None
    hit = view.entry(f"{d}/.git")
    tree = os.path.join(view.workspace, d)
    if hit is not None:
        if stat.S_ISDIR(hit[1].st_mode):
            return hit[0], tree
        if stat.S_ISREG(hit[1].st_mode):
            g = _gitfile(hit[0])
            if g is not None:
                return g, tree
    if d.rpartition("/")[2] != ".git" and view.is_git_dir(d):
        return tree, None
    return None
