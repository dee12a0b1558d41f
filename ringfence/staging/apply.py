"""After a staged run: read its exact change record from the upper dir, then apply it.

``plan(stage, registry)`` walks ONLY the stage's upper dir (O(changes)) and
compares each entry with the workspace (the overlay's lower layer):

* a 0/0 character device is a whiteout: the path was deleted (for a directory,
  everything the workspace holds below it is listed as deleted);
* an upper dir marked opaque (``user.overlay.opaque``) replaced the workspace's
  dir: what only the workspace holds below it was deleted;
* a file that exists in both with the same type, mode and bytes was only opened
  for writing (copy-up): not a change, dropped;
* everything else is created or modified.

Each change is judged (``staging/entry.py``, ``ringfence.staging.judges``); a held
one stays in the stage. The same walk counts the stage's apparent size against the
profile's limits (:class:`Meter`) and lists what in a new directory carries
privilege (``Plan.inspected``), so nothing walks the stage a second time.
Git directories are found by git's own rule in the tree the host will see
(``ringfence/staging/git/discovery.py``), not only by the name ``.git``; a
repository the run created is judged whole (its loose objects once per directory:
``staging/loose.py``). FIFOs, sockets and device nodes are held. The walk is
iterative and computes each new subtree's verdict once, so a tree of any depth costs
O(entries); ``deadline`` bounds it (``Overrun``).

``apply_plan`` moves the rest into the workspace: a new directory whose whole
subtree is harmless is renamed in one step (copied when the stage is on another
filesystem), files replace files, deletions remove. ringfence never creates,
moves or deletes anything outside the workspace: every target's parent is opened
component by component with ``O_NOFOLLOW | O_DIRECTORY`` from the workspace's own
fd, and every operation is ``*at()`` relative to that fd, so a symlink planted
anywhere on the way (``.git -> ~/.ssh``, ``x -> ~``) makes the step fail
(recorded, RF643) instead of being followed.
"""

from __future__ import annotations

import os
import stat

from ringfence.rfcore.fsops import same_bytes
from ringfence.rfcore.records import field, record
from ringfence.staging.git.discovery import OPAQUE, _opaque, whiteout  # noqa: F401 - one reading of overlayfs
from ringfence.staging.loose import derived, shortcut
from ringfence.staging.entry import judge_entry
from ringfence.staging.place import carries_privilege



@record
class Action:
    op: str                  # move | delete | replace | mkdir
    path: str                # relative to the workspace
    held: str | None = None  # why it is held (None: applied)
    kind: str | None = None  # the registry kind, when the host obeys it


@record(frozen=False)
class Plan:
    actions: list = field(default_factory=list)
    created: list = field(default_factory=list)
    modified: list = field(default_factory=list)
    deleted: list = field(default_factory=list)
    limit: str | None = None  # "stage" | "file_size": the stage broke a limit (Meter)
    # a new dir moved whole -> the paths below it that carry privilege (the rest was
    # looked at while planning: place.strip needs no second walk of it)
    inspected: dict = field(default_factory=dict)

    @property
    def held(self) -> list:
        return [a for a in self.actions if a.held]


def _lstat(path: str):
    try:
        return os.lstat(path)
    except OSError:
        return None


def _same(u: str, ust, l: str, lst) -> bool:
    if stat.S_IFMT(ust.st_mode) != stat.S_IFMT(lst.st_mode):
        return False
    if stat.S_ISLNK(ust.st_mode):
        return os.readlink(u) == os.readlink(l)
    if not stat.S_ISREG(ust.st_mode):
        return False
    # A copy-up keeps the mtime: a file only opened for writing is identical in
    # everything; a `touch` (new mtime, same bytes) is a change build tools rely on.
    if (ust.st_mode != lst.st_mode or ust.st_size != lst.st_size
            or ust.st_mtime_ns != lst.st_mtime_ns):
        return False
    return same_bytes(u, l)


