"""Small file operations for the run path, without importing shutil.

``import shutil`` also imports bz2, lzma and zlib: a few milliseconds that every
``ringfence run`` paid to copy one file and remove a dir of two entries.
"""

from __future__ import annotations

import errno
import os
import stat


_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


def rmtree_at(dfd: int, name: str, *, on_dir=None) -> None:
    """Remove ``name`` (in the directory ``dfd``) and everything below it, never
    following a symlink, iteratively (any depth, two fds at a time). ``on_dir``
    (an fd) is called on each directory before it is listed (chmod a mode-000 dir).
    Raises OSError."""
    try:
        st = os.lstat(name, dir_fd=dfd)
    except FileNotFoundError:
        return
    if not stat.S_ISDIR(st.st_mode):
        os.unlink(name, dir_fd=dfd)
        return
    names = [name]                 # the path from dfd down to the current dir
    idents = [(st.st_dev, st.st_ino)]
    fd = os.open(name, _DIR_FLAGS, dir_fd=dfd)
    try:
        while True:
            if on_dir is not None:
                on_dir(fd)
            child = None
            with os.scandir(fd) as it:
                for e in it:
                    if e.is_dir(follow_symlinks=False):
                        child = e.name
                        break
                    os.unlink(e.name, dir_fd=fd)
            if child is not None:
                try:
                    nfd = os.open(child, _DIR_FLAGS, dir_fd=fd)
                except PermissionError:
                    if on_dir is None:
                        raise
                    os.chmod(child, 0o700, dir_fd=fd)     # a dir: is_dir() saw no link
                    nfd = os.open(child, _DIR_FLAGS, dir_fd=fd)
                cst = os.fstat(nfd)
                os.close(fd)
                fd = nfd
                names.append(child)
                idents.append((cst.st_dev, cst.st_ino))
                continue
            done = names.pop()
            idents.pop()
            if not names:
                os.close(fd)
                fd = -1
                os.rmdir(done, dir_fd=dfd)
                return
            up = os.open("..", _DIR_FLAGS, dir_fd=fd)
            ust = os.fstat(up)
            os.close(fd)
            fd = up
            if (ust.st_dev, ust.st_ino) != idents[-1]:
                raise OSError(errno.ESTALE, "a directory moved while it was removed")
            os.rmdir(done, dir_fd=fd)
    finally:
        if fd >= 0:
            os.close(fd)


def remove_tree(path: str) -> None:
    """``shutil.rmtree(path, ignore_errors=True)``: never follows a symlink (a
    link is unlinked, not descended), at any depth."""
    parent, name = os.path.split(os.path.abspath(path))
    try:
        pfd = os.open(parent, _DIR_FLAGS)
    except OSError:
        return
    try:
        rmtree_at(pfd, name, on_dir=_owner_rwx)
    except OSError:
        pass
    finally:
        os.close(pfd)


def _owner_rwx(fd: int) -> None:
    try:
        st = os.fstat(fd)
        if st.st_mode & 0o700 != 0o700:
            os.fchmod(fd, stat.S_IMODE(st.st_mode) | 0o700)
    except OSError:
        pass


def copy_file(src: str, dst: str) -> None:
    """``shutil.copyfile(src, dst)`` (contents only; raises OSError)."""
    with open(src, "rb") as fin, open(dst, "wb") as fout:
        while chunk := fin.read(1 << 20):
            fout.write(chunk)


def same_bytes(a: str, b: str) -> bool:
    """Do the files ``a`` and ``b`` hold the same bytes? (read in 1 MiB blocks)"""
    with open(a, "rb") as x, open(b, "rb") as y:
        while True:
            p, q = x.read(1 << 20), y.read(1 << 20)
            if p != q:
                return False
            if not p:
                return True
