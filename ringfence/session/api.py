"""``ringfence.Session``: the governor as a long-lived API for agent runtimes (issue 24).

    s = ringfence.Session(profile="build", workspace=".", session="agent-1")
    r = s.run("git push origin main")      # r.state == "waiting_for_approval"
    s.decide(r.approval_id, "once")        # or a person: ringfence approve ID --defer
    r = s.resume(r.approval_id)            # runs where it was asked; r.stdout is real

Deciding and executing are separate steps. A decision is a ledger row
(``session/decisions.py``), so it can come from another process, and a waiting
request outlives its caller: any new Session resumes it by id. ``resume`` runs
through the same ``approve`` path as the CLI, which refuses when the command, the
working directory's identity (device and inode) or the profile changed since the
request. ``on_approval(approval)`` may answer at once; None (or no callback)
leaves the request waiting: nothing ever runs without a decision.

States are the ledger's (``session/result.py``); a run the wall clock or a limit
ended reads ``timeout`` / ``limit``. Output is captured whole up to a cap and
streams to ``on_output(stream, bytes)`` while it runs; ringfence's own lines go
to ``Result.notes``, never into the command's stderr.
"""

from __future__ import annotations

import os
import threading
import time

from ringfence.ledger import pending as ap
from ringfence.compiler.spare import active as spare_for_run, pool_for
from ringfence.ledger.store import Ledger
from ringfence.rfcore.cancel import CancelToken, activate, current, deactivate
from ringfence.rfcore.errors import ApprovalError, UsageError

from . import decisions
from .later import stage_later, stage_now
from .result import OUTPUT_CAP, Notes, Result, text


class _Ledger(Ledger):
    """A ledger that tells the Session which run a cancel switch belongs to."""

    inflight: dict | None = None

    def start_run(self, **kw) -> str:
        run_id = super().start_run(**kw)
        token = current()
        if token is not None and self.inflight is not None and kw.get("state") == "running":
            token.run_id = run_id
            self.inflight[run_id] = token
        return run_id