def _lower_tree(path: str, rel: str) -> list[str]:
    """Every path below (and including) a workspace path, never following links."""
    st = _lstat(path)
    if st is None:
        return []
    if not stat.S_ISDIR(st.st_mode):
        return [rel]
    return _tree(path, rel, tolerant=True)


def _tree(top: str, rel: str, tolerant: bool = False) -> list[str]:
    """Every non-dir path (and empty dir) below the directory ``top`` (``rel``),
    never following links; ``tolerant``: an unreadable dir counts as one path."""
    out: list[str] = []
    stack = [(top, rel)]
    while stack:
        p, r = stack.pop()
        try:
            entries = list(os.scandir(p))
        except OSError:
            if not tolerant:
                raise
            out.append(r)
            continue
        if not entries:
            out.append(r)
        for e in entries:
            if e.is_dir(follow_symlinks=False):
                stack.append((e.path, f"{r}/{e.name}"))
            else:
                out.append(f"{r}/{e.name}")
    return out


class Overrun(Exception):
    """Planning went past its time bound (settle records it as RF644)."""


class Meter:
    """A stage's APPARENT size against a profile's limits (sparse files cost no blocks
    while running, but are data once applied): over ``stage_mb``, or holding a
    changed file exactly ``file_size_mb`` long (RLIMIT_FSIZE cut a write there,
    EFBIG), is a limit hit (``limit``: "stage" | "file_size")."""

    def __init__(self, limits=None) -> None:
        mb = (getattr(limits, "stage_mb", None), getattr(limits, "file_size_mb", None))
        self.cap, self.fsize = (None if v is None else v * 1024 * 1024 for v in mb)
        self.total = 0
        self.limit: str | None = None

    def count(self, st, exact: bool = True) -> None:
        """Add one upper entry (each is counted once); ``exact``: it is a change, so
        a size of exactly ``file_size_mb`` is a cut (an identical copy-up is not)."""
        if self.limit is not None or stat.S_ISDIR(st.st_mode):
            return
        self.total += st.st_size
        if self.cap is not None and self.total > self.cap:
            self.limit = "stage"
        elif exact:
            self.cut(st)

    def cut(self, st) -> None:
        if self.limit is None and self.fsize is not None and st.st_size == self.fsize \
                and not stat.S_ISDIR(st.st_mode):
            self.limit = "file_size"


def stage_limit(upper: str, limits) -> str | None:
    """The limit the stage breaks, by a walk that skips what it cannot read: for a
    settle whose plan failed (the plan counts on its own walk otherwise), so a run
    over its limits is recorded as one whatever else went wrong."""
    meter = Meter(limits)
    stack = [upper]
    while stack and meter.limit is None:
        try:
            with os.scandir(stack.pop()) as it:
                for e in it:
                    st = e.stat(follow_symlinks=False)
                    if stat.S_ISDIR(st.st_mode):
                        stack.append(e.path)
                    meter.count(st)
        except OSError:
            continue
    return meter.limit


class _Ctx:
    def __init__(self, registry, deadline: float | None, limits=None) -> None:
        self.registry = registry
        self.deadline = deadline
        self.ticks = 0
        self.verdicts: dict[str, str | None] = {}     # new dir -> first hold reason below
        self.paths: dict[str, list[str]] = {}         # new top dir -> what it creates
        self.marked: dict[str, list[str]] = {}        # ... and what in it carries privilege
        self.meter = Meter(limits)    # counted on this walk: no second walk of the stage

    def tick(self) -> None:
        self.ticks += 1
        if self.deadline is not None and (self.ticks & 255) == 1:
            import time

            if time.monotonic() > self.deadline:
                raise Overrun(f"settling stopped after {self.ticks} entries: over its time bound")


