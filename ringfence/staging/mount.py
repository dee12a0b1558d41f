"""Stage a run's workspace writes in an overlay: nothing reaches the host until applied.

The workspace is the *lower* layer of an overlayfs mounted on the workspace path
itself, in a private mount namespace that only the sandbox sees; the *upper* and
*work* dirs live in ringfence's private state dir (``$state/stage/<id>/``), which
every sandbox hides. So:

* every write of the run lands in its own upper dir: the change record is a walk
  of that dir (O(changes), never O(workspace)), and concurrent runs never mix;
* the host's workspace is untouched until ringfence applies the upper
  (``ringfence.staging.apply``); a SIGKILL of ringfence leaves nothing in the workspace;
* mounting costs O(1) whatever the workspace size.

bubblewrap 0.8 has no ``--overlay``, so the child does it itself, between fork
and exec of bwrap (``preexec``): a user namespace that maps only our own uid and
gid (so the overlay is unprivileged, ``userxattr``: whiteouts are 0/0 character
devices, opaque dirs carry ``user.overlay.opaque``), a private mount namespace,
then the overlay. bwrap then binds the (overlaid) workspace writable as before.

The overlay is mounted ``volatile`` (Linux >= 5.10; retried without it where the
option is refused): overlayfs then skips every sync to the upper filesystem,
which otherwise costs each run a ``fsync`` per copied-up file (a file of the
workspace the command opened for writing) and, when the sandbox's last process
exits, a ``syncfs`` of the whole filesystem the stage is on (everything dirty
there, the other programs' writes included). The stage is a scratch dir read
back once by ringfence (page cache, no sync needed) and never mounted again;
what ringfence applies is written like any program's writes (no fsync either),
so a crash of the machine loses what it would lose without ringfence, except
that a command's own ``fsync`` inside the sandbox does not reach the disk.

If the overlay cannot be mounted (old kernel, a filesystem overlayfs refuses as
upper or lower), the run fails closed with RF640 (exit 125): writing straight into
the workspace would lose the record and let the host obey what the sandbox wrote.

Known limit of overlayfs without ``redirect_dir`` (not available with
``userxattr``): renaming a directory that exists in the workspace fails with
EXDEV; ``mv`` and most tools fall back to copy + delete, which works.
"""

from __future__ import annotations

import json
import os
import time
from contextvars import ContextVar

from ringfence.rfcore.errors import SandboxError
from ringfence.rfcore.procs import proc_start  # noqa: F401 - stale.py reads it here
from ringfence.rfcore.fsops import remove_tree

CLONE_NEWUSER = 0x10000000
CLONE_NEWNS = 0x00020000
MS_REC = 0x4000
MS_PRIVATE = 0x40000
EXIT_STAGE = 125
_ERR_PREFIX = b"RF640:"
# A settled stage renamed out of the way, removed off the run's critical path by a
# long-lived process (a Session); ".trash-<pid>-<id>" in the stage root.
TRASH = ".trash-"
TAKEN = "taken"          # a spare's stage that a run took (Stage.mark_taken)
# Stages this process made whose meta still names it: alive by definition, so
# ``stale.recover`` reads nothing of them (a warm Session's spare is one, every run).
OWN: set[str] = set()
# A forked child is another process: its parent's stages name the parent's pid, and
# must be judged by ``alive`` there (a parent that dies is recovered, RF642).
os.register_at_fork(after_in_child=OWN.clear)
_LATER: ContextVar = ContextVar("ringfence_stage_later", default=None)


def remove_later(fn):
    """In this thread (context), settled stages go to ``fn(path)`` to be removed
    later instead of now (``fn`` must call ``remove_trash``). Returns a reset token."""
    return _LATER.set(fn)


def reset_later(token) -> None:
    _LATER.reset(token)


def later():
    """The worker that removes things off the critical path here, or None: called
    with a trash path, or with a function to call (compiler/limits.py)."""
    return _LATER.get()


def remove_trash(path: str) -> None:
    _chmod_tree(os.path.join(path, "work"))
    remove_tree(path)


