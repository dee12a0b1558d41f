"""Run a compiled spec: bwrap, seccomp fd, proxy, signals, timeout, tails.

Fail closed: anything that stops the sandbox from being set up raises
SandboxError (exit 125) and the command does not run. A missing protection
(no seccomp generator for this arch, no proxy) is a degradation: a RF6xx
note printed to stderr and returned in the result, never silent.

How a setup failure is told apart from the command's own exit status: bwrap
writes ``{"exit-code": N}`` to ``--json-status-fd`` only when the command was
actually started by its init; without that line the command never ran.
"""

from __future__ import annotations

import json
import os
import shutil
import selectors
import signal
import subprocess
import sys
import threading
import time
from ringfence.rfcore.records import field, record
from typing import IO, Mapping, Sequence

from ringfence.rfcore.errors import SandboxError

from . import stage as staging
from .backends.bwrap import env_args, render
from .host import HOST_ENV
from .reap import Subreaper, child_pid
from .terminal import ControlStrings, TermGuard, sink_is_tty, stdin_fd
from .spec import Note, Rlimit, SandboxSpec, Stage

TAIL_BYTES = 64 * 1024
TIMEOUT_EXIT = 124          # as timeout(1)
FORWARDED = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


@record
class ExecResult:
    exit_code: int
    stdout_tail: bytes
    stderr_tail: bytes
    duration: float
    network_decisions: tuple = ()
    degradations: tuple[Note, ...] = ()
    stage: object = None                # compiler.stage.Stage: the run's staged writes
    stdout: bytes | None = None         # whole output, only with capture=True
    stderr: bytes | None = None
    timed_out: bool = False
    signal: int | None = None           # a signal we received and forwarded
    sandboxed: bool = True


def warn(note: Note, stream: IO[str] | None = None) -> None:
    print(f"ringfence: {note.code}: {note.message}", file=stream or sys.stderr, flush=True)


class _Tail:
    def __init__(self, keep_all: bool) -> None:
        self.buf = bytearray()
        self.all = bytearray() if keep_all else None

    def add(self, chunk: bytes) -> None:
        if self.all is not None:
            self.all += chunk
        self.buf += chunk
        if len(self.buf) > TAIL_BYTES:
            del self.buf[:-TAIL_BYTES]


def _rlimit_fn(spec: SandboxSpec):
    limits = spec.of(Rlimit)
    if not limits:
        return None
    import resource

    names = {"as": resource.RLIMIT_AS, "nproc": resource.RLIMIT_NPROC,
             "fsize": resource.RLIMIT_FSIZE}
    pairs = [(names[r.kind], r.value) for r in limits]

    def apply() -> None:   # in the child, before exec of bwrap; inherited inside
        for kind, value in pairs:
            resource.setrlimit(kind, (value, value))
    return apply


def _args_fd(args: list[str]) -> int:
    """A memfd holding NUL-separated arguments for bwrap's ``--args FD``."""
    fd = os.memfd_create("ringfence-env", 0)
    data = b"".join(a.encode("utf-8", "surrogateescape") + b"\0" for a in args)
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]
    os.lseek(fd, 0, os.SEEK_SET)
    return fd


def _seccomp_fd(spec: SandboxSpec, arch: str, degradations: list[Note]) -> int | None:
    """A memfd holding the filter, which bwrap applies to every process in the sandbox."""
    opts = spec.seccomp
    if opts is None:
        return None
    try:
        from .seccomp import build_filter
        program = build_filter(arch, deny_unix_sockets=opts.deny_unix_sockets)
    except (ImportError, ValueError) as exc:
        degradations.append(Note("RF606", f"no seccomp filter for this host ({exc}); "
                                 "the command runs without syscall filtering"))
        return None
    fd = os.memfd_create("ringfence-seccomp", 0)
    os.write(fd, program)
    os.lseek(fd, 0, os.SEEK_SET)
    return fd


