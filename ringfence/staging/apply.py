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

Each change is judged by ``ringfence.staging.judges``; a held one stays in the stage.

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

import errno
import os
import shutil
import stat

from ringfence.rfcore.records import field, record

OPAQUE = ("user.overlay.opaque", "trusted.overlay.opaque")
READ_LIMIT = 1 << 20          # judged files larger than this are held unread


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

    @property
    def held(self) -> list:
        return [a for a in self.actions if a.held]


def _whiteout(st) -> bool:
    return stat.S_ISCHR(st.st_mode) and st.st_rdev == 0


def _opaque(path: str) -> bool:
    for name in OPAQUE:
        try:
            if os.getxattr(path, name, follow_symlinks=False) == b"y":
                return True
        except OSError:
            continue
    return False


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
    with open(u, "rb") as a, open(l, "rb") as b:
        while True:
            x, y = a.read(1 << 16), b.read(1 << 16)
            if x != y:
                return False
            if not x:
                return True


def _lower_tree(path: str, rel: str) -> list[str]:
    """Every path below (and including) a workspace path, never following links."""
    out: list[str] = []
    st = _lstat(path)
    if st is None:
        return out
    if not stat.S_ISDIR(st.st_mode):
        return [rel]
    stack = [(path, rel)]
    while stack:
        p, r = stack.pop()
        try:
            entries = list(os.scandir(p))
        except OSError:
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


def _content(path: str, st) -> bytes | None:
    if st is None or stat.S_ISDIR(st.st_mode):
        return None
    if stat.S_ISLNK(st.st_mode):
        return os.fsencode(os.readlink(path))
    if not stat.S_ISREG(st.st_mode):
        return b""
    if st.st_size > READ_LIMIT:
        return None
    with open(path, "rb") as fh:
        return fh.read()


def plan(upper: str, workspace: str, registry) -> Plan:
    p = Plan()
    _walk(upper, workspace, "", registry, p)
    return p


def _judge(registry, rel: str, upath: str | None, ust, lpath: str, lst) -> tuple[str | None, str | None]:
    hit = registry.lookup(rel)
    if hit is None:
        return None, None
    kind = hit[0]
    from ringfence.staging.judges import judge

    if upath is None:                       # deletion
        return judge(kind, rel, None, None, is_link=False, workspace=registry.workspace), kind
    if stat.S_ISDIR(ust.st_mode):
        return None, kind                   # a directory is judged by what it holds
    new = _content(upath, ust)
    if new is None and stat.S_ISREG(ust.st_mode) and kind != "git-data":
        return "too large to judge", kind
    old = _content(lpath, lst) if lst is not None and not stat.S_ISDIR(lst.st_mode) else None
    return judge(kind, rel, new if new is not None else b"", old,
                 is_link=stat.S_ISLNK(ust.st_mode), workspace=registry.workspace), kind


def _subtree_verdict(upath: str, rel: str, lpath: str, registry) -> tuple[list[str], str | None]:
    """(every non-dir path below a new upper dir, the first hold reason or None)."""
    paths: list[str] = []
    reason = None
    stack = [(upath, rel)]
    while stack:
        up, r = stack.pop()
        entries = list(os.scandir(up))
        if not entries:
            paths.append(r)
        for e in entries:
            er = f"{r}/{e.name}"
            st = e.stat(follow_symlinks=False)
            if stat.S_ISDIR(st.st_mode):
                stack.append((e.path, er))
                if reason is None:
                    reason = _judge(registry, er, e.path, st, "", None)[0]
                continue
            paths.append(er)
            if reason is None:
                reason = _judge(registry, er, e.path, st, os.path.join(lpath, e.name), None)[0]
    return paths, reason


def _walk(upper_dir: str, ws_dir: str, rel_dir: str, registry, p: Plan) -> None:
    with os.scandir(upper_dir) as it:
        entries = sorted(it, key=lambda e: e.name)
    for e in entries:
        rel = f"{rel_dir}/{e.name}" if rel_dir else e.name
        upath, lpath = e.path, os.path.join(ws_dir, e.name)
        ust = e.stat(follow_symlinks=False)
        lst = _lstat(lpath)
        if _whiteout(ust):
            if lst is None:
                continue                    # created and deleted again in the run
            gone = _lower_tree(lpath, rel)
            p.deleted.extend(gone)
            reason = None
            for g in gone:
                reason = reason or _judge(registry, g, None, None, "", None)[0]
            p.actions.append(Action("delete", rel, reason, None))
            continue
        is_dir = stat.S_ISDIR(ust.st_mode)
        if is_dir and lst is not None and stat.S_ISDIR(lst.st_mode) and not _opaque(upath):
            _walk(upath, lpath, rel, registry, p)            # merge into the existing dir
            continue
        if is_dir:
            made, reason = _subtree_verdict(upath, rel, lpath, registry)
            if lst is None:
                p.created.extend(made)
                if reason is None:
                    p.actions.append(Action("move", rel))
                else:       # apply what is harmless, one by one; hold the rest
                    p.created = p.created[:len(p.created) - len(made)]
                    p.actions.append(Action("mkdir", rel))
                    _walk(upath, os.path.join(ws_dir, e.name), rel, registry, p)
                continue
            # replaces a workspace dir (opaque) or a non-dir: delete, then move
            gone = _lower_tree(lpath, rel)
            for g in gone:
                reason = reason or _judge(registry, g, None, None, "", None)[0]
            if reason is None and registry.lookup(rel) is not None and not stat.S_ISDIR(lst.st_mode):
                reason = "replaces a file the host obeys with a directory"
            keep = set(made)
            p.deleted.extend(g for g in gone if g not in keep)
            p.modified.extend(g for g in made if g in set(gone))
            p.created.extend(g for g in made if g not in set(gone))
            p.actions.append(Action("replace", rel, reason))
            continue
        if lst is not None and _same(upath, ust, lpath, lst):
            continue                                          # copy-up, no change
        reason, kind = _judge(registry, rel, upath, ust, lpath, lst)
        if lst is None:
            p.created.append(rel)
            p.actions.append(Action("move", rel, reason, kind))
        elif stat.S_ISDIR(lst.st_mode):
            gone = _lower_tree(lpath, rel)
            for g in gone:
                reason = reason or _judge(registry, g, None, None, "", None)[0]
            p.deleted.extend(g for g in gone if g != rel)
            p.modified.append(rel)
            p.actions.append(Action("replace", rel, reason, kind))
        else:
            p.modified.append(rel)
            p.actions.append(Action("move", rel, reason, kind))