class Stage:
    """One run's stage: ``dir/{upper,work}`` and ``dir/meta.json``."""

    def __init__(self, path: str, workspace: str) -> None:
        self.path = path
        self.workspace = workspace          # the real (resolved) workspace path
        self.upper = os.path.join(path, "upper")
        self.work = os.path.join(path, "work")
        self.meta_path = os.path.join(path, "meta.json")

    @property
    def id(self) -> str:
        return os.path.basename(self.path)

    def meta(self) -> dict:
        try:
            with open(self.meta_path, encoding="utf-8") as fh:
                data = json.load(fh)
        except (OSError, ValueError):
            return {}
        if data.get("state") == "spare" and os.path.lexists(
                os.path.join(self.path, TAKEN)):
            data["state"] = "running"           # see mark_taken
        return data

    def mark_taken(self) -> None:
        """A spare's stage becomes a run's (state ``running``) the moment a run takes
        it (compiler/spare.py), before its argv is handed over. Creating one empty
        file is atomic and costs a tenth of rewriting meta.json (a rename over it),
        on the warm run's critical path; ``meta()`` reads it back as ``running``."""
        os.close(os.open(os.path.join(self.path, TAKEN),
                         os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600))

    def write_meta(self, **changes) -> None:
        if changes.get("pid", os.getpid()) != os.getpid():
            OWN.discard(self.path)
        data = {**self.meta(), **changes}
        tmp = self.meta_path + ".tmp"
        with open(tmp, "w", encoding="utf-8") as fh:
            json.dump(data, fh)
        os.replace(tmp, self.meta_path)

    def clear_work(self) -> None:
        """Empty the overlay's work dir once the sandbox is gone. overlayfs leaves a
        mode-000 ``work/work`` there, which a plain ``rm -rf`` of the state dir
        could not remove as an unprivileged user."""
        _chmod_tree(self.work)
        for name in os.listdir(self.work) if os.path.isdir(self.work) else ():
            remove_tree(os.path.join(self.work, name))

    def remove(self) -> None:
        """Remove the whole stage (overlay's work dir may hold a mode-000 dir)."""
        OWN.discard(self.path)
        _chmod_tree(self.work)
        remove_tree(self.path)

    def discard(self) -> None:
        """Remove a settled stage: now, or (``remove_later``) renamed in one step to a
        trash name that ``recover`` never reads as a stage, and removed by a worker.
        A trash dir whose process died is removed by the next ``recover``."""
        later = _LATER.get()
        if later is None:
            return self.remove()
        trash = os.path.join(os.path.dirname(self.path), f"{TRASH}{os.getpid()}-{self.id}")
        OWN.discard(self.path)
        try:
            os.rename(self.path, trash)
        except OSError:
            return self.remove()
        later(trash)

    def untouched(self) -> bool:
        """True when the run wrote nothing: the upper dir is empty."""
        try:
            return not os.listdir(self.upper)
        except OSError:
            return False


def stage_root(state: str) -> str:
    return os.path.join(state, "stage")


def create(state: str, workspace: str) -> Stage:
    root = stage_root(state)
    os.makedirs(root, mode=0o700, exist_ok=True)
    spread(root)
    name = f"st_{int(time.time())}_{os.getpid()}_{os.urandom(4).hex()}"
    path = os.path.join(root, name)
    os.mkdir(path, 0o700)
    stage = Stage(path, workspace)
    try:
        os.mkdir(stage.upper, 0o755)
        os.mkdir(stage.work, 0o700)
        stage.write_meta(pid=os.getpid(), start=proc_start(os.getpid()), workspace=workspace,
                         state="running", created_at=time.time())
        OWN.add(path)
    except BaseException:
        stage.remove()          # a full disk must not leave a half-made stage behind
        raise
    return stage


