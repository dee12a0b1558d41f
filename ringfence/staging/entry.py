"""Judge one change of a stage against the registry: why it is held, or None.

``judge_entry(registry, rel, upath, ust, lpath, lst)`` is the verdict ``apply.plan``
gives one entry of the upper dir (``upath``/``ust``; None for a deletion) against
what the workspace had there (``lpath``/``lst``; None when it had nothing), with
the registry kind it has. FIFOs, sockets and device nodes are held; a git object
rewritten in place is a forgery; a git index is rewritten without the caches a
writer can forge; everything else goes to ``judges.judge`` with its new and old
content (at most ``READ_LIMIT`` bytes read; larger is held unread).
"""

from __future__ import annotations

import os
import stat

from ringfence.rfcore.fsops import same_bytes
from ringfence.staging.git.discovery import whiteout

READ_LIMIT = 1 << 20          # judged files larger than this are held unread
INDEX_LIMIT = 256 << 20       # but a git index is read whole (rfcore/gitindex.MAX_INDEX)


def _content(path: str, st, limit: int = READ_LIMIT) -> bytes | None:
    if st is None or stat.S_ISDIR(st.st_mode):
        return None
    if stat.S_ISLNK(st.st_mode):
        return os.fsencode(os.readlink(path))
    if not stat.S_ISREG(st.st_mode):
        return b""
    if st.st_size > limit:
        return None
    with open(path, "rb") as fh:
        return fh.read()


_SPECIAL = {stat.S_IFIFO: "a FIFO", stat.S_IFSOCK: "a socket", stat.S_IFCHR: "a device node",
            stat.S_IFBLK: "a device node"}


def judge_entry(registry, rel: str, upath: str | None, ust, lpath: str,
                lst) -> tuple[str | None, str | None]:
    """(why it is held or None, the registry kind or None) of one entry."""
    if ust is not None and not whiteout(ust):
        special = _SPECIAL.get(stat.S_IFMT(ust.st_mode))
        if special:
            return f"{special}: the host's tools would open or obey it", None
    hit = registry.lookup(rel)
    from ringfence.staging.judges import judge
    from ringfence.staging.links import judge_link

    link = None
    if ust is not None and stat.S_ISLNK(ust.st_mode):
        link = judge_link(rel, os.readlink(upath), registry.post, registry.guarded)
    root = registry.git_root(rel) if hit is not None and upath is not None else None
    fresh = registry.new_repo_reason(root) if root is not None else None
    if hit is None:
        if link is None and upath is not None:
            from ringfence.staging.shadow import shadow_reason

            link = shadow_reason(registry, rel, ust)
        return link, None
    kind = hit[0]
    if upath is None:                       # deletion
        return judge(kind, rel, None, None, is_link=False, workspace=registry.workspace), kind
    if stat.S_ISDIR(ust.st_mode):
        return fresh, kind                  # a directory is judged by what it holds
    if kind == "git-object" and lst is not None and not stat.S_ISLNK(ust.st_mode):
        # objects are immutable: the same id with other bytes is a forgery
        # (a freshened mtime with the same bytes is git's own doing)
        if not (stat.S_ISREG(lst.st_mode) and same_bytes(upath, lpath)):
            return "rewrites an existing git object (git would read these bytes under " \
                   "the old id)", kind
        return None, kind
    if kind in ("git-object", "git-cache"):
        return (link or fresh or (judge(kind, rel, b"", None, is_link=True,
                                       workspace=registry.workspace)
                                 if stat.S_ISLNK(ust.st_mode) else None)), kind
    if kind == "git-reflog":
        return (_rewrites_reflog(upath, ust, lpath, lst) or link or fresh), kind
    parent = rel.rpartition("/")[0]
    if (kind == "git-redirect" and rel.rpartition("/")[2] == "commondir"
            and registry.pre is not None and registry.pre.is_git_dir(parent)
            and not (lst is not None and stat.S_ISREG(lst.st_mode)
                     and stat.S_ISREG(ust.st_mode) and same_bytes(upath, lpath))):
        # git reads config, hooks and refs from the common dir: pointing a
        # repository the workspace had at another one swaps all of them
        return "points an existing repository at another one (its config, hooks and refs)", kind
    if kind == "git-ref" and upath is not None:
        return (_moved_without_reflog(registry, rel, upath, ust, lpath, lst) or link
                or fresh), kind
    if kind == "hook":           # judged by its name (only *.sample is harmless): not read
        return judge(kind, rel, b"", None, is_link=stat.S_ISLNK(ust.st_mode),
                     workspace=registry.workspace) or link or fresh, kind
    limit = INDEX_LIMIT if kind == "git-index" else READ_LIMIT   # a big repo's index
    new = _content(upath, ust, limit)
    if new is None and stat.S_ISREG(ust.st_mode) and kind != "git-data":
        return "too large to judge", kind
    old = (_content(lpath, lst, limit) if lst is not None and not stat.S_ISDIR(lst.st_mode)
           else None)
    why = judge(kind, rel, new if new is not None else b"", old,
                is_link=stat.S_ISLNK(ust.st_mode), workspace=registry.workspace,
                view=registry.post)
    if kind == "git-index" and why is None and new and stat.S_ISREG(ust.st_mode):
        why = _strip_index_caches(upath, ust, new, (rel, old, registry.post))
    return why or link or fresh, kind


