"""Executing on the host: a granted or approved host request, or a profile with the
sandbox off. The command gets ringfence's own environment (never a profile's) and
streams its output; the ledger row of its run gets the result and the workspace diff.

Imported only when something runs on the host (``ringfence.session.governor`` reaches it lazily).
"""

from __future__ import annotations

import os
import subprocess
import threading
import time

from ringfence.ledger.hostdiff import diff, snapshot
from ringfence.session.request import Outcome, Streams
from ringfence.rfcore.records import record


@record(frozen=False)
class HostResult:
    state: str
    exit_code: int


def run_on_host(f) -> Outcome:
    """Start the host run's ledger row (``f`` is the governor's ``Flow``) and execute it."""
    req, decision = f.req, f.decision
    run_id = f.start_run("running", decision.to_json() if decision else {
        "decision": "allow", "reasons": [f.note or "helper: nothing to approve"]},
        note=f.note)
    res = exec_and_record(f.ledger, run_id, f.streams, command=req.text, argv=req.argv,
                          cwd=req.cwd or os.getcwd(), workspace=req.workspace,
                          stdin=req.stdin)
    return Outcome(run_id, res.state, res.exit_code)


def exec_and_record(ledger, run_id, streams, *, command, argv, cwd, workspace,
                    approval_id=None, cwd_fd=None, stdin=None) -> HostResult:
    before = snapshot(workspace) if workspace else None
    started = time.monotonic()
    try:
        code, out_tail, err_tail = exec_host(command, argv, cwd, streams, cwd_fd=cwd_fd,
                                             stdin=stdin)
    except BaseException as exc:   # Ctrl-C, a bug: the run must not stay "running"
        ledger.append_event(run_id, "aborted", duration=time.monotonic() - started,
                            note=f"interrupted: {type(exc).__name__}: {exc}",
                            approval_id=approval_id)
        raise
    state = "completed" if code == 0 else "failed"
    from ringfence.rfcore.cancel import current as cancel_switch

    switch = cancel_switch()
    outcome = None
    if switch is not None and switch.cancelled:
        state, outcome = "aborted", "signal"     # cancelled by its caller, not its own failure
    changes = diff(before, snapshot(workspace)).to_json() if before else None
    ledger.append_event(run_id, state, exit_code=code, duration=time.monotonic() - started,
                        stdout_tail=out_tail, stderr_tail=err_tail, changes=changes,
                        approval_id=approval_id, outcome=outcome)
    return HostResult(state, code)


def exec_host(command: str, argv, cwd: str | None, streams: Streams, *,
              cwd_fd: int | None = None, stdin=None) -> tuple[int, bytes, bytes]:
    """Run on the host with the user's environment; stream output and keep tails.

    The environment is ringfence's own (the person's shell that runs ``run
    --host`` or ``approve``), never a profile's env.pass/env.set. ``cwd_fd``: a
    directory fd to run in instead of resolving ``cwd`` again. ``stdin``:
    ``subprocess.DEVNULL`` for approval executors, which must not get the
    person's terminal."""
    args = list(argv) if argv is not None else ["bash", "-c", "--", command]
    where = cwd or None
    fds: tuple[int, ...] = ()
    if cwd_fd is not None:
        where, fds = f"/proc/self/fd/{cwd_fd}", (cwd_fd,)
    from ringfence.compiler.terminal import TermGuard, stdin_fd

    # A host command given the terminal may leave it in any mode: put it back after.
    term = TermGuard([stdin_fd(stdin)])
    try:
        proc = subprocess.Popen(args, cwd=where, stdout=subprocess.PIPE, stdin=stdin,
                                stderr=subprocess.PIPE, pass_fds=fds)
    except FileNotFoundError as exc:
        msg = f"ringfence: {args[0]}: command not found ({exc.strerror})\n".encode()
        streams.err.write(msg)
        streams.err.flush()
        return 127, b"", msg
    except OSError as exc:
        msg = f"ringfence: cannot execute {args[0]}: {exc}\n".encode()
        streams.err.write(msg)
        streams.err.flush()
        return 126, b"", msg
    from ringfence.rfcore.cancel import current as cancel_switch

    switch = cancel_switch()     # a Session's cancel kills the host command too
    if switch is not None:
        switch.attach(proc.kill)
    tails = {1: bytearray(), 2: bytearray()}

    def pump(src, dst, keep) -> None:
        fd = src.fileno()
        while chunk := os.read(fd, 65536):
            try:
                dst.write(chunk)
                dst.flush()
            except (BrokenPipeError, ValueError):
                pass   # our reader went away; keep draining so the child never blocks
            keep += chunk
            del keep[:-8192]

    threads = [threading.Thread(target=pump, args=(proc.stdout, streams.out, tails[1])),
               threading.Thread(target=pump, args=(proc.stderr, streams.err, tails[2]))]
    try:
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        code = proc.wait()
    finally:
        if switch is not None:
            switch.detach()
        term.restore()
    if code < 0:
        code = 128 - code   # killed by a signal: report it the way a shell does
    return code, bytes(tails[1]), bytes(tails[2])