def execute(spec: SandboxSpec, argv: Sequence[str], *, host, env: Mapping[str, str],
            timeout: float | None = None, stdin: bytes | int | IO | None = None,
            capture: bool = False, out: IO[bytes] | None = None,
            err: IO[bytes] | None = None, recovered: Sequence[Note] = ()) -> ExecResult:
    """Run ``argv`` under ``spec``. Streams output unless ``capture``.

    ``recovered``: notes from processing dead runs' journals (already shown),
    kept in the result so the ledger records them.
    """
    if not argv:
        raise SandboxError("no command given", hint="ringfence run -- ARGV... or -c 'STRING'")
    degradations: list[Note] = list(recovered) + list(spec.notes)
    for note in spec.notes:
        warn(note)
    if not spec.sandboxed:
        return _stream(list(argv), dict(env), None, spec, timeout, stdin, capture, out, err,
                       degradations, cwd=spec.workspace, sandboxed=False)
    if not host.bwrap:
        raise SandboxError("bubblewrap (bwrap) was not found on PATH; refusing to run the "
                           "command unsandboxed (RF601)",
                           hint="apt-get install bubblewrap (or dnf install bubblewrap), "
                                "then check with 'ringfence doctor'")
    stage = None
    stage_r = stage_w = None
    stage_ops = spec.of(Stage)
    if stage_ops:
        from ringfence.rfcore.paths import state_dir

        try:
            stage = staging.create(state_dir(env), stage_ops[0].path)
        except OSError as exc:
            raise staging.setup_error(f"cannot create a stage dir: {exc}".encode()) from None
        stage_r, stage_w = os.pipe()
    fds: list[int] = [f for f in (stage_r,) if f is not None]
    proxy = None
    proxy_dir = None
    ran = False
    try:
        seccomp_fd = _seccomp_fd(spec, host.arch, degradations)
        if seccomp_fd is not None:
            fds.append(seccomp_fd)
        proxy_dir = handoff_fd = None
        if spec.proxy is not None:
            proxy, proxy_dir = _start_proxy(spec, stage, degradations)
            handoff_fd = proxy.handoff_fd
            fds.append(handoff_fd)      # the sandbox's end; ours is closed after the run
        status_r, status_w = os.pipe()
        fds.append(status_r)        # status_w is closed by _stream, exactly once
        try:
            bargv = render(spec, argv, bwrap=host.bwrap, env=env, seccomp_fd=seccomp_fd,
                           proxy_dir=proxy_dir, python=host.python, inline_env=False,
                           status_fd=status_w, handoff_fd=handoff_fd)
        except BaseException:
            os.close(status_w)
            raise
        # The command's environment goes to bwrap through --args (a memfd), never
        # through bwrap's own environment: bwrap runs on the host (compiler/backends/
        # bwrap.py says why). bwrap itself gets the fixed HOST_ENV.
        env_fd = _args_fd(env_args(spec, env))
        fds.append(env_fd)
        bargv[1:1] = ["--args", str(env_fd)]
        for note in degradations[len(recovered) + len(spec.notes):]:
            warn(note)
        pre = _rlimit_fn(spec)
        if stage is not None:
            pre = staging.preexec(stage, stage_w, then=pre)
        result = _stream(bargv, dict(HOST_ENV), status_r, spec, timeout, stdin,
                         capture, out, err, degradations,
                         pass_fds=tuple(f for f in fds if f not in (status_r, stage_r))
                         + (status_w,),
                         close_after_start=status_w, preexec=pre,
                         setup_err=(stage_r, stage_w) if stage is not None else None)
        ran = True
    finally:
        for fd in fds:
            try:
                os.close(fd)
            except OSError:
                pass
        decisions = tuple(proxy.decisions) if proxy is not None else ()
        late: tuple[Note, ...] = ()
        if proxy is not None:
            proxy.stop()
            if proxy.failure is not None:
                # The socket was listening but the proxy loop (started on the first
                # connection) failed: its clients were refused, so the command had
                # no network at all. Never silent: stderr and the ledger say so.
                late = (Note("RF607", f"the network proxy failed after the command started "
                                      f"({proxy.failure}); its connections were refused, "
                                      "the command had no network"),)
                warn(late[0])
        if proxy_dir:
            shutil.rmtree(proxy_dir, ignore_errors=True)
        if stage is not None and not ran:
            stage.remove()      # the command never ran (or we were interrupted)
    return _with(result, network_decisions=decisions, stage=stage,
                 degradations=result.degradations + late)


