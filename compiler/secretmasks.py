"""Strict's workspace-secret masks: find ``.env*``, ``*.pem``, ``*.key``, ``id_*``
under the workspace without following a link out of it, and without listing
directories that have not changed since the last run.

The walk
  * never follows a symbolic link: directories are entered only if they are
    real directories of the workspace (``is_dir(follow_symlinks=False)``, and a
    directory re-opened later must still be the inode its parent listed);
  * masks a secret-named *link* at its target only if the target, resolved one
    component at a time, stays inside the workspace. A link pointing out is not
    followed, not stat'ed and not masked: it is reported (RF660);
  * does not list ``node_modules`` or ``__pycache__`` (PRUNE) once it has a
    cache: files there come from package tarballs and the compiler. (Not
    virtual environments: their marker, ``pyvenv.cfg``, is a file a sandbox can
    write, and a planted one would stop masking secrets added under it later.) The one way a user's secret gets there is a
    sandbox moving a directory that holds one (a mask cannot be renamed, its
    parent can). So every mask is remembered with its inode; when a remembered
    secret is no longer where it was (or another file is), and whenever there
    is no usable cache (no memory), the pruned trees are searched, by name and
    by inode, and what is found there stays masked while it exists.

The cache (``<cache>/secrets-<key>.bin``, marshal, in ringfence's private pattern cache,
hidden from every sandbox) maps each directory to its inode, mtime_ns and
ctime_ns, its sub-directories and its secret-named entries. A directory whose
three values are unchanged is not listed again: creating, removing or renaming
an entry changes its directory's mtime and ctime, and ctime cannot be set back by
an unprivileged process (``touch -d`` on a directory changes its ctime too).
Directories changed less than RACY_NS before the walk are not cached (a change
in the same clock tick would leave all three values equal). A cache that cannot
be read, or was written for another workspace or pattern set, is ignored: the
walk lists everything again. The cost of a run is one ``lstat`` per directory
outside ``node_modules`` plus loading the cache: O(directories), not O(files).
"""

from __future__ import annotations

import marshal
import os
import re
import stat
import time

VERSION = 4             # 2: marshal, not JSON (5x faster to load); 3: venv pruning withdrawn;
                        # 4: names matched case-blind
# Directory names not searched (docs/sandbox.md "Workspace secrets"): npm, pnpm
# and yarn install package files here; a `.env` there is a package's file.
PRUNE = frozenset({"node_modules", "__pycache__"})
RACY_NS = 2_000_000_000
MAX_HOPS = 40
_OPEN = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0)


def resolve_inside(path: str, root: str, declared: str = "") -> str | None:
    """``path`` (under ``root``, a real directory) with every link resolved, one
    component at a time; None if it leaves ``root``, "" if it dangles or loops
    inside it (nothing there to read, so nothing to mask). Nothing
    outside ``root`` is ever stat'ed: an absolute target outside is refused by
    its text. ``declared`` is the workspace as the user named it (an absolute
    target may use that spelling)."""
    if not (path == root or path.startswith(root + "/")):
        return None
    pending = list(reversed(path[len(root):].split("/")))
    cur, hops = root, 0
    while pending:
        comp = pending.pop()
        if comp in ("", "."):
            continue
        if comp == "..":
            if cur == root:
                return None
            cur = os.path.dirname(cur)
            continue
        cand = cur + "/" + comp
        try:
            st = os.lstat(cand)
        except OSError:
            return ""
        if stat.S_ISLNK(st.st_mode):
            hops += 1
            if hops > MAX_HOPS:
                return ""
            try:
                target = os.readlink(cand)
            except OSError:
                return ""
            if target.startswith("/"):
                for base in (root, declared):
                    if base and (target == base or target.startswith(base + "/")):
                        target = target[len(base):]
                        cur = root
                        break
                else:
                    return None
            pending.extend(reversed(target.split("/")))
            continue
        cur = cand
    return cur


def cache_file(cache_dir: str, root: str, names: list[str]) -> str:
    """The cache file of (root, names). The name only has to spread keys: ``_load``
    checks the root and names stored inside, so a collision is a cache miss, never a
    wrong mask set. FNV-1a, because importing hashlib (OpenSSL) costs more than the
    whole cache lookup."""
    key = 0xcbf29ce484222325
    for byte in "\0".join([str(VERSION), root, *sorted(names)]).encode("utf-8", "surrogateescape"):
        key = ((key ^ byte) * 0x100000001b3) & 0xFFFFFFFFFFFFFFFF
    return os.path.join(cache_dir, f"secrets-{key:016x}.bin")


def _key(path: str, key_path: str) -> bytes | None:
    from .cacheseal import load_key

    return load_key(key_path or os.path.join(os.path.dirname(path), ".mask.key"))