def plan(upper: str, workspace: str, registry, deadline: float | None = None,
         limits=None) -> Plan:
    """The plan of a stage; ``deadline`` (time.monotonic()) bounds it (Overrun).
    ``limits`` (a profile's): ``Plan.limit`` says which one the stage broke."""
    from ringfence.staging.git.discovery import View

    registry.post = View(upper, workspace)
    registry.pre = View(None, workspace)
    p = Plan()
    ctx = _Ctx(registry, deadline, limits)
    stack = [(upper, workspace, "")]
    while stack:
        stack.extend(reversed(_walk_dir(*stack.pop(), ctx, p)))
    from ringfence.staging.git.repo_judges import tie_refs

    tie_refs(p)
    p.limit = ctx.meter.limit
    return p


def _subtree(upath: str, rel: str, ctx: _Ctx) -> str | None:
    """The first hold reason in a new upper dir's subtree, filling ``ctx.verdicts``
    for every dir below it (one pass, bottom-up: O(entries) at any depth)."""
    order: list[tuple[str, str, str | None]] = []     # (dir rel, parent rel, own reason)
    stack = [(upath, rel, None, None)]
    own: dict[str, str | None] = {}
    paths: list[str] = []                # what a whole move creates (as _paths)
    marked: list[str] = []               # what in it place.strip must clear
    registry = ctx.registry
    while stack:
        up, r, parent, above = stack.pop()
        reason = None
        with os.scandir(up) as it:
            entries = list(it)
        # loose objects: one verdict for the directory (from R/objects's, when it
        # covered this R/objects/XX)
        cut = derived(registry, above, r, entries) or shortcut(registry, r)
        for e in entries:
            ctx.tick()
            er = f"{r}/{e.name}"
            st = e.stat(follow_symlinks=False)
            ctx.meter.count(st)
            if carries_privilege(e.path, st):
                marked.append(e.path)
            covered = cut is not None and cut.covers(registry, e.name, st)
            if reason is None:
                reason = (cut.verdict if covered
                          else judge_entry(registry, er, e.path, st, "", None)[0])
            if stat.S_ISDIR(st.st_mode):
                stack.append((e.path, er, r, cut if covered else None))
            else:
                paths.append(er)
        if not entries:
            paths.append(r)
        own[r] = reason
        order.append((r, parent, reason))
    for r, parent, _ in reversed(order):           # children before parents
        v = ctx.verdicts.get(r) or own[r]
        ctx.verdicts[r] = v
        if parent is not None and v and not ctx.verdicts.get(parent):
            ctx.verdicts[parent] = v
    ctx.paths[rel] = paths
    ctx.marked[rel] = marked
    return ctx.verdicts[rel]


def _replaced_objects(registry, made, was, rel: str, upath: str, lpath: str) -> str | None:
    """A directory that replaces the workspace's (``rm -rf d; mkdir d``: opaque) is
    judged as new, so the merge walk's two object rules are applied here: a git
    object the workspace had keeps its bytes, and no cache git trusts over the
    commits goes into a repository the workspace had. Only ``inside.object_cache`` paths
    (``objects/`` of a git dir) have those kinds: the rest is not looked up again."""
    for g in made:
        if not (g.startswith("objects/") or "/objects/" in g):
            continue
        hit = registry.lookup(g)
        root = registry.git_root(g)
        if hit is None or root is None or not registry.pre.is_git_dir(root):
            continue
        if hit[0] == "git-cache":
            return f"{g}: a cache git log trusts over the commits, put into the repository"
        if hit[0] == "git-object" and g in was:
            tail = g[len(rel):]
            why = judge_entry(registry, g, upath + tail, os.lstat(upath + tail), lpath + tail,
                         _lstat(lpath + tail))[0]
            if why:
                return f"{g}: {why}"
    return None


