"""Apply a planned stage into the workspace: never through a link, never with privilege.

Every target's parent is opened component by component with ``O_NOFOLLOW |
O_DIRECTORY`` from the workspace's own fd, and every operation is ``*at()``
relative to that fd, so a symlink planted anywhere on the way makes the step fail
(recorded, RF643) instead of being followed.

Before anything moves, what it carries is stripped of privilege (:func:`strip`):
the setuid and setgid bits (a root-run sandbox could otherwise leave a
setuid-root binary or a setgid directory in the host's workspace) and every
``security.*`` and ``trusted.*`` extended attribute (``security.capability`` is a
file capability: the same thing by another name), plus overlayfs's own
``user.overlay.*`` marks. The walks are iterative: a tree of any depth is fine.
"""

from __future__ import annotations

import errno
import os
import stat

from ringfence.rfcore.fsops import rmtree_at

class Unsafe(OSError):
    pass


PRIV_BITS = stat.S_ISUID | stat.S_ISGID
_XATTR_PREFIXES = ("security.", "trusted.", "user.overlay.")


def _strip_one(path: str, st) -> None:
    if stat.S_ISLNK(st.st_mode):
        return
    if st.st_mode & PRIV_BITS:
        os.chmod(path, stat.S_IMODE(st.st_mode) & ~PRIV_BITS, follow_symlinks=False)
    try:
        names = os.listxattr(path, follow_symlinks=False)
    except OSError:
        return
    for name in names:
        if name.startswith(_XATTR_PREFIXES):
            try:
                os.removexattr(path, name, follow_symlinks=False)
            except OSError as exc:
                if exc.errno != errno.ENODATA:
                    raise Unsafe(exc.errno, f"cannot remove the {name} attribute "
                                 f"({exc.strerror})") from None


def carries_privilege(path: str, st) -> bool:
    """What :func:`_strip_one` would change: setuid/setgid bits or any extended
    attribute at all (an unreadable list counts). A link is never stripped."""
    if stat.S_ISLNK(st.st_mode):
        return False
    if st.st_mode & PRIV_BITS:
        return True
    try:
        return bool(os.listxattr(path, follow_symlinks=False))
    except OSError:
        return True


def strip(path: str, marked: list[str] | None = None) -> None:
    """Clear setuid/setgid and privileged xattrs on ``path`` and everything below it
    (never following a link). Raises Unsafe when one cannot be removed.

    ``marked``: the plan looked at everything below ``path`` already, after the
    sandbox was gone (``apply._subtree``, :func:`carries_privilege`), and these are
    the paths below it that carry privilege: only they (and ``path``) are stripped,
    with no second walk of the tree."""
    st = os.lstat(path)
    _strip_one(path, st)
    if marked is not None:
        for below in marked:
            _strip_one(below, os.lstat(below))
        return
    if not stat.S_ISDIR(st.st_mode):
        return
    stack = [path]
    while stack:
        d = stack.pop()
        with os.scandir(d) as it:
            for e in it:
                est = e.stat(follow_symlinks=False)
                _strip_one(e.path, est)
                if stat.S_ISDIR(est.st_mode):
                    stack.append(e.path)


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
        rmtree_at(dfd, name)                # fd-based, iterative: never follows a symlink
    else:
        os.unlink(name, dir_fd=dfd)


def _copy_into(src: str, dfd: int, name: str, journal=None, rel: str = "") -> None:
    """Cross-filesystem fallback of a rename: copy ``src`` to ``name`` in ``dfd``
    (iterative; links copied as links; only files, dirs and links are carried).
    Files are written unnamed and sparse (``staging/copyin.py``): a SIGKILL leaves no
    placeholder name. ``rel``: the workspace path of ``name`` (for the journal)."""
    from ringfence.staging.copyin import copy_file

    todo = [(src, os.dup(dfd), name, rel or name)]
    while todo:
        s, fd, n, r = todo.pop()
        try:
            st = os.lstat(s)
            mode = stat.S_IMODE(st.st_mode) & ~PRIV_BITS
            if stat.S_ISLNK(st.st_mode):
                _remove(fd, n)
                os.symlink(os.readlink(s), n, dir_fd=fd)
            elif stat.S_ISDIR(st.st_mode):
                try:
                    os.mkdir(n, mode, dir_fd=fd)
                except FileExistsError:
                    pass
                sub = os.open(n, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC,
                              dir_fd=fd)
                try:
                    for e in os.scandir(s):
                        todo.append((e.path, os.dup(sub), e.name, f"{r}/{e.name}"))
                finally:
                    os.close(sub)
            elif stat.S_ISREG(st.st_mode):
                copy_file(s, fd, n, mode, journal, r)
        finally:
            os.close(fd)




def _move(upper: str, rel: str, dfd: int, name: str, journal=None, marked=None) -> None:
    src = os.path.join(upper, rel)
    strip(src, marked)
    try:
        os.rename(src, name, dst_dir_fd=dfd)
    except OSError as exc:
        if exc.errno == errno.EXDEV:
            _copy_into(src, dfd, name, journal, rel)
        elif exc.errno in (errno.EISDIR, errno.ENOTEMPTY, errno.EEXIST, errno.ENOTDIR):
            _remove(dfd, name)
            os.rename(src, name, dst_dir_fd=dfd)
        else:
            raise


def apply_action(a, upper: str, ws_fd: int, journal=None,
                 marked: list[str] | None = None) -> None:   # a: apply.Action
    """``marked``: for a new directory moved whole, what in it carries privilege
    (``apply.Plan.inspected``); None: looked at here."""
    dfd, name = _open_parent(ws_fd, a.path)
    try:
        if a.op == "delete":
            _remove(dfd, name)
        elif a.op == "mkdir":
            try:
                os.mkdir(name, stat.S_IMODE(os.lstat(os.path.join(upper, a.path)).st_mode)
                         & ~PRIV_BITS, dir_fd=dfd)
            except FileExistsError:
                if not stat.S_ISDIR(os.lstat(name, dir_fd=dfd).st_mode):
                    raise
        elif a.op == "replace":
            _remove(dfd, name)
            _move(upper, a.path, dfd, name, journal)
        else:
            _move(upper, a.path, dfd, name, journal, marked)
    finally:
        os.close(dfd)


def apply_plan(p, upper: str, workspace: str, *, held: bool = False,
               journal: str | None = None) -> list[tuple[str, str]]:
    """Apply ``p``'s actions (an ``apply.Plan``; the held ones only with ``held=True``);
    [(path, error)]. ``journal``: the stage's apply journal (``staging/copyin.py``)."""
    from ringfence.staging.copyin import Journal

    failed: list[tuple[str, str]] = []
    ws_fd = os.open(workspace, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    jr = Journal(journal)
    inspected = {} if held else p.inspected
    try:
        for a in p.actions:
            if bool(a.held) != held and not (held and a.op == "mkdir"):
                continue
            try:
                apply_action(a, upper, ws_fd, jr,
                             inspected.get(a.path) if a.op == "move" else None)
                jr.note("applied", a.path)
            except OSError as exc:
                why = ("a symbolic link on the way (not followed)"
                       if exc.errno in (errno.ELOOP, errno.ENOTDIR) else
                       (exc.strerror or str(exc)))
                failed.append((a.path, why))
    finally:
        os.close(ws_fd)
        jr.close()
    return failed
