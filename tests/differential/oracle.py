"""The bash oracle: ask bash itself how it splits a command, without running it.

Test-only harness (SPEC §7, issue 6). bash runs a generated batch script
(`oracle.bash` + one `__rf_run I $'CMD'` line per command) in which every
builtin is disabled or shadowed by a recording function and PATH names a
missing directory, so each simple command lands in `command_not_found_handle`,
which saves the argv bash built (after expansion and quote removal) in a
record file and notes it in an ordered stream on fd 99.

Control flow depends on exit statuses, so each batch runs twice: once with
every recorded command "succeeding" and once with every one "failing". The
union of both passes covers both sides of `&&`/`||`/`if`. Loops are cut by a
per-command record cap.

The batch shell runs in a sandbox, as an unprivileged user, with a pids
limit, a memory limit, a file-size limit and a wall-clock timeout that kills
the whole process group (see `sandbox_mode`):

- unprivileged: `ringfence run --profile <strict + [limits]>`, with the system
  bin directories masked. Its limits end the whole run (issue 23: a fork bomb is
  a `limit`), so the records go to a writable root that is not staged (they
  survive the kill, as in the stop-gap), the commands after the one running go
  to the next batch, and that one is run again alone: a command that alone ends
  its run on a limit has the status "limit";
- root (STOP-GAP): plain bwrap + prlimit + setpriv to the test user, because
  RLIMIT_NPROC does not bind root and the runner cannot drop root itself. The
  root is an empty tmpfs holding only bash and its libraries.

In both, a path-qualified command (`/bin/rm`) finds nothing to exec.
"""

from __future__ import annotations

import os
import pwd
import re
import shutil
import signal
import subprocess
import sys
import tempfile
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from ringfence.rfcore.errors import SandboxError

DRIVER = Path(__file__).with_name("oracle.bash")
UNPRIVILEGED_USER = os.environ.get("RINGFENCE_TEST_USER", "rftest")

# Limits for one batch process tree. Under bwrap pids is RLIMIT_NPROC, which
# counts every process of the user, so it is set relative to the user's current
# count (see _nproc_limit); ringfence counts only the command's own processes.
PIDS = 192
MEMORY_MB = 256          # address space per process (bwrap)
RUN_MEMORY_MB = 1024     # the whole sandbox (ringfence: PIDS bash processes fit)
FILE_MB = 64             # largest file the batch may write
BATCH_TIMEOUT_S = 60.0   # wall clock for one batch; the group is then SIGKILLed
RECORD_CAP = 200         # records per command before it is killed
COMMAND_TIMEOUT_S = 3    # wall clock for one command inside the batch


@dataclass(frozen=True)
class OracleResult:
    """What bash did with one command.

    status: "ok" (ran to the end), "parse_error" (bash rejects the syntax),
    "capped" (killed after RECORD_CAP records: a loop), "killed" (died or timed
    out under the limits), "limit" (run alone under `ringfence run`, it ended the
    run on a pids, memory or file-size limit), "escaped" (the command closed the
    parse-check body; discarded), "unencodable" (NUL byte: bash cannot hold it in
    a string).
    argvs: the argv lists bash would execute, in execution order (pass 1's
    extra records follow pass 0's). stderr: bash printed an error while running
    it (a failed `< file`, a missing path-qualified program), so some commands
    may not have been reached.
    """

    command: str
    status: str
    argvs: tuple[tuple[str, ...], ...] = ()
    stderr: str = ""


@dataclass
class _Pass:
    records: dict[int, list[tuple[str, ...]]] = field(default_factory=dict)
    status: dict[int, str] = field(default_factory=dict)
    stderr: dict[int, str] = field(default_factory=dict)
    ready: bool = False
    stopped_at: int | None = None   # attempted, never ended, and the shell died
    limit: bool = False             # `ringfence run` ended the batch on a limit


def ansi_c_quote(text: str) -> str:
    """`$'...'` quoting with every byte outside a safe set hex-escaped."""
    raw = text.encode("utf-8", "surrogateescape")
    safe = b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-./,:=+@%"
    return "$'" + "".join(chr(b) if b in safe else f"\\x{b:02x}" for b in raw) + "'"


def _nproc_limit(uid: int) -> int:
    """RLIMIT_NPROC counts all of the user's processes: allow PIDS more."""
    count = 0
    for entry in os.scandir("/proc"):
        if entry.name.isdigit():
            try:
                if entry.stat().st_uid == uid:
                    count += 1
            except OSError:
                continue
    return count + PIDS