def _with(result: ExecResult, **changes) -> ExecResult:
    from ringfence.rfcore.records import replace
    return replace(result, **changes)


def _relay_artifact(source: str) -> str:
    """The relay's cached bytecode when it is exactly current, else its source.

    The interpreter recognises bytecode by its magic number whatever the file is
    called, so the staged file keeps its name either way; running bytecode saves
    compiling the relay inside every networked sandbox. "Exactly current" is the
    check the import system itself makes: same magic, unhashed, and the source's
    mtime and size recorded in the header.
    """
    from importlib._bootstrap_external import MAGIC_NUMBER, cache_from_source

    try:
        cached = cache_from_source(source)
        st = os.stat(source)
        with open(cached, "rb") as f:
            head = f.read(16)
    except (OSError, NotImplementedError, ValueError):
        return source
    expect = (MAGIC_NUMBER + (0).to_bytes(4, "little")
              + (int(st.st_mtime) & 0xFFFFFFFF).to_bytes(4, "little")
              + (st.st_size & 0xFFFFFFFF).to_bytes(4, "little"))
    return cached if head == expect else source


def _start_proxy(spec, stage, degradations):
    try:
        from .proxy import ProxyServer, make_runtime_dir
    except ImportError as exc:
        raise SandboxError(f"the network proxy is not available ({exc}); refusing to run "
                           "a proxy profile without it (RF607)",
                           hint="use a profile with network mode 'none' (e.g. strict)") from None
    try:
        rdir = make_runtime_dir()
    except OSError as exc:
        raise SandboxError(f"cannot make a private runtime dir for the network relay: {exc}; "
                           "refusing to run without the network policy the profile "
                           "states (RF607)",
                           hint="set XDG_RUNTIME_DIR to a writable directory") from None
    if stage is not None:       # so a SIGKILLed run's socket dir is removed later
        stage.write_meta(runtime_dir=rdir)
    from .backends.bwrap import RELAY

    try:
        shutil.copyfile(_relay_artifact(RELAY), os.path.join(rdir, "relay.py"))
    except OSError as exc:
        raise SandboxError(f"cannot stage the network relay in {rdir}: {exc.strerror}; "
                           "refusing to run without the network policy the profile "
                           "states (RF607)") from None
    # The relay hands its 127.0.0.1 listener over the server's socket pair: no
    # Unix socket path that a sandboxed process would have to open.
    server = ProxyServer(spec.proxy.allow, spec.proxy.deny)
    try:
        server.start()
    except OSError as exc:
        raise SandboxError(f"cannot start the network proxy: {exc}; refusing to run without "
                           "the network policy the profile states (RF607)") from None
    except SandboxError as exc:
        raise SandboxError(f"{exc.message}; refusing to run without the network policy "
                           "the profile states (RF607)",
                           hint="set XDG_RUNTIME_DIR to a short writable directory, or run "
                                "'ringfence doctor'") from None
    return server, rdir