def _load(path: str, root: str, names: list[str], key: bytes | None = None
          ) -> tuple[dict, list] | None:
    """(dirs, known masks), or None if there is no usable cache (or it does not
    carry this state dir's keyed digest: compiler/cacheseal.py)."""
    from .cacheseal import unseal

    try:
        with open(path, "rb") as fh:
            raw = unseal(key, fh.read())
        if raw is None:
            return None
        data = marshal.loads(raw)
        if (data.get("v") != VERSION or data.get("root") != root
                or data.get("names") != sorted(names)):
            return None
        dirs, known = data["dirs"], data["known"]
        if isinstance(dirs, dict) and isinstance(known, list) and all(
                isinstance(k, list) and len(k) == 2 and isinstance(k[0], str)
                and isinstance(k[1], int) for k in known):
            return dirs, known
    except (OSError, ValueError, TypeError, KeyError, AttributeError, EOFError):
        pass
    return None


def _save(path: str, root: str, names: list[str], dirs: dict, known: list,
          key: bytes | None = None) -> None:
    from .cacheseal import seal

    if key is None:
        return
    data = {"v": VERSION, "root": root, "names": sorted(names), "dirs": dirs, "known": known}
    tmp = f"{path}.{os.getpid()}.tmp"
    try:
        os.makedirs(os.path.dirname(path), mode=0o700, exist_ok=True)
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o600)
        with os.fdopen(fd, "wb") as fh:
            fh.write(seal(key, marshal.dumps(data)))
        os.replace(tmp, path)
    except OSError:
        try:
            os.unlink(tmp)
        except OSError:
            pass


def _list(path: str, expect_ino: int | None, parent_dev: int, anyre):
    """(stat, subdirs, hits) of a directory, listed; None if it is not (or no
    longer) the directory its parent listed."""
    try:
        fd = os.open(path, _OPEN)
    except OSError:
        return None
    try:
        st = os.fstat(fd)
        if expect_ino is not None and not _same(path, st, expect_ino, parent_dev):
            return None
        subs, hits = [], []
        with os.scandir(fd) as it:
            for e in it:
                try:
                    is_dir = e.is_dir(follow_symlinks=False)
                    if anyre.match(e.name):
                        hits.append([e.name, int(e.is_symlink())])
                    if is_dir:
                        subs.append([e.name, e.inode()])
                except OSError:
                    continue
        return st, subs, hits
    except OSError:
        return None
    finally:
        os.close(fd)


def _same(path: str, st, expect_ino: int, parent_dev: int) -> bool:
    """Is ``path`` still the directory its parent listed? Fast path: the inode
    the listing gave. Otherwise (a mount point inside the workspace lists the
    inode beneath it; overlayfs without xino can give readdir and stat different
    inodes; or a component was swapped for a link) accept it only if no link
    leads there, so a mismatch costs a realpath and never a mask."""
    if st.st_dev == parent_dev and st.st_ino == expect_ino:
        return True
    return os.path.realpath(path) == path


def walk(root: str, anyre, old: dict, *, prune=PRUNE, now_ns: int | None = None):
    """(hits as (dir, name, is_link), pruned dirs, new cache dict).

    The loop runs once per directory of the workspace on every Strict run, so it
    is written for speed: locals for the hot callables, one string concatenation
    per sub-directory, and the inode check inlined (``_same`` only on a miss)."""
    now_ns = time.time_ns() if now_ns is None else now_ns
    cutoff = now_ns - RACY_NS        # a directory changed after this is not cached
    new: dict = {}
    hits: list[tuple[str, str, int]] = []
    pruned: list[str] = []
    try:
        root_dev = os.lstat(root).st_dev
    except OSError:
        return hits, pruned, new
    lstat, isdir, get = os.lstat, stat.S_ISDIR, old.get
    stack: list[tuple[str, str, int | None, int]] = [("", root, None, root_dev)]
    pop, push, add_hit = stack.pop, stack.append, hits.append
    while stack:
        rel, path, expect, pdev = pop()
        try:
            st = lstat(path)
        except OSError:
            continue
        if not isdir(st.st_mode):
            continue
        rec = get(rel)
        if (rec is not None and rec[0] == st.st_mtime_ns and rec[1] == st.st_ctime_ns
                and rec[2] == st.st_ino and len(rec) == 5
                and (expect is None or (st.st_ino == expect and st.st_dev == pdev)
                     or _same(path, st, expect, pdev))):
            subs, found = rec[3], rec[4]
        else:
            listed = _list(path, expect, pdev, anyre)
            if listed is None:
                continue
            st, subs, found = listed
            rec = [st.st_mtime_ns, st.st_ctime_ns, st.st_ino, subs, found]
        if st.st_mtime_ns <= cutoff and st.st_ctime_ns <= cutoff:
            new[rel] = rec
        for name, is_link in found:
            add_hit((path, name, is_link))
        if subs:
            prefix, rprefix, dev = path + "/", (rel + "/" if rel else ""), st.st_dev
            for name, ino in subs:
                if name in prune:
                    pruned.append(prefix + name)
                else:
                    push((rprefix + name, prefix + name, ino, dev))
    return hits, pruned, new