# ext4 puts a new directory in its parent's block group, so every stage (all of a
# run's writes) would land where the previous stages were, whose files the host has
# since deleted (a `rm -rf node_modules` of what the last run applied). Without a
# journal, ext4 will not reuse an inode freed in the last minute and scans past every
# such inode on each create: a run after one that wrote thousands of files paid
# seconds for it, and its own temporary files (npm unpacks each package into its
# cache's tmp dir first) sat next to its output. The TOPDIR attribute (`chattr +T`)
# spreads the directories made in the stage root over the disk, like top-level
# ones. A hint: where the filesystem or architecture has no such ioctl, nothing.
FS_TOPDIR_FL = 0x00020000
_IOC_GENERIC = ("x86_64", "i386", "i686", "aarch64", "arm", "riscv", "s390", "loongarch")


def spread(root: str) -> None:
    if not os.uname().machine.startswith(_IOC_GENERIC):
        return                  # another ioctl encoding (mips, powerpc, sparc...)
    import fcntl
    import struct

    size = struct.calcsize("l")          # _IOR('f', 1, long) / _IOW('f', 2, long)
    get, put = (2 << 30) | (size << 16) | 0x6601, (1 << 30) | (size << 16) | 0x6602
    try:
        fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError:
        return
    try:
        flags = struct.unpack("i", fcntl.ioctl(fd, get, b"\0" * 4))[0]
        if not flags & FS_TOPDIR_FL:
            fcntl.ioctl(fd, put, struct.pack("i", flags | FS_TOPDIR_FL))
    except OSError:
        pass                    # tmpfs, xfs, btrfs...: no such attribute
    finally:
        os.close(fd)


# Stage space (issue 23). The upper dir shares the state dir's filesystem, so a run
# can write at most what is free there. Below STAGE_MIN_FREE_MB a run is refused
# before it starts (RF622, docs/sandbox.md); a run that ends with the filesystem
# (nearly) full had a write cut for stage space (RF623): recorded as `limit`, never
# `completed` with a truncated file.
STAGE_MIN_FREE_MB = 16
FULL_MARGIN = 256 * 1024


def free_space(path: str) -> tuple[int, int]:
    """(bytes, inodes) an unprivileged writer can still use on ``path``'s filesystem."""
    st = os.statvfs(path)
    return st.f_bavail * st.f_frsize, st.f_favail


def check_space(state: str) -> None:
    """Refuse to start (RF622) when the stage's filesystem is below the minimum."""
    root = stage_root(state)
    probe_at = root if os.path.isdir(root) else state
    try:
        free, inodes = free_space(probe_at)
    except OSError:
        return                  # no state dir yet: creating the stage will say why
    if free < STAGE_MIN_FREE_MB * 1024 * 1024 or inodes == 0:
        raise SandboxError(
            f"the stage's filesystem ({probe_at}) has {free // (1024 * 1024)} MiB and "
            f"{inodes} inodes free, below the {STAGE_MIN_FREE_MB} MiB minimum a run's "
            "writes are staged in; nothing was run (RF622)",
            hint="free space there (see 'ringfence doctor' for stages left behind), or "
                 "point RINGFENCE_HOME at a filesystem with room for the workspace's writes")


def exhausted(stage: Stage) -> bool:
    """True when the stage's filesystem is (nearly) full after the run: a write may
    have been cut with ENOSPC (the kernel told the command, not us)."""
    try:
        free, inodes = free_space(stage.upper)
    except OSError:
        return False
    return free < FULL_MARGIN or inodes == 0


def load(path: str) -> Stage | None:
    stage = Stage(path, "")
    meta = stage.meta()
    if not meta.get("workspace"):
        return None
    stage.workspace = meta["workspace"]
    return stage



APPLY_JOURNAL = "applying"      # ringfence/staging/copyin.py Journal


def alive(meta: dict) -> bool:
    pid = meta.get("pid")
    if not pid:
        return False
    start = proc_start(int(pid))
    return start is not None and start == meta.get("start")


def _chmod_tree(path: str) -> None:
    for dirpath, dirnames, _ in os.walk(path):
        for d in dirnames:
            try:
                os.chmod(os.path.join(dirpath, d), 0o700)
            except OSError:
                pass