def sandbox_mode() -> str:
    """Which sandbox runs the batch shell.

    "ringfence": `ringfence run --profile <strict + limits>` (SPEC's own
    Strict sandbox). Used when the tests run unprivileged, because the pids
    limit is RLIMIT_NPROC, which does not bind root, and the runner cannot
    drop root itself.
    "bwrap" (STOP-GAP, as root): plain bwrap + prlimit + setpriv to the
    unprivileged test user, with an empty root holding only bash.
    RINGFENCE_ORACLE_SANDBOX=ringfence|bwrap overrides the choice.
    """
    mode = os.environ.get("RINGFENCE_ORACLE_SANDBOX") or ("bwrap" if os.geteuid() == 0
                                                         else "ringfence")
    if mode not in ("ringfence", "bwrap"):
        raise SandboxError(f"RINGFENCE_ORACLE_SANDBOX={mode!r}: use 'ringfence' or 'bwrap'")
    if mode == "ringfence" and os.geteuid() == 0:
        raise SandboxError("the oracle under `ringfence run` needs an unprivileged user "
                           "(RLIMIT_NPROC does not bind root)", hint="run it as rftest")
    return mode


# Strict, plus the limits, plus no programs: the system bin directories are
# masked so a path-qualified command (`/bin/rm`) finds nothing, as in the
# stop-gap's empty root. bash itself runs from a copy in the workspace.
ORACLE_PROFILE = """\
description = "bash oracle: strict, limited, no programs"
extends = "strict"
[filesystem]
read_deny = ["/usr/bin", "/usr/sbin", "/usr/local/bin", "/usr/local/sbin", "/usr/games",
             "/bin", "/sbin"]
# The records: written straight to the host, so a run a limit kills keeps them
# (the staged workspace's writes would be held, RF627).
writable = ["{{workspace}}", "{out}"]
[limits]
pids = {pids}
memory_mb = {memory}
file_size_mb = {fsize}
timeout = {timeout}
"""


def _ringfence_argv(tmp: Path, work: Path, driver: str) -> list[str]:
    """`work` (records, cwd) is the unstaged writable root; the workspace holds only
    the driver and bash."""
    ws = tmp / "run"
    ws.mkdir()
    bash = os.path.realpath(shutil.which("bash") or "/bin/bash")
    shutil.copy2(bash, ws / "bash")
    shutil.move(work / driver, ws / driver)
    profile = tmp / "oracle.toml"
    profile.write_text(ORACLE_PROFILE.format(pids=PIDS, memory=RUN_MEMORY_MB, out=work,
                                             fsize=FILE_MB, timeout=BATCH_TIMEOUT_S))
    return [sys.executable, "-m", "ringfence", "run", "--profile", str(profile),
            "--workspace", str(ws), "--", str(ws / "bash"), "--norc", "--noprofile",
            str(ws / driver)]


def _sandbox_argv(work: Path, uid: int, gid: int, driver: str) -> list[str]:
    """STOP-GAP sandbox (see sandbox_mode): bwrap + prlimit + setpriv."""
    bwrap, prlimit, setpriv = (shutil.which(x) for x in ("bwrap", "prlimit", "setpriv"))
    bash = shutil.which("bash") or "/bin/bash"
    if not (bwrap and prlimit):
        raise SandboxError("bash oracle needs bwrap and prlimit", hint="run scripts/setup.sh")
    argv: list[str] = []
    if os.geteuid() == 0:
        if not setpriv:
            raise SandboxError("bash oracle needs setpriv to drop root")
        # Never run the oracle as root: RLIMIT_NPROC does not bind root.
        argv += [setpriv, f"--reuid={uid}", f"--regid={gid}", "--clear-groups",
                 "--inh-caps=-all", "--bounding-set=-all", "--"]
    argv += [prlimit, f"--nproc={_nproc_limit(uid)}", f"--as={MEMORY_MB << 20}",
             f"--fsize={FILE_MB << 20}", "--core=0", "--"]
    argv += [bwrap, "--unshare-all", "--die-with-parent", "--new-session", "--clearenv",
             "--ro-bind", os.path.realpath(bash), "/rf/bash"]
    for lib in ("/usr/lib", "/usr/lib64", "/lib", "/lib64"):
        real = os.path.realpath(lib)
        if os.path.isdir(real) and not os.path.islink(lib):
            argv += ["--ro-bind", real, lib]
        elif os.path.islink(lib):
            argv += ["--symlink", os.readlink(lib), lib]
    argv += ["--bind", str(work), "/rf/work", "--dev", "/dev", "--proc", "/proc",
             "--setenv", "LC_ALL", "C",
             "/rf/bash", "--norc", "--noprofile", f"/rf/work/{driver}"]
    return argv