def _search_pruned(tops: list[str], anyre, lost_inos: set[int]) -> list[tuple[str, str, int]]:
    """Every secret-named entry, and every entry whose inode is a lost secret's,
    under the pruned trees (no cache, no links followed)."""
    out = []
    for top in tops:
        try:
            dev = os.lstat(top).st_dev
        except OSError:
            continue
        stack = [(top, None)]
        while stack:
            path, expect = stack.pop()
            listed = _list(path, expect, dev, _Any(anyre, lost_inos, path))
            if listed is None:
                continue
            _, subs, found = listed
            out.extend((path, name, is_link) for name, is_link in found)
            stack.extend((f"{path}/{name}", ino) for name, ino in subs)
    return out


class _Any:
    """A matcher for _list: a secret name, or (by inode) a lost secret."""

    def __init__(self, anyre, inos: set[int], path: str):
        self.anyre, self.inos, self.path = anyre, inos, path

    def match(self, name: str) -> bool:
        if self.anyre.match(name):
            return True
        if not self.inos:
            return False
        try:
            return os.lstat(f"{self.path}/{name}").st_ino in self.inos
        except OSError:
            return False


def find(prefix: str, items: list[tuple[str, str]], cache_dir: str = "", key_path: str = ""):
    """Expand ``PREFIX/**/NAME`` patterns over the workspace ``prefix``.

    Returns ``(found, outside)``: pattern -> real paths inside the workspace to
    mask, and ``[(link, target)]`` for secret-named links that point outside it
    (not masked). ``cache_dir`` "" walks without a cache; ``key_path``: the cache's
    key (in the state dir; "" keeps it beside the cache, for tests)."""
    import fnmatch

    declared = os.path.abspath(prefix).rstrip("/") or "/"
    root = os.path.realpath(declared)
    names = [name for _, name in items]
    # Case-blind: `.ENV`, `SERVER.PEM` and `ID_RSA` hold what `.env`, `server.pem`
    # and `id_rsa` do (and are the same file on a case-folding filesystem).
    regs = [(pat, re.compile(fnmatch.translate(name), re.IGNORECASE)) for pat, name in items]
    anyre = re.compile("|".join(f"(?:{fnmatch.translate(n)})" for n in names), re.IGNORECASE)
    found: dict[str, list[str]] = {}
    outside: list[tuple[str, str]] = []
    if not os.path.isdir(root):
        return found, outside
    path = cache_file(cache_dir, root, names) if cache_dir else ""
    key = _key(path, key_path) if path else None
    loaded = _load(path, root, names, key) if path else None
    # Without a usable cache there is no memory of earlier masks, so a secret
    # moved into node_modules could not be noticed: search the pruned trees too.
    memory = loaded is not None
    old, known = loaded if memory else ({}, [])
    try:
        hits, pruned, new = walk(root, anyre, old)
    except (TypeError, ValueError, IndexError, KeyError, AttributeError):
        # A cache that parses but is malformed: list everything again.
        old, known, memory = {}, [], False
        hits, pruned, new = walk(root, anyre, old)
    seen = {f"{d}/{n}" for d, n, _ in hits}
    lost: set[int] = set()
    for entry in known:
        try:
            rel, ino = entry
            p = f"{root}/{rel}"
            st = os.lstat(p) if resolve_inside(p, root) == p else None   # no link on the way
        except (OSError, TypeError, ValueError):
            st, ino, p = None, None, ""
        if st is not None and st.st_ino == ino:
            if p not in seen:                   # under a pruned tree: still masked
                hits.append((os.path.dirname(p), os.path.basename(p), 0))
        elif isinstance(ino, int):
            lost.add(ino)       # moved, replaced (a decoy at the old path) or deleted
    if lost or not memory:
        hits.extend(_search_pruned(pruned, anyre, lost))
    masks: list[list] = []
    for d, name, is_link in hits:
        p = f"{d}/{name}"
        target = resolve_inside(p, root, declared) if is_link else p
        if target == "":
            continue
        if target is None:
            try:
                outside.append((p, os.readlink(p)))
            except OSError:
                pass
            continue
        if target == root:
            outside.append((p, "."))         # never mask the whole workspace
            continue
        # A lost secret found by its inode under another name goes with the first
        # pattern: it is masked once either way.
        pats = [pat for pat, rx in regs if rx.match(name)] or [regs[0][0]]
        for pat in pats:
            found.setdefault(pat, []).append(target)
        try:
            masks.append([target[len(root) + 1:], os.lstat(target).st_ino])
        except OSError:
            pass
    if path and (new != old or masks != known):
        _save(path, root, names, new, masks, key)
    for pat in found:
        found[pat] = sorted(set(found[pat]))
    return found, sorted(set(outside))