def preexec(stage: Stage, err_fd: int, then=None):
    """The function the child runs before exec'ing bwrap: userns + mountns + overlay.

    Everything it needs is computed here, before fork (the child only calls libc).
    On failure it writes ``RF640: <step>: <errno text>`` to ``err_fd`` and exits 125.
    ``then``: the next preexec step (rlimits), run after the mount.
    """
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)
    unshare, mount = libc.unshare, libc.mount
    uid, gid = os.getuid(), os.getgid()
    ws = stage.workspace.encode()
    opts = (f"lowerdir={_escape(stage.workspace)},upperdir={_escape(stage.upper)},"
            f"workdir={_escape(stage.work)},userxattr").encode()
    fast = opts + b",volatile"              # see the module doc
    maps = ((b"/proc/self/setgroups", b"deny"), (b"/proc/self/uid_map", f"{uid} {uid} 1".encode()),
            (b"/proc/self/gid_map", f"{gid} {gid} 1".encode()))

    def fail(step: bytes, err: int) -> None:
        try:
            os.write(err_fd, _ERR_PREFIX + b" " + step + b": " + os.strerror(err).encode())
        finally:
            os._exit(EXIT_STAGE)

    def child() -> None:
        if unshare(CLONE_NEWUSER | CLONE_NEWNS) != 0:
            fail(b"unshare(user, mount namespace)", ctypes.get_errno())
        for path, data in maps:
            try:
                fd = os.open(path, os.O_WRONLY)
                os.write(fd, data)
                os.close(fd)
            except OSError as exc:
                fail(b"write " + path, exc.errno or 1)
        if mount(b"none", b"/", None, MS_REC | MS_PRIVATE, None) != 0:
            fail(b"make / private", ctypes.get_errno())
        if (mount(b"overlay", ws, b"overlay", 0, fast) != 0
                and mount(b"overlay", ws, b"overlay", 0, opts) != 0):
            fail(b"mount overlay on the workspace", ctypes.get_errno())
        if then is not None:
            then()
    return child


def _escape(path: str) -> str:
    # overlayfs splits its options on "," and its lowerdir list on ":"; a backslash
    # escapes either.
    return path.replace("\\", "\\\\").replace(",", "\\,").replace(":", "\\:")


def setup_error(message: bytes) -> SandboxError:
    text = message.decode("utf-8", "replace").strip()
    detail = text[len(_ERR_PREFIX):].strip() if text.startswith(_ERR_PREFIX.decode()) else text
    return SandboxError(
        f"could not stage the workspace's writes in an overlay ({detail}); refusing to "
        "let the sandbox write straight into the workspace, so nothing was run (RF640)",
        hint="overlayfs in a user namespace needs Linux >= 5.11 and a workspace and "
             "state dir on filesystems overlayfs accepts (ext4, xfs, btrfs, tmpfs); "
             "run 'ringfence doctor', or set RINGFENCE_HOME to a dir on such a filesystem")


def trial(state: str) -> tuple[bool, str]:
    """Mount a throw-away overlay on a throw-away dir (doctor). (ok, detail)."""
    import shutil
    import subprocess
    import tempfile

    os.makedirs(state, mode=0o700, exist_ok=True)
    lower = tempfile.mkdtemp(prefix="doctor-ws-", dir=state)
    stage = None
    try:
        stage = create(state, lower)
        r, w = os.pipe()
        try:
            proc = subprocess.run(["true"], preexec_fn=preexec(stage, w), capture_output=True)
        finally:
            os.close(w)
        msg = os.read(r, 4096)
        os.close(r)
        if proc.returncode != 0 or msg:
            return False, setup_error(msg or b"exit %d" % proc.returncode).message
        return True, f"overlay on the workspace, upper in {stage_root(state)}"
    except OSError as exc:
        return False, f"cannot create a stage dir in {stage_root(state)}: {exc}"
    finally:
        if stage is not None:
            stage.remove()
        shutil.rmtree(lower, ignore_errors=True)