def _stream(cmd: list[str], env: dict, status_r: int | None, spec: SandboxSpec,
            timeout: float | None, stdin, capture: bool, out, err,
            degradations: list[Note], *, pass_fds: tuple[int, ...] = (),
            close_after_start: int | None = None, cwd: str | None = None,
            sandboxed: bool = True, preexec=None, setup_err=None) -> ExecResult:
    out = out if out is not None else sys.stdout.buffer
    err = err if err is not None else sys.stderr.buffer
    feed = stdin if isinstance(stdin, (bytes, bytearray)) else None
    # The command may get the person's terminal as stdin: whatever mode it leaves
    # it in (stty -echo, raw), the saved mode is put back in the finally below.
    term = TermGuard([] if feed is not None else [stdin_fd(stdin)])
    start = time.monotonic()
    reaper = Subreaper() if sandboxed else None
    try:
        proc = subprocess.Popen(
            cmd, env=env, cwd=cwd, stdin=subprocess.PIPE if feed is not None else stdin,
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, pass_fds=pass_fds,
            preexec_fn=preexec if sandboxed else None)
    except OSError as exc:
        if reaper is not None:
            reaper.release()
        if sandboxed:
            raise SandboxError(f"could not start bubblewrap: {exc} (RF602)",
                               hint="run 'ringfence doctor'") from None
        raise SandboxError(f"could not start {cmd[0]}: {exc}") from None
    finally:
        if close_after_start is not None:
            os.close(close_after_start)     # only bwrap holds the write end now
        if setup_err is not None:
            os.close(setup_err[1])          # only the child held it, until its exec
    if feed is not None:
        threading.Thread(target=_feed, args=(proc.stdin, bytes(feed)), daemon=True).start()

    received: list[int] = []
    previous = {}

    def forward(signum, _frame):
        # Killing bwrap is enough: --die-with-parent SIGKILLs the sandbox's init,
        # which takes the whole pid namespace (every sandboxed process) with it.
        received.append(signum)
        try:
            proc.kill()
        except OSError:
            pass

    if threading.current_thread() is threading.main_thread():
        for sig in FORWARDED:
            previous[sig] = signal.signal(sig, forward)
    out_fd, err_fd = proc.stdout.fileno(), proc.stderr.fileno()
    tails = {out_fd: (_Tail(capture), None if capture else out),
             err_fd: (_Tail(capture), None if capture else err)}
    # Control strings (OSC 52 clipboard, titles, DCS) are removed from what reaches
    # a terminal; tails keep the raw bytes (compiler/terminal.py says why).
    filters = {fd: ControlStrings() for fd, (_, sink) in tails.items()
               if sink is not None and sink_is_tty(sink)}
    status = bytearray()
    sel = selectors.DefaultSelector()
    sel.register(proc.stdout, selectors.EVENT_READ)
    sel.register(proc.stderr, selectors.EVENT_READ)
    if status_r is not None:
        sel.register(status_r, selectors.EVENT_READ)
    deadline = None if timeout is None else start + timeout
    timed_out = False
    try:
        while sel.get_map():
            wait = None if deadline is None else max(0.0, deadline - time.monotonic())
            events = sel.select(wait)
            if not events and deadline is not None and time.monotonic() >= deadline:
                timed_out = True
                proc.kill()
                deadline = None
                continue
            for key, _ in events:
                fd = key.fd if isinstance(key.fileobj, int) else key.fileobj.fileno()
                chunk = os.read(fd, 65536)
                if not chunk:
                    sel.unregister(key.fileobj)
                    continue
                if fd == status_r:
                    status += chunk
                    continue
                tail, sink = tails[fd]
                tail.add(chunk)
                if sink is not None:
                    if fd in filters:
                        chunk = filters[fd].feed(chunk)
                    try:
                        sink.write(chunk)
                        sink.flush()
                    except (BrokenPipeError, ValueError):
                        # Our reader went away (`ringfence run -- yes | head -1`): close
                        # the command's pipe too, so it gets SIGPIPE as it would
                        # without us, instead of running forever into a drain.
                        tails[fd] = (tail, None)
                        sel.unregister(key.fileobj)
                        key.fileobj.close()
        code = proc.wait()
        for fd, flt in filters.items():
            rest, sink = flt.flush(), tails[fd][1]
            if rest and sink is not None:
                try:
                    sink.write(rest)
                    sink.flush()
                except (BrokenPipeError, ValueError):
                    pass
        if setup_err is not None:
            # The child could not set up the overlay (compiler/stage.py): it wrote
            # why and exited before exec'ing bwrap; nothing ran.
            msg = os.read(setup_err[0], 4096)
            if msg:
                raise staging.setup_error(msg)
    finally:
        sel.close()
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        if reaper is not None:
            reaper.reap(child_pid(status))
        term.restore()          # after the sandbox is gone: nothing can change it again
    duration = time.monotonic() - start
    exit_code = _exit_code(code, status, received, timed_out, sandboxed, tails[err_fd][0].buf)
    _say_not_run(exit_code, status, tails[err_fd][0].buf)
    if timed_out:
        note = Note("RF608", f"timed out after {timeout:g}s; the whole sandbox was killed")
        warn(note)
        degradations.append(note)
    removed = sum(f.removed for f in filters.values())
    if removed:
        note = Note("RF620", f"removed {removed} terminal control string(s) (OSC/DCS/APC: "
                             "clipboard, title, hyperlinks) from the command's output to "
                             "the terminal; the recorded output keeps them")
        warn(note)
        degradations.append(note)
    o, e = tails[out_fd][0], tails[err_fd][0]
    return ExecResult(exit_code, bytes(o.buf), bytes(e.buf), duration,
                      degradations=tuple(degradations),
                      stdout=bytes(o.all) if o.all is not None else None,
                      stderr=bytes(e.all) if e.all is not None else None,
                      timed_out=timed_out, signal=received[0] if received else None,
                      sandboxed=sandboxed)