def survivors_of(name: str) -> list[int]:
    """Processes whose command line mentions `name` (a batch's driver file)."""
    found = []
    needle = name.encode()
    for entry in os.scandir("/proc"):
        if entry.name.isdigit() and int(entry.name) != os.getpid():
            try:
                cmdline = Path(entry.path, "cmdline").read_bytes()
            except OSError:
                continue
            if needle in cmdline:
                found.append(int(entry.name))
    return found


def _user_ids() -> tuple[int, int]:
    if os.geteuid() != 0:
        return os.getuid(), os.getgid()
    try:
        pw = pwd.getpwnam(UNPRIVILEGED_USER)
    except KeyError:
        raise SandboxError(f"bash oracle: unprivileged user {UNPRIVILEGED_USER!r} is missing",
                           hint="run scripts/test-unprivileged.sh once, or useradd it") from None
    return pw.pw_uid, pw.pw_gid


def _parse_records(data: bytes, batch: Sequence[int], result: _Pass, recdir: Path) -> None:
    fields = data.split(b"\0")
    pos = 0

    def take() -> str:
        nonlocal pos
        value = fields[pos].decode("utf-8", "surrogateescape")
        pos += 1
        return value

    started: set[int] = set()
    ended: set[int] = set()
    flags: dict[int, str] = {}
    while pos < len(fields) - 1:
        try:
            tag, index = take(), int(take())
            if tag == "R":
                raw = (recdir / take()).read_bytes()
                argv = tuple(x.decode("utf-8", "surrogateescape") for x in raw.split(b"\0")[:-1])
        except (ValueError, IndexError, OSError):
            break       # a record cut short by a kill at the end of the file
        if tag == "R":
            result.records.setdefault(index, []).append(argv)
        elif tag == "A":
            started.add(index)
        elif tag == "S":
            result.ready = True
        elif tag == "E":
            take()
            ended.add(index)
        elif tag == "P":
            flags.setdefault(index, "parse_error")
            ended.add(index)
        elif tag == "T":
            flags.setdefault(index, "killed")
            ended.add(index)                    # abandoned; the batch goes on
        elif tag == "C":
            flags.setdefault(index, "capped")
        elif tag == "X":
            flags[index] = "escaped"
        else:
            raise ValueError(f"bad oracle record tag {tag!r}")
    for index in batch:
        if index in flags:
            result.status[index] = flags[index]
        elif index in ended:
            result.status[index] = "ok"
        elif index in started:
            result.status[index] = "killed"
        else:
            result.status[index] = "unstarted"
    last = max((batch.index(i) for i in started), default=None)
    if last is not None and batch[last] not in ended:
        result.stopped_at = batch[last]


def _write_batch(tmp: Path, mode: str, commands: Sequence[str], indexes: Sequence[int],
                 status: int, timeout: float) -> tuple[Path, str]:
    """The workspace: driver script, record stream, per-record and error dirs."""
    work = tmp / "ws"
    for sub in ("", "cwd", "rec", "err"):
        (work / sub).mkdir()
    inside = "/rf/work" if mode == "bwrap" else str(work)
    lines = [f"__rf_work={inside}", f"__rf_status={status}", f"__rf_cap={RECORD_CAP}",
             f"__rf_timeout={timeout}", DRIVER.read_text()]
    lines += [f"__rf_run {i} {ansi_c_quote(commands[i])}" for i in indexes]
    # A name unique to this batch, to find any process that outlives it.
    driver = f"driver-{tmp.name}.bash"
    (work / driver).write_text("\n".join(lines) + "\n")
    (work / "records").touch()
    return work, driver


def _launch(tmp: Path, work: Path, mode: str, driver: str, uid: int, gid: int) -> tuple[int, bytes]:
    """Run the batch shell to the end or to the batch timeout; (exit, stderr)."""
    env = None
    if mode == "bwrap":
        argv = _sandbox_argv(work, uid, gid, driver)
        if os.geteuid() == 0:
            for path in (tmp, work, *work.iterdir()):
                os.chown(path, uid, gid)
    else:
        argv = _ringfence_argv(tmp, work, driver)
        env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(tmp),
               "RINGFENCE_HOME": str(tmp / "state"), "LC_ALL": "C",
               "PYTHONDONTWRITEBYTECODE": "1"}
    proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, env=env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, start_new_session=True)
    try:
        _, err = proc.communicate(timeout=BATCH_TIMEOUT_S + 10)
    except subprocess.TimeoutExpired:
        # The whole group: setpriv/prlimit exec into bwrap, whose death tears
        # down its pid namespace (--die-with-parent, --unshare-pid); the
        # runner's own timeout (the profile's [limits]) normally fires first.
        os.killpg(proc.pid, signal.SIGKILL)
        _, err = proc.communicate()
    survivors = survivors_of(driver)
    if survivors:
        for pid in survivors:
            os.kill(pid, signal.SIGKILL)
        raise SandboxError(f"bash oracle: processes {survivors} outlived the sandbox")
    return proc.returncode, err


