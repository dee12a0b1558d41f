"""Supervise the started process: stream its output (and keep tails), feed its
stdin, forward our signals, enforce the timeout, put the terminal back, and read
its exit status.

How a setup failure is told apart from the command's own exit status: bwrap
writes ``{"exit-code": N}`` to ``--json-status-fd`` only when the command was
actually started by its init; without that line the command never ran.
"""

from __future__ import annotations

import json
import os
import selectors
import signal
import subprocess
import sys
import threading
import time
from ringfence.rfcore.records import record
from typing import IO

from ringfence.rfcore.cancel import current as cancel_switch
from ringfence.rfcore.errors import SandboxError

from ringfence.staging import mount as staging
from .reap import Subreaper, child_pid
from .terminal import ControlStrings, TermGuard, _isatty, sink_is_tty, stdin_fd
from .spec import Note, SandboxSpec

TAIL_BYTES = 64 * 1024
TIMEOUT_EXIT = 124          # as timeout(1)
FORWARDED = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
WATCH_EVERY = 0.25          # seconds between two looks at the run's limits
RELAY_EVERY = 0.05          # how soon the terminal relay sees the pipe emptied


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
    # Files the run wrote that hold a brokered credential (compiler/broker.py):
    # workspace-relative paths in the stage (held on settle), absolute elsewhere.
    secret_hits: tuple = ()
    sandboxed: bool = True
    limit: str | None = None            # "pids" | "memory": a limit hit ended the run
    limit_late: bool = False            # ... seen only once the run had ended by itself
    stage_min_free: int | None = None   # the least free space the stage's fs had
    spare: bool = False                 # it ran in a spare set up ahead (compiler/spare.py)


def warn(note: Note, stream: IO[str] | None = None) -> None:
    """Show a note on stderr. Nobody reading it any more (a closed pipe, a full
    disk) changes nothing: every note is in the run's record too, and a run must
    never be recorded as something else because its warning could not be shown."""
    # A note may carry a name the sandbox chose (a held path): its control
    # characters (ESC ]52 clipboard writes, a newline forging a line) are shown
    # as escapes, never sent to the terminal.
    text = "".join(c if c.isprintable() or c == " " else f"\\x{ord(c):02x}"
                   for c in f"ringfence: {note.code}: {note.message}")
    try:
        print(text, file=stream or sys.stderr, flush=True)
    except (OSError, ValueError):
        pass


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