# --- applying ----------------------------------------------------------------------

class Unsafe(OSError):
    pass


def _open_parent(ws_fd: int, rel: str) -> tuple[int, str]:
    """An fd of ``rel``'s parent inside the workspace, opened without following any
    symlink; (fd, last component)."""
    parts = rel.split("/")
    fd = os.dup(ws_fd)
    try:
        for part in parts[:-1]:
            if part in ("", ".", ".."):
                raise Unsafe(errno.EINVAL, f"bad path component in {rel!r}")
            nfd = os.open(part, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC,
                          dir_fd=fd)
            os.close(fd)
            fd = nfd
    except BaseException:
        os.close(fd)
        raise
    return fd, parts[-1]


def _remove(dfd: int, name: str) -> None:
    try:
        st = os.lstat(name, dir_fd=dfd)
    except FileNotFoundError:
        return
    if stat.S_ISDIR(st.st_mode):
        shutil.rmtree(name, dir_fd=dfd)     # fd-based: never follows a symlink
    else:
        os.unlink(name, dir_fd=dfd)


def _copy_into(src: str, dfd: int, name: str) -> None:
    """Cross-filesystem fallback of a rename: copy ``src`` to ``name`` in ``dfd``."""
    st = os.lstat(src)
    if stat.S_ISLNK(st.st_mode):
        _remove(dfd, name)
        os.symlink(os.readlink(src), name, dir_fd=dfd)
    elif stat.S_ISDIR(st.st_mode):
        try:
            os.mkdir(name, stat.S_IMODE(st.st_mode), dir_fd=dfd)
        except FileExistsError:
            pass
        sub = os.open(name, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC,
                      dir_fd=dfd)
        try:
            for e in os.scandir(src):
                _copy_into(e.path, sub, e.name)
        finally:
            os.close(sub)
    elif stat.S_ISREG(st.st_mode):
        tmp = f".{name}.rf-{os.getpid()}"
        out = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC,
                      stat.S_IMODE(st.st_mode), dir_fd=dfd)
        try:
            with open(src, "rb") as fh:
                while chunk := fh.read(1 << 20):
                    os.write(out, chunk)
            os.fchmod(out, stat.S_IMODE(st.st_mode))
        finally:
            os.close(out)
        os.rename(tmp, name, src_dir_fd=dfd, dst_dir_fd=dfd)
    # other file types (fifos, devices) are not carried over


def _move(upper: str, rel: str, dfd: int, name: str) -> None:
    src = os.path.join(upper, rel)
    try:
        os.rename(src, name, dst_dir_fd=dfd)
    except OSError as exc:
        if exc.errno == errno.EXDEV:
            _copy_into(src, dfd, name)
        elif exc.errno in (errno.EISDIR, errno.ENOTEMPTY, errno.EEXIST, errno.ENOTDIR):
            _remove(dfd, name)
            os.rename(src, name, dst_dir_fd=dfd)
        else:
            raise


def apply_action(a: Action, upper: str, ws_fd: int) -> None:
    dfd, name = _open_parent(ws_fd, a.path)
    try:
        if a.op == "delete":
            _remove(dfd, name)
        elif a.op == "mkdir":
            try:
                os.mkdir(name, stat.S_IMODE(os.lstat(os.path.join(upper, a.path)).st_mode),
                         dir_fd=dfd)
            except FileExistsError:
                if not stat.S_ISDIR(os.lstat(name, dir_fd=dfd).st_mode):
                    raise
        elif a.op == "replace":
            _remove(dfd, name)
            _move(upper, a.path, dfd, name)
        else:
            _move(upper, a.path, dfd, name)
    finally:
        os.close(dfd)


def apply_plan(p: Plan, upper: str, workspace: str, *, held: bool = False) -> list[tuple[str, str]]:
    """Apply the actions (the held ones only with ``held=True``); [(path, error)]."""
    failed: list[tuple[str, str]] = []
    ws_fd = os.open(workspace, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        for a in p.actions:
            if bool(a.held) != held and not (held and a.op == "mkdir"):
                continue
            try:
                apply_action(a, upper, ws_fd)
            except OSError as exc:
                why = ("a symbolic link on the way (not followed)"
                       if exc.errno in (errno.ELOOP, errno.ENOTDIR) else
                       (exc.strerror or str(exc)))
                failed.append((a.path, why))
    finally:
        os.close(ws_fd)
    return failed