class Session:
    def __init__(self, profile=None, workspace: str = ".", session: str | None = None,
                 on_approval=None, *, on_output=None, output_cap: int = OUTPUT_CAP,
                 timeout: float | None = None, ledger=None, spare: bool | None = None) -> None:
        from ringfence.ledger.grants import current_session
        from ringfence.session.runner import _resolve_profile

        # The process environment, as for `ringfence run`: the sandbox's env passlist,
        # the state dir (RINGFENCE_HOME) and the profile precedence all read it.
        self.env = dict(os.environ)
        self.workspace = os.path.abspath(workspace)
        if not os.path.isdir(self.workspace):
            raise UsageError(f"workspace {self.workspace} is not a directory (RF609)",
                             hint="pass workspace= an existing directory")
        self.profile, self.profile_reason = _resolve_profile(profile, self.workspace, self.env)
        self.session = session or current_session(None, self.env)[0]
        self.on_approval, self.on_output = on_approval, on_output
        self.output_cap, self.timeout = output_cap, timeout
        self._db = ledger
        self._local = threading.local()
        self._inflight: dict[str, CancelToken] = {}
        # One execution at a time: the sandbox's subreaper setting is process-wide.
        self._exec = threading.Lock()
        # The next run's sandbox, set up ahead (compiler/spare.py); off with spare=False
        # or RINGFENCE_SPARE=0. Killed by close(), when collected, or at exit.
        self._pool = pool_for(self, spare, self.env)

    def close(self) -> None:
        """Kill this Session's spare sandbox (if any) and stop setting one up; a later
        run starts cold. Idempotent; also ``with Session(...) as s:``."""
        pool, self._pool = self._pool, None
        if pool is not None:
            pool.close()

    def __enter__(self) -> "Session":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # --- the ledger, one connection per thread (sqlite3 connections are per thread) --

    def ledger(self) -> Ledger:
        led = getattr(self._local, "ledger", None)
        if led is None:
            led = self._local.ledger = _Ledger(self._db, env=self.env)
            led.inflight = self._inflight
        return led

    # --- requests ------------------------------------------------------------------

    def run(self, command: str, *, cwd: str | None = None, timeout: float | None = None,
            on_output=None, cancel: CancelToken | None = None) -> Result:
        """Run ``command`` (a ``bash -c`` string) under the profile; see the module doc."""
        from ringfence.session.governor import Request, default_deps, govern

        if not isinstance(command, str) or not command.strip():
            raise UsageError("empty command", hint="Session.run('CMD')")
        req = Request(profile=self.profile, command=command, workspace=self.workspace,
                      cwd=self.cwd(cwd), session=self.session,
                      timeout=self._timeout(timeout), interactive=False)
        streams = Notes(self.output_cap, on_output or self.on_output)
        token = cancel or CancelToken()
        handle, later = activate(token), stage_later()
        try:
            with self._exec, spare_for_run(self._pool) as pool:
                outcome = govern(req, ledger=self.ledger(), deps=default_deps(),
                                 streams=streams)
                used = pool is not None and pool.used
        finally:
            stage_now(later)
            deactivate(handle)
            if token.run_id:
                self._inflight.pop(token.run_id, None)
        result = self._result(outcome.run_id, streams, state=outcome.state,
                              approval_id=outcome.approval_id, reasons=outcome.reasons,
                              command=command, spare=used)
        if pool is not None:
            pool.kick()             # the next run's spare, made once this Result is ready
        if result.waiting and self.on_approval is not None:
            return self._ask(result, on_output, cancel)
        return result

    def _ask(self, result: Result, on_output, cancel) -> Result:
        a = ap.get(self.ledger(), result.approval_id)
        answer = self.on_approval(a)
        if answer is None:
            return result                   # stays waiting; nothing runs
        self.decide(a.id, answer)
        if answer == "deny":
            return self._settled(ap.get(self.ledger(), a.id))
        return self.resume(a.id, on_output=on_output, cancel=cancel)

    def decide(self, approval_id: str, decision: str) -> None:
        """Record a decision (``once`` | ``session`` | ``always`` | ``deny``) without
        running anything; ``resume`` runs it. ``deny`` is final at once."""
        decisions.validate(decision)
        if decision == "deny":
            from ringfence.session.governor import deny

            deny(approval_id, ledger=self.ledger())
            return
        decisions.record(self.ledger(), approval_id, decision, via="session")

    def resume(self, approval_id: str, *, on_output=None, cancel: CancelToken | None = None,
               wait: float = 0.0) -> Result:
        """Run a decided request where it was asked for and return its real output.

        Undecided: the waiting Result again (nothing runs). Already run (by another
        resume, or ``ringfence approve``): its stored output. ``wait``: seconds to
        wait for a run another process is executing right now."""
        led = self.ledger()
        a = ap.get_or_for_run(led, approval_id)
        if a.status == "pending":
            d = decisions.get(led, a.id)
            if d is None:
                return self._waiting(a)
            return self._execute(a, d, on_output, cancel, wait)
        return self._settled(a, wait)

    def _execute(self, a: ap.Approval, d: dict, on_output, cancel, wait) -> Result:
        from ringfence.session.governor import approve, default_deps

        led = self.ledger()
        streams = Notes(self.output_cap, on_output or self.on_output)
        token = cancel or CancelToken()
        token.run_id = a.run_id
        self._inflight[a.run_id] = token
        handle, later = activate(token), stage_later()
        try:
            with self._exec, spare_for_run(self._pool) as pool:
                approve(a.id, scope=d["decision"], session=d.get("session") or None,
                        ledger=led, deps=default_deps(), streams=streams)
                used = pool is not None and pool.used
        except ApprovalError:
            now = ap.get(led, a.id)
            if now.status == "pending":
                raise                       # refused: command, directory or profile changed
            # Another caller claimed it first: wait for its run (a dead one reads as
            # aborted), then return the output it stored. Nothing runs twice.
            limit = self.profile.limits.timeout or 3600
            return self._settled(now, max(wait, limit + 60))
        finally:
            stage_now(later)
            deactivate(handle)
            self._inflight.pop(a.run_id, None)
        truncated = streams.out.truncated or streams.err.truncated
        decisions.save_output(led, a.run_id, a.id, streams.out.value(), streams.err.value(),
                              truncated)
        result = self._result(a.run_id, streams, approval_id=a.id, reasons=a.reasons,
                              command=a.command, where=a.where, spare=used)
        if pool is not None:
            pool.kick()
        return result

    def pending(self) -> list[dict]:
        """This session's requests waiting for a person, with any recorded decision."""
        led = self.ledger()
        out = []
        for a in ap.pending(led):
            if a.session == self.session:
                item = a.to_json()
                d = decisions.get(led, a.id)
                item["decision"] = d["decision"] if d else None
                out.append(item)
        return out

    def cancel(self, run_id: str) -> str:
        """Stop a run: kill it (the whole sandbox) if it runs in this Session, or
        withdraw its request if it waits. Returns the run's state afterwards."""
        token = self._inflight.get(run_id)
        if token is not None:
            token.cancel()
            return "aborted"                # the running call records it
        led = self.ledger()
        run = led.get_run(run_id)
        if run is None:
            raise UsageError(f"no run {run_id!r}", hint="Result.run_id names the run")
        for a in run.approvals:
            if a["status"] == "pending" and a["where"] != "stage":
                decisions.withdraw(led, a["id"], note=f"cancelled by session {self.session}")
                return "aborted"
        if run.state == "running":
            raise UsageError(f"run {run_id} is running in another process; it can only be "
                             "cancelled from there", hint="ringfence ledger show " + run_id)
        return run.state

    def check(self, command: str) -> dict:
        """The verdict of ``command`` and this profile's decision for it; runs nothing."""
        from ringfence.classifier import classify
        from ringfence.session.gate import decide
        from ringfence.ledger.grants import active_keys

        verdict = classify(command)
        d = decide(verdict, self.profile, grants=active_keys(self.ledger(), self.session),
                   context="sandbox")
        out = verdict.to_json()
        out.update(profile=self.profile.name, decision=d.decision, reasons=list(d.reasons))
        return out

    def _timeout(self, timeout: float | None) -> float | None:
        """A caller's timeout may shorten the profile's wall-clock limit, never lengthen
        it: an agent passing timeout=1e9 must not outlive the limit a person set."""
        asked = timeout if timeout is not None else self.timeout
        if asked is None:
            return None
        if not isinstance(asked, (int, float)) or asked != asked or asked <= 0:
            raise UsageError(f"timeout must be a positive number of seconds, not {asked!r}")
        limit = self.profile.limits.timeout
        return min(float(asked), limit) if limit else float(asked)

    def cwd(self, cwd: str | None) -> str:
        """A working directory inside the workspace (default: the workspace itself)."""
        if cwd is None:
            return self.workspace
        path = os.path.realpath(os.path.join(self.workspace, cwd))
        root = os.path.realpath(self.workspace)
        if path != root and not path.startswith(root + os.sep):
            raise UsageError(f"cwd {cwd!r} is outside the workspace {self.workspace}",
                             hint="give a directory inside the workspace")
        if not os.path.isdir(path):
            raise UsageError(f"cwd {cwd!r} is not a directory", hint="create it first")
        return path

    # --- building results from the ledger ---------------------------------------------

    def _result(self, run_id: str, streams: Notes, *, state: str | None = None,
                approval_id=None, reasons=(), command="", where=None,
                spare: bool = False) -> Result:
        led = self.ledger()
        run = led.get_run(run_id)
        state = reported_state(run) if state in (None, "aborted") else state
        if state == "waiting_for_approval" and approval_id is None:
            approval_id = next((a["id"] for a in run.approvals if a["status"] == "pending"),
                               None)
        notes = list(streams.lines)
        for cap in (streams.out, streams.err):
            if cap.callback_error:
                notes.append(cap.callback_error)
        exit_code = _exit(run)
        if state == "waiting_for_approval" and approval_id:
            # Host-Assisted: the failed sandboxed run leads, the request waits to run
            # on the host. Say where the approval would run, and 75, as `run` does.
            where, exit_code = ap.get(led, approval_id).where, 75
        return Result(state=state, exit_code=exit_code, stdout=text(streams.out.value()),
                      stderr=text(streams.err.value()), run_id=run_id,
                      approval_id=approval_id, reasons=tuple(reasons),
                      changes=run.result("changes"), held=held(led, run_id, run),
                      truncated=streams.out.truncated or streams.err.truncated,
                      command=command or run.command, where=where or run.kind,
                      profile=run.profile, notes=tuple(notes), spare=spare)

    def _waiting(self, a: ap.Approval) -> Result:
        return Result(state="waiting_for_approval", exit_code=75, run_id=a.run_id,
                      approval_id=a.id, reasons=a.reasons, command=a.command,
                      where=a.where, profile=a.profile)

    def _settled(self, a: ap.Approval, wait: float = 0.0) -> Result:
        led = self.ledger()
        deadline = time.monotonic() + wait
        run = led.get_run(a.run_id)
        while run.state == "running" and time.monotonic() < deadline:
            time.sleep(0.2)
            run = led.get_run(a.run_id)
        stored = decisions.load_output(led, a.run_id)
        notes: tuple[str, ...] = ()
        if stored is not None:
            out, err, truncated = stored
        else:
            out = (run.result("stdout_tail") or "").encode()
            err = (run.result("stderr_tail") or "").encode()
            truncated = bool(out or err)
            if run.state not in ("denied", "waiting_for_approval", "running"):
                notes = ("it ran outside a Session (ringfence approve): only the ledger's "
                         "4 KiB tails of its output are kept",)
        return Result(state=reported_state(run), exit_code=_exit(run), stdout=text(out),
                      stderr=text(err), run_id=a.run_id, approval_id=a.id,
                      reasons=a.reasons, changes=run.result("changes"),
                      held=held(led, a.run_id), truncated=truncated, command=a.command,
                      where=a.where, profile=a.profile, notes=notes)


def reported_state(run) -> str:
    """The ledger's state, with why an aborted run stopped where that is a state."""
    state = run.state
    if state == "aborted":
        outcome = run.result("outcome")
        if outcome in ("timeout", "limit"):
            return outcome
    return state


def _exit(run) -> int:
    if run.state == "denied":
        return 77                   # SPEC: denied; a person's deny appends no exit code
    code = run.result("exit_code")
    return int(code) if code is not None else (75 if run.state == "waiting_for_approval"
                                               else 125)


def held(led: Ledger, run_id: str, run=None) -> tuple[dict, ...]:
    """The run's changes held for a person (pending ``stage`` approval), if any.
    ``run``: its record, when the caller has just read it."""
    for a in (run or led.get_run(run_id)).approvals:
        if a["where"] == "stage" and a["status"] == "pending":
            full = ap.get(led, a["id"])
            return tuple({"path": r.split(": ", 1)[0], "why": r.split(": ", 1)[-1],
                          "approval_id": full.run_id} for r in full.reasons)
    return ()