def _run_batch(commands: Sequence[str], indexes: Sequence[int], status: int,
               uid: int, gid: int, timeout: float) -> _Pass:
    result = _Pass()
    mode = sandbox_mode()
    with tempfile.TemporaryDirectory(prefix="rf-oracle-") as tmpname:
        tmp = Path(tmpname)
        work, driver = _write_batch(tmp, mode, commands, indexes, status, timeout)
        code, err = _launch(tmp, work, mode, driver, uid, gid)
        _parse_records((work / "records").read_bytes(), indexes, result, work / "rec")
        # RF624 pids/memory/stage, RF628 file size: ringfence killed the whole run.
        result.limit = mode == "ringfence" and re.search(rb"ringfence: RF62[48]:", err) is not None
        if not result.ready:
            # The prelude never finished: the sandbox itself is broken. Fail
            # closed rather than report every command as "killed".
            raise SandboxError(f"bash oracle sandbox failed (exit {code}): "
                               f"{err.decode(errors='replace').strip()[:500]}")
        for i in indexes:
            errfile = work / "err" / str(i)
            if errfile.is_file() and errfile.stat().st_size:
                result.stderr[i] = errfile.read_text(errors="replace")[:2000]
    return result


def _run_pass(commands: Sequence[str], indexes: list[int], status: int, batch_size: int,
              uid: int, gid: int, timeout: float) -> _Pass:
    total = _Pass()
    todo = list(indexes)
    while todo:
        batch, todo = todo[:batch_size], todo[batch_size:]
        got = _run_batch(commands, batch, status, uid, gid, timeout)
        # A batch killed by the timeout leaves commands unstarted: the one that
        # was running is blamed, the rest go to the next batch. If the shell
        # died between commands, blame the first unstarted one so we progress.
        unstarted = [i for i in batch if got.status[i] == "unstarted"]
        blamed = got.stopped_at
        if unstarted and blamed is None:
            blamed = unstarted.pop(0)
            got.status[blamed] = "killed"
        if got.limit and blamed is not None:
            # `ringfence run` ended on a limit while `blamed` ran: alone, does it
            # still? Then it is "limit"; else its lone run is its answer.
            if len(batch) > 1:
                alone = _run_batch(commands, [blamed], status, uid, gid, timeout)
                if alone.limit:
                    alone.status[blamed] = "limit"
                for part in ("records", "stderr", "status"):
                    src, dst = getattr(alone, part), getattr(got, part)
                    dst.pop(blamed, None)
                    if blamed in src:
                        dst[blamed] = src[blamed]
            else:
                got.status[blamed] = "limit"
        total.records.update(got.records)
        total.stderr.update(got.stderr)
        for i in batch:
            if i not in unstarted:
                total.status[i] = got.status[i]
        todo = unstarted + todo
    return total


def run_oracle(commands: Iterable[str], *, batch_size: int = 250, passes: Sequence[int] = (0, 1),
               command_timeout: float = COMMAND_TIMEOUT_S) -> list[OracleResult]:
    """Ask bash, in a limited sandbox, which argv lists each command executes.

    passes: the exit status every recorded command reports, one batch run per
    value; (0, 1) sees both sides of `&&`, `||` and `if`.
    """
    commands = list(commands)
    uid, gid = _user_ids()
    results: list[OracleResult | None] = [None] * len(commands)
    live = []
    for i, cmd in enumerate(commands):
        if "\0" in cmd:
            results[i] = OracleResult(cmd, "unencodable")
        else:
            live.append(i)
    runs = [_run_pass(commands, live, status, batch_size, uid, gid, command_timeout)
            for status in passes]
    for i in live:
        statuses = [run.status[i] for run in runs]
        status = next((s for s in ("parse_error", "escaped", "limit", "killed", "capped")
                       if s in statuses), "ok")
        argvs = list(runs[0].records.get(i, []))
        for run in runs[1:]:
            pending = list(argvs)
            for argv in run.records.get(i, []):
                if argv in pending:
                    pending.remove(argv)
                else:
                    argvs.append(argv)
        stderr = "".join(run.stderr.get(i, "") for run in runs)
        results[i] = OracleResult(commands[i], status, tuple(argvs), stderr)
    return [r for r in results if r is not None]