def _rewrites_reflog(upath: str, ust, lpath: str, lst) -> str | None:
    """Why a reflog write is held: git only appends to one, so a write that does not
    keep the old bytes as its start erases history it recorded (``commit --amend``
    with the reflog rewritten shows the host the old message on a new commit)."""
    if stat.S_ISLNK(ust.st_mode) or not stat.S_ISREG(ust.st_mode):
        return "a reflog that is not a plain file"
    if lst is None or not stat.S_ISREG(lst.st_mode) or lst.st_size == 0:
        return None
    if ust.st_size < lst.st_size:
        return "rewrites the reflog (git only appends to it): entries it held are gone"
    with open(lpath, "rb") as old, open(upath, "rb") as new:
        left = lst.st_size
        while left:
            a = old.read(min(left, 1 << 16))
            if not a or a != new.read(len(a)):
                return "rewrites the reflog (git only appends to it): entries it held changed"
            left -= len(a)
    return None


def _moved_without_reflog(registry, rel: str, upath: str, ust, lpath: str, lst) -> str | None:
    """A branch the run moved (``refs/heads/*``, loose) must have its move in the
    reflog, when the repository keeps one: git appends ``old new ...`` there on every
    update, so a ref written with no such line (``echo ID > .git/refs/heads/main``
    after an amend) moved the branch behind the reflog's back."""
    if not stat.S_ISREG(ust.st_mode) or ust.st_size > 4096:
        return "a branch ref that is not a small plain file"
    with open(upath, "rb") as fh:
        new = fh.read().strip()
    if lst is not None and stat.S_ISREG(lst.st_mode):
        with open(lpath, "rb") as fh:
            if fh.read().strip() == new:
                return None                 # not moved
    root = registry.git_root(rel) or ""
    inner = rel[len(root) + 1:] if root else rel
    log = f"{root}/logs/{inner}" if root else f"logs/{inner}"
    post = registry.post.entry(log) if registry.post is not None else None
    pre = registry.pre.entry(log) if registry.pre is not None else None
    if post is None:
        return ("moves a branch whose reflog the run removed" if pre is not None
                else None)          # a repository that keeps no reflog for it
    path, st = post
    if not stat.S_ISREG(st.st_mode):
        return "a reflog that is not a plain file"
    with open(path, "rb") as fh:
        if st.st_size > 4096:
            fh.seek(st.st_size - 4096)
        tail = fh.read().rstrip(b"\n").rpartition(b"\n")[2]
    fields = tail.split(b" ", 2)
    if len(fields) < 2 or fields[1] != new:
        return "moves a branch with no reflog entry for the move (history rewritten behind it)"
    return None


def _strip_index_caches(path: str, st, data: bytes, ctx=None) -> str | None:
    """Rewrite a staged index without the caches a writer can forge (cache-tree:
    the host's next ``git commit`` would write the sandbox's tree ids; untracked
    cache: ``git status`` would hide new files). git rebuilds them. Same mode and
    times, so git's racy-entry checks see what they saw; stale entries smudged."""
    from ringfence.staging.git.index import strip_caches
    from ringfence.staging.git.repo_judges import smudge_stale

    clean = strip_caches(smudge_stale(data, *ctx) if ctx else data)
    if clean is None:
        return "an index ringfence cannot read (its caches cannot be removed)"
    if clean is data or clean == data:
        return None
    tmp = f"{path}.rf-{os.getpid()}"
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC,
                     stat.S_IMODE(st.st_mode))
        with os.fdopen(fd, "wb") as fh:
            fh.write(clean)
        os.utime(tmp, ns=(st.st_atime_ns, st.st_mtime_ns))
        os.replace(tmp, path)
    except OSError as exc:
        return f"could not remove the index's caches ({exc.strerror})"
    return None