def _walk_dir(upper_dir: str, ws_dir: str, rel_dir: str, ctx: _Ctx, p: Plan) -> list:
    """Plan one upper dir's entries; the dirs to walk next."""
    registry = ctx.registry
    more = []
    counted = rel_dir in ctx.verdicts        # inside a new subtree: _subtree counted it
    with os.scandir(upper_dir) as it:
        entries = sorted(it, key=lambda e: e.name)
    for e in entries:
        ctx.tick()
        rel = f"{rel_dir}/{e.name}" if rel_dir else e.name
        upath, lpath = e.path, os.path.join(ws_dir, e.name)
        ust = e.stat(follow_symlinks=False)
        if not counted:
            ctx.meter.count(ust, exact=False)       # the cut check once it is a change
        lst = _lstat(lpath)
        if whiteout(ust):
            if lst is None:
                continue                    # created and deleted again in the run
            gone = _lower_tree(lpath, rel)
            p.deleted.extend(gone)
            reason = None
            for g in gone:
                reason = reason or judge_entry(registry, g, None, None, "", None)[0]
            p.actions.append(Action("delete", rel, reason, None))
            continue
        is_dir = stat.S_ISDIR(ust.st_mode)
        if is_dir and lst is not None and stat.S_ISDIR(lst.st_mode) and not _opaque(upath):
            more.append((upath, lpath, rel))             # merge into the existing dir
            continue
        if is_dir:
            reason = (ctx.verdicts[rel] if rel in ctx.verdicts else _subtree(upath, rel, ctx)) \
                or judge_entry(registry, rel, upath, ust, "", None)[0]
            if lst is None:
                if reason is None:
                    made = ctx.paths.pop(rel, None)
                    marked = ctx.marked.pop(rel, None)
                    p.created.extend(made if made is not None else _tree(upath, rel))
                    p.actions.append(Action("move", rel))
                    if made is not None and marked is not None:
                        p.inspected[rel] = marked
                else:       # apply what is harmless, one by one; hold the rest
                    p.actions.append(Action("mkdir", rel))
                    more.append((upath, lpath, rel))
                continue
            # replaces a workspace dir (opaque) or a non-dir: delete, then move
            made = _tree(upath, rel)
            gone = _lower_tree(lpath, rel)
            for g in gone:
                reason = reason or judge_entry(registry, g, None, None, "", None)[0]
            if reason is None and registry.lookup(rel) is not None and not stat.S_ISDIR(lst.st_mode):
                reason = "replaces a file the host obeys with a directory"
            keep, was = set(made), set(gone)
            reason = reason or _replaced_objects(registry, made, was, rel, upath, lpath)
            p.deleted.extend(g for g in gone if g not in keep)
            p.modified.extend(g for g in made if g in was)
            p.created.extend(g for g in made if g not in was)
            p.actions.append(Action("replace", rel, reason))
            continue
        if lst is not None and _same(upath, ust, lpath, lst):
            continue                                          # copy-up, no change
        if not counted:
            ctx.meter.cut(ust)
        reason, kind = judge_entry(registry, rel, upath, ust, lpath, lst)
        if kind == "git-cache" and reason is None:
            # git rebuilds it; the sandbox's copy could rewrite history for git log
            if lst is not None:
                p.deleted.append(rel)
                p.actions.append(Action("delete", rel))
            continue
        if lst is None:
            p.created.append(rel)
            p.actions.append(Action("move", rel, reason, kind))
        elif stat.S_ISDIR(lst.st_mode):
            gone = _lower_tree(lpath, rel)
            for g in gone:
                reason = reason or judge_entry(registry, g, None, None, "", None)[0]
            p.deleted.extend(g for g in gone if g != rel)
            p.modified.append(rel)
            p.actions.append(Action("replace", rel, reason, kind))
        else:
            p.modified.append(rel)
            p.actions.append(Action("move", rel, reason, kind))
    return more


# --- applying: ringfence/staging/place.py -----------------------------------------

from ringfence.staging.place import Unsafe, apply_action, apply_plan  # noqa: E402,F401
