"""Writing a staged file into the workspace across filesystems (the fallback of a
rename, ``staging/place.py``), so that a SIGKILL at any point leaves no name
behind: files are written unnamed (O_TMPFILE) and named with one ``linkat``; holes
stay holes. ``Journal`` records an apply's progress; ``replay_journal`` reads it
for ``staging.stale.recover`` (RF642)."""

from __future__ import annotations

import errno
import os


def copy_file(src: str, dfd: int, name: str, mode: int, journal=None, rel: str = "") -> None:
    """``src`` (a regular file) to ``name`` in ``dfd`` with ``mode``; see the module doc."""
    st = os.lstat(src)
    try:
        out = os.open(".", os.O_TMPFILE | os.O_WRONLY | os.O_CLOEXEC, mode, dir_fd=dfd)
    except OSError as exc:
        if exc.errno not in (errno.EOPNOTSUPP, errno.EISDIR, errno.EINVAL):
            raise
        _copy_named(src, st, mode, dfd, name, journal, rel)     # no O_TMPFILE there
        return
    try:
        _copy_sparse(src, out, st.st_size)
        os.fchmod(out, mode)
        _name_tmpfile(out, dfd, name, journal, rel)
    finally:
        os.close(out)


def _copy_named(src: str, st, mode: int, dfd: int, name: str, journal, rel: str) -> None:
    """A filesystem without O_TMPFILE: a temporary name the journal records first, so
    a SIGKILL's leftover is removed by the next run (``staging.stale.recover``)."""
    tmp = f".{name}.rf-{os.getpid()}-{os.urandom(3).hex()}"
    if journal is not None:
        journal.note("tmp", os.path.join(os.path.dirname(rel), tmp) if rel else tmp)
    out = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC,
                  mode, dir_fd=dfd)
    try:
        _copy_sparse(src, out, st.st_size)
        os.fchmod(out, mode)
    except BaseException:
        os.close(out)
        os.unlink(tmp, dir_fd=dfd)
        raise
    os.close(out)
    os.rename(tmp, name, src_dir_fd=dfd, dst_dir_fd=dfd)


def _name_tmpfile(out: int, dfd: int, name: str, journal, rel: str) -> None:
    proc = f"/proc/self/fd/{out}"
    try:
        os.link(proc, name, dst_dir_fd=dfd, follow_symlinks=True)
        return
    except FileExistsError:
        pass
    tmp = f".{name}.rf-{os.getpid()}-{os.urandom(3).hex()}"
    if journal is not None:
        journal.note("tmp", os.path.join(os.path.dirname(rel), tmp) if rel else tmp)
    os.link(proc, tmp, dst_dir_fd=dfd, follow_symlinks=True)
    try:
        os.rename(tmp, name, src_dir_fd=dfd, dst_dir_fd=dfd)
    except BaseException:
        os.unlink(tmp, dir_fd=dfd)
        raise


def _copy_sparse(src: str, out: int, size: int) -> None:
    """Copy ``src``'s data into ``out``, keeping its holes holes (SEEK_DATA/SEEK_HOLE):
    a sparse staged file must not become real data on the workspace's disk."""
    fd = os.open(src, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    try:
        pos = 0
        while pos < size:
            try:
                data = os.lseek(fd, pos, os.SEEK_DATA)
            except OSError as exc:
                if exc.errno == errno.ENXIO:
                    break               # only a hole is left
                if exc.errno != errno.EINVAL:
                    raise
                data = pos              # no SEEK_DATA here: copy it all
            try:
                hole = os.lseek(fd, data, os.SEEK_HOLE)
            except OSError:
                hole = size
            os.lseek(fd, data, os.SEEK_SET)
            left, at = hole - data, data
            while left > 0:
                chunk = os.read(fd, min(left, 1 << 20))
                if not chunk:
                    break
                view = memoryview(chunk)
                while view:
                    n = os.pwrite(out, view, at)
                    view, at = view[n:], at + n
                left -= len(chunk)
            pos = hole
        os.ftruncate(out, size)         # a trailing hole keeps the apparent size
    finally:
        os.close(fd)


class Journal:
    """``<stage>/applying``: one line per step of an apply in progress (``applied PATH``
    after each action, ``tmp PATH`` before a temporary name exists), so a SIGKILLed
    apply is reported truthfully (RF642 names what was applied) and its temporary
    name removed (``staging.stale.recover``). Appends only; no fsync (a crash of the
    machine loses the workspace's own unsynced writes too)."""

    def __init__(self, path: str | None) -> None:
        self.fh = open(path, "a", encoding="utf-8", errors="surrogateescape") if path else None

    def note(self, kind: str, rel: str) -> None:
        if self.fh is not None:
            self.fh.write(f"{kind}\t{rel}\n")
            self.fh.flush()

    def close(self) -> None:
        if self.fh is not None:
            self.fh.close()


def replay_journal(stage_dir: str, workspace: str) -> list[str]:
    """The paths a killed apply had applied; removes the temporary name it may have
    left (a ``tmp`` line whose file is still there, never followed through a link)."""
    try:
        with open(os.path.join(stage_dir, "applying"), encoding="utf-8",
                  errors="surrogateescape") as fh:
            lines = fh.read().splitlines()
    except OSError:
        return []
    applied = []
    for line in lines:
        kind, _, rel = line.partition("\t")
        if kind == "applied":
            applied.append(rel)
        elif kind == "tmp" and ".rf-" in os.path.basename(rel) and workspace:
            _unlink_inside(workspace, rel)
    return list(dict.fromkeys(applied))


def _unlink_inside(workspace: str, rel: str) -> None:
    parts = rel.split("/")
    if any(p in ("", ".", "..") for p in parts):
        return
    try:
        fd = os.open(workspace, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    except OSError:
        return
    try:
        for part in parts[:-1]:
            nfd = os.open(part, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC,
                          dir_fd=fd)
            os.close(fd)
            fd = nfd
        os.unlink(parts[-1], dir_fd=fd)
    except OSError:
        pass
    finally:
        os.close(fd)