def supervise(cmd: list[str], env: dict, status_r: int | None, spec: SandboxSpec,
              timeout: float | None, stdin, capture: bool, out, err,
              degradations: list[Note], *, pass_fds: tuple[int, ...] = (),
              close_after_start: int | None = None, cwd: str | None = None,
              sandboxed: bool = True, preexec=None, setup_err=None,
              watch=None, started=None) -> ExecResult:
    """Start ``cmd`` and see it through to its exit status (see the module doc).

    ``started``: a spare (``compiler/spare.py``) whose bwrap is already running,
    waiting for its argv; ``release()`` hands it over and returns its Popen. Its
    stdin is /dev/null (a spare is only used for such a run): ``stdin`` must be too."""
    out = out if out is not None else sys.stdout.buffer
    err = err if err is not None else sys.stderr.buffer
    feed = stdin if isinstance(stdin, (bytes, bytearray)) else None
    # The command may get the person's terminal as stdin: whatever mode it leaves
    # it in (stty -echo, raw), the saved mode is put back in the finally below.
    term = TermGuard([] if feed is not None else [stdin_fd(stdin)])
    # A terminal on stdin is never handed to the sandbox: the command reads a pipe
    # that the loop below feeds from it (compiler/ttyrelay.py).
    tty_in = stdin_fd(stdin) if feed is None and sandboxed else None
    if tty_in is not None and not _isatty(tty_in):
        tty_in = None
    start = time.monotonic()
    reaper = Subreaper() if sandboxed else None
    try:
        if started is not None:
            # The subreaper is on before the handoff: the sandbox's init comes to us.
            try:
                proc = started.release()
            except BaseException:       # the spare died (spare.SpareGone): run cold
                if reaper is not None:
                    reaper.release()
                raise
            start = time.monotonic()        # the timeout runs from the handoff
        else:
            proc = subprocess.Popen(
                cmd, env=env, cwd=cwd,
                stdin=subprocess.PIPE if feed is not None or tty_in is not None else stdin,
                stdout=subprocess.PIPE, stderr=subprocess.PIPE, pass_fds=pass_fds,
                preexec_fn=preexec if sandboxed else None)
    except (OSError, subprocess.SubprocessError) as exc:
        # SubprocessError: a preexec step (rlimits) raised in the child after fork.
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
    # A Session's cancel (or a cancelled MCP call) ends the run as a signal would:
    # bwrap is killed, the sandbox dies with it, the run is recorded `aborted`.
    switch = cancel_switch()
    if switch is not None:
        switch.attach(lambda: forward(signal.SIGKILL, None))
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
    relay = None
    if tty_in is not None:
        from .ttyrelay import TtyRelay

        relay = TtyRelay(tty_in, proc.stdin)
        if threading.current_thread() is threading.main_thread():
            # In the background a read of the terminal must be EIO, never a stop that
            # would freeze the timeout and limit watch (compiler/ttyrelay.py).
            previous[signal.SIGTTIN] = signal.signal(signal.SIGTTIN, signal.SIG_IGN)
        relay.start(sel)
    deadline = None if timeout is None else start + timeout
    timed_out = False
    hit = None          # a limit the watch saw (compiler/limits.py): ends the run
    late = False        # ... seen only after the command ended by itself
    next_look = start + WATCH_EVERY
    try:
        while any(k.data is None for k in sel.get_map().values()):
            wait = None if deadline is None else max(0.0, deadline - time.monotonic())
            if watch is not None:
                wait = WATCH_EVERY if wait is None else min(wait, WATCH_EVERY)
            if relay is not None and not relay.closed:
                wait = RELAY_EVERY if wait is None else min(wait, RELAY_EVERY)
            events = sel.select(wait)
            if relay is not None:
                relay.tick()
            if watch is not None and hit is None and time.monotonic() >= next_look:
                next_look = time.monotonic() + WATCH_EVERY      # never per output chunk
                if hit := watch(child_pid(status)):
                    proc.kill()     # --die-with-parent takes the whole sandbox with it
            if not events and deadline is not None and time.monotonic() >= deadline:
                timed_out = True
                proc.kill()
                deadline = None
                continue
            for key, _ in events:
                if key.data is not None:        # the terminal relay's fds
                    relay.ready(key.fd)
                    continue
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
                    except (OSError, ValueError):
                        # Our reader went away (`ringfence run -- yes | head -1`), or the
                        # output cannot be written (`> /dev/full`): close the command's
                        # pipe too, so it gets SIGPIPE as it would without us, instead
                        # of running forever into a drain. The tail is still recorded.
                        tails[fd] = (tail, None)
                        sel.unregister(key.fileobj)
                        key.fileobj.close()
        code, peak = _wait(proc)
        if reaper is not None:      # the init's peak holds the command's (wait4)
            peak = _most(peak, reaper.reap(child_pid(status)))
        if watch is not None and hit is None:
            # An OOM kill the command died of; a peak over the cap between two looks.
            hit = watch(child_pid(status), peak)
            late = hit is not None
        for fd, flt in filters.items():
            rest, sink = flt.flush(), tails[fd][1]
            if rest and sink is not None:
                try:
                    sink.write(rest)
                    sink.flush()
                except (OSError, ValueError):
                    pass
        if setup_err is not None:
            # The child could not set up the overlay (ringfence/staging/mount.py): it wrote
            # why and exited before exec'ing bwrap; nothing ran.
            msg = os.read(setup_err[0], 4096)
            if msg:
                raise staging.setup_error(msg)
    finally:
        if relay is not None:
            relay.stop()
        sel.close()
        if switch is not None:
            switch.detach()
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
    if relay is not None:
        # Recorded, not printed: the command read the person's terminal through a
        # pipe (it saw no terminal; it could not write to it or ioctl it).
        degradations.append(Note("RF625", f"stdin was a terminal: the command read it "
                                          f"through a pipe ringfence relayed ({relay.relayed} "
                                          "bytes); it never held the terminal"))
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
                      sandboxed=sandboxed, limit=hit, limit_late=late,
                      spare=started is not None)


def _wait(proc) -> tuple[int, int | None]:
    """``proc.wait()``, and the largest peak resident set (bytes) of bwrap and the
    descendants it reaped: wait4's ``ru_maxrss`` (compiler/memwatch.py)."""
    if proc.returncode is None:
        try:
            _, sts, usage = os.wait4(proc.pid, 0)
        except ChildProcessError:       # reaped meanwhile by a kill's poll()
            return proc.wait(), None
        proc.returncode = code = os.waitstatus_to_exitcode(sts)
        return code, usage.ru_maxrss * 1024
    return proc.returncode, None


def _most(a: int | None, b: int | None) -> int | None:
    return b if a is None else a if b is None else max(a, b)


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
    try:
        sys.stderr.write(f"ringfence: {program}: {what} in the sandbox (exit {exit_code})\n")
        sys.stderr.flush()
    except (OSError, ValueError):       # nobody reads it (the exit code says it too)
        pass


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