def _feed(pipe, data: bytes) -> None:
    try:
        pipe.write(data)
    except (BrokenPipeError, OSError):
        pass
    finally:
        try:
            pipe.close()
        except OSError:
            pass


def _say_not_run(exit_code: int, status: bytes, stderr_tail: bytes) -> None:
    """After bwrap's own "execvp" line, say it in the user's words (as the relay does
    for proxy profiles): which program, what went wrong, and the shell's status."""
    if exit_code not in (126, 127) or b"exit-code" in status:
        return
    lines = stderr_tail.decode("utf-8", "replace").strip().splitlines()
    if not lines or not lines[-1].startswith("bwrap: execvp "):
        return
    program = lines[-1][len("bwrap: execvp "):].rsplit(":", 1)[0]
    what = "command not found" if exit_code == 127 else "cannot be executed"
    sys.stderr.write(f"ringfence: {program}: {what} in the sandbox (exit {exit_code})\n")
    sys.stderr.flush()


def _exit_code(code: int, status: bytes, received: list[int], timed_out: bool,
               sandboxed: bool, stderr_tail: bytes) -> int:
    if received:
        return 128 + received[0]
    if timed_out:
        return TIMEOUT_EXIT
    if not sandboxed:
        return 128 - code if code < 0 else code
    started = None
    for line in status.decode("utf-8", "replace").splitlines():
        line = line.strip()
        if not line:
            continue
        try:
            doc = json.loads(line)
        except ValueError:
            continue
        if "exit-code" in doc:
            started = int(doc["exit-code"])
    if started is None:
        last = stderr_tail.decode("utf-8", "replace").strip().splitlines()
        why = last[-1] if last else f"bwrap exited with status {code}"
        # The sandbox was set up but the program could not be executed: report it the
        # way a shell does (127 not found, 126 not executable), not as a sandbox failure.
        if why.startswith("bwrap: execvp "):
            if why.endswith("No such file or directory"):
                return 127
            if why.endswith(("Permission denied", "Exec format error")):
                return 126
        if code < 0:
            return 128 - code
        raise SandboxError(
            f"the sandbox could not be set up, so the command was not run: {why} (RF602)",
            hint="run 'ringfence doctor'; on Ubuntu 24.04+ user namespaces may be "
                 "restricted by AppArmor (kernel.apparmor_restrict_unprivileged_userns)")
    return started
