"""The governor: SPEC §5 around the runner. Every crossing is seen, approved, recorded.

``govern(request)`` decides where a request may run and records it:

* host request (``run --host``, or a Host-Assisted boundary failure):
  Strict (``profile.host == "deny"``) -> 77 ``denied``; ``helper`` -> runs on the
  host; ``capability`` -> runs when the gate (context ``host``, with this
  session's grants) allows, else a pending approval (75); ``one_time`` -> always
  a pending approval: a grant never covers it, whatever the gate says.
* sandboxed request: the gate (context ``sandbox``) says deny -> 77, ask ->
  pending approval to run *in the sandbox* (75), allow -> ``ringfence.runner``.
  Under Host-Assisted (``profile.host == "escalate"``) a sandboxed run that fails
  the way a boundary fails becomes a linked host request automatically.

``approve(id)`` executes the pending command where it was requested, streams its
real output, exits with its status, and appends the result to the ORIGINAL run.

Only stdlib + our packages: this sits on the ``ringfence run`` hot path.
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
import threading
import time
from ringfence.rfcore.records import asdict, field, is_record, record
from typing import Any, BinaryIO, Callable

from ringfence.rfcore.errors import EXIT_DENIED, EXIT_UNSAFE, EXIT_WAITING, ApprovalError, RingfenceError

from . import approvals as ap
from .changes import diff, snapshot
from .grants import active_keys, current_session
from .ledger import Ledger, tail

# A sandboxed failure "looks like the boundary" when its stderr says so. These are
# the kernel's words for EPERM/EACCES/EROFS, the proxy's refusal, and a socket the
# seccomp filter blocked. Anything else is the command's own failure: escalating it
# would turn every bug into a host request.
BOUNDARY_PATTERNS = re.compile("|".join((
    r"Operation not permitted", r"Permission denied", r"Read-only file system",
    r"\bE(?:PERM|ACCES|ROFS)\b", r"Address family not supported",
    r"\b403\b[^\n]*\bproxy\b", r"\bproxy\b[^\n]*\b403\b", r"CONNECT tunnel failed",
    r"blocked by ringfence", r"refused by ringfence",
)), re.IGNORECASE)


@record
class Request:
    profile: Any                         # profiles.model.Profile
    command: str | None = None           # a bash -c string ...
    argv: tuple[str, ...] | None = None  # ... or an argv
    workspace: str = "."
    cwd: str | None = None
    host: bool = False
    session: str = ""
    timeout: float | None = None
    # False: no person at a terminal (`run --no-stdin`, the hook's --wrap): the
    # command reads /dev/null, never the terminal ringfence happens to have.
    interactive: bool = True

    @property
    def stdin(self):
        return None if self.interactive else subprocess.DEVNULL
    consent: str | None = None           # a Claude Code hook consent token (one use)

    @property
    def text(self) -> str:
        """The command as classified: argv is shell-quoted so bash reads it back exactly."""
        return self.command if self.command is not None else shlex.join(self.argv or ())


@record(frozen=False)
class Outcome:
    run_id: str
    state: str
    exit_code: int
    approval_id: str | None = None
    reasons: tuple[str, ...] = ()
    escalated_run_id: str | None = None

    def to_json(self) -> dict:
        return {"run_id": self.run_id, "state": self.state, "exit_code": self.exit_code,
                "approval_id": self.approval_id, "reasons": list(self.reasons),
                "escalated_run_id": self.escalated_run_id}


@record(frozen=False)
class Deps:
    """The stages the governor drives; injectable so the flow is testable alone."""

    classify: Callable[[str], Any]
    decide: Callable[..., Any]
    run_sandbox: Callable[..., Any]
    load_profile: Callable[..., Any]


def default_deps() -> Deps:
    from ringfence.classifier import classify
    from ringfence.profiles.load import load_profile
    from ringfence.gate import decide
    from ringfence.runner import run

    # Classify once per run: the runner re-checks the gate on the verdict the
    # governor already computed for the very same text (it re-classifies if the
    # text differs). The classifier is a pure function of the text.
    verdicts: dict[str, Any] = {}

    def classify_once(text: str):
        verdict = verdicts.get(text)
        if verdict is None:
            verdict = verdicts[text] = classify(text)
        return verdict

    def run_sandbox(argv=None, *, command=None, **kwargs):
        text = command if command is not None else shlex.join(argv or ())
        return run(argv, command=command, verdict=verdicts.get(text), **kwargs)

    return Deps(classify_once, decide, run_sandbox, load_profile)


@record(frozen=False)
class Streams:
    out: BinaryIO = field(default_factory=lambda: sys.stdout.buffer)
    err: BinaryIO = field(default_factory=lambda: sys.stderr.buffer)

    def say(self, text: str) -> None:
        self.err.write((text.rstrip("\n") + "\n").encode("utf-8", "replace"))
        self.err.flush()


def safe(text: str) -> str:
    """Neutralise control characters before untrusted text reaches a terminal."""
    return "".join(c if c.isprintable() or c == " " else f"\\x{ord(c):02x}" for c in text)


# --- entry points --------------------------------------------------------------------

def govern(req: Request, *, ledger: Ledger, deps: Deps | None = None,
           streams: Streams | None = None, parent_id: str | None = None) -> Outcome:
    deps = deps or default_deps()
    streams = streams or Streams()
    verdict = deps.classify(req.text)
    if not getattr(req.profile, "sandbox", True):
        # --sandbox off: explicit full host access for this scope; recorded, no
        # approvals. A deny rule in such a profile still holds.
        decision = deps.decide(verdict, req.profile, grants=frozenset(), context="host")
        if decision.decision == "deny":
            return _refuse(req, verdict, ledger, streams, parent_id, kind="host",
                           reasons=tuple(decision.reasons), decision=decision)
        # Say so every time: full host access must never be mistaken for a sandbox.
        streams.say(f"ringfence run: RF612 sandbox off (profile {req.profile.name!r}): the "
                    "command runs directly on the host with full access; recorded")
        return _run_host(req, verdict, decision, ledger, streams, parent_id,
                         note=f"sandbox off (profile {req.profile.name!r}): full host access")
    if req.host:
        return _host_request(req, verdict, ledger, deps, streams, parent_id)
    return _sandbox_request(req, verdict, ledger, deps, streams)


def approve(approval_id: str, *, scope: str = "once", session: str | None = None,
            ledger: Ledger, deps: Deps | None = None, streams: Streams | None = None) -> int:
    """Execute a pending request where it was asked for; resume its original run."""
    streams = streams or Streams()
    pending = ap.get_or_for_run(ledger, approval_id)
    if pending.status != "pending":
        raise ap.decided_error(pending)
    if pending.where == "stage":
        from .held import approve_held

        return approve_held(pending, scope=scope, ledger=ledger, streams=streams)
    grant_session = session or pending.session or ""
    if scope == "session" and (not grant_session or grant_session.startswith("proc-")):
        raise ApprovalError(
            "a session grant needs a named session; this request came from an unnamed "
            "(per-process) session",
            hint=f"pass --session NAME (or set RINGFENCE_SESSION), or --scope once|always")
    # What the person saw (SPEC §5): the command, the directory, the profile.
    ap.check_command(pending)
    deps = deps or default_deps()
    profile = ap.bound_profile(pending, lambda: deps.load_profile(
        _profile_ref(pending), workspace=pending.workspace))
    cwd_fd = ap.open_bound_dir(pending, pending.cwd, pending.cwd_id, "working directory")
    try:
        if pending.where == "sandbox":
            # The sandboxed run binds the workspace (its working directory in there).
            os.close(ap.open_bound_dir(pending, pending.workspace, pending.workspace_id,
                                       "workspace"))
        return _approve_bound(pending, approval_id, scope, grant_session, profile, cwd_fd,
                              ledger, deps, streams)
    finally:
        if cwd_fd is not None:
            os.close(cwd_fd)


def _approve_bound(pending, approval_id, scope, grant_session, profile, cwd_fd, ledger,
                   deps, streams) -> int:
    def _resume(conn, claimed: ap.Approval) -> None:
        ledger.append_event_tx(conn, claimed.run_id, "running", approval_id=claimed.id,
                               note=f"approved (scope {scope}) by {claimed.decided_by}")

    claimed = ap.claim(ledger, approval_id, scope=scope, session=grant_session,
                       on_claim=_resume)
    if claimed.where == "host":
        # Runs in the very directory whose identity was checked (through its fd, so
        # no later rename or symlink can redirect it), without the person's terminal.
        return _exec_and_record(ledger, claimed.run_id, streams,
                                command=claimed.command, argv=claimed.argv,
                                cwd=claimed.cwd, workspace=claimed.workspace,
                                approval_id=claimed.id, cwd_fd=cwd_fd,
                                stdin=subprocess.DEVNULL).exit_code
    # An approval executor is not the person's terminal session: stdin is /dev/null.
    req = Request(profile=profile, command=claimed.command if claimed.argv is None else None,
                  argv=claimed.argv, workspace=claimed.workspace or ".", cwd=claimed.cwd,
                  interactive=False)
    return _sandbox_exec(req, ledger, deps, streams, claimed.run_id, claimed.keys,
                         approval_id=claimed.id)[0].exit_code


def deny(approval_id: str, *, ledger: Ledger) -> ap.Approval:
    pending = ap.get_or_for_run(ledger, approval_id)
    if pending.where == "stage":
        from .held import deny_held

        return deny_held(pending, ledger=ledger)
    approval_id = pending.id

    def _record(conn, denied: ap.Approval) -> None:
        ledger.append_event_tx(conn, denied.run_id, "denied", approval_id=denied.id,
                               note=f"denied by {denied.decided_by}")
    return ap.deny(ledger, approval_id, on_deny=_record)


# --- host requests --------------------------------------------------------------------

def _host_request(req, verdict, ledger, deps, streams, parent_id) -> Outcome:
    profile = req.profile
    if profile.host == "deny":
        return _refuse(req, verdict, ledger, streams, parent_id, kind="host", reasons=(
            f"host requests are denied under profile {profile.name!r}",))
    if verdict.verdict == "helper":
        return _run_host(req, verdict, None, ledger, streams, parent_id)
    grants = active_keys(ledger, req.session)
    decision = deps.decide(verdict, profile, grants=grants, context="host")
    if decision.decision == "deny":
        return _refuse(req, verdict, ledger, streams, parent_id, kind="host",
                       reasons=tuple(decision.reasons), decision=decision)
    if verdict.verdict == "capability" and decision.decision == "allow":
        return _run_host(req, verdict, decision, ledger, streams, parent_id)
    # one_time is always a pending approval: no grant and no allow rule covers it.
    return _pend(req, verdict, decision, ledger, streams, parent_id, where="host",
                 reasons=_reasons(verdict, decision, grants))


def _reasons(verdict, decision, grants) -> tuple[str, ...]:
    """Why this waits: a one-line summary, then the gate's reasons, then any finding
    the gate did not already spell out. No reason is printed twice."""
    gate = [r for r in (decision.reasons if decision else ())]
    out: list[str] = []
    if verdict.verdict == "one_time":
        out.append("one-time request: no standing grant may cover it")
    else:
        missing = [k for k in verdict.keys if k not in grants]
        if missing:
            out.append("not granted: " + ", ".join(missing))
    out.extend(r for r in gate if r not in out)
    for f in verdict.findings:
        text = f"{f.code} {f.message}"
        if not any(text in r for r in out):
            out.append(text)
    return tuple(out)


def _run_host(req, verdict, decision, ledger, streams, parent_id, note=None) -> Outcome:
    run_id = ledger.start_run(
        kind="host", command=req.text, argv=req.argv, state="running",
        profile=req.profile.name, spec_digest=getattr(req.profile, "digest", None),
        workspace=req.workspace, cwd=req.cwd or os.getcwd(), verdict=verdict.to_json(),
        decision=decision.to_json() if decision else {"decision": "allow", "reasons": [
            note or "helper: nothing to approve"]},
        session=req.session, parent_id=parent_id, note=note)
    res = _exec_and_record(ledger, run_id, streams, command=req.text, argv=req.argv,
                           cwd=req.cwd or os.getcwd(), workspace=req.workspace,
                           stdin=req.stdin)
    return Outcome(run_id, res.state, res.exit_code)


def _refuse(req, verdict, ledger, streams, parent_id, *, kind, reasons, decision=None):
    run_id = ledger.start_run(
        kind=kind, command=req.text, argv=req.argv, state="denied",
        profile=req.profile.name, spec_digest=getattr(req.profile, "digest", None),
        workspace=req.workspace, cwd=req.cwd or os.getcwd(), verdict=verdict.to_json(),
        decision=decision.to_json() if decision else {"decision": "deny",
                                                      "reasons": list(reasons)},
        session=req.session, parent_id=parent_id, exit_code=EXIT_DENIED,
        note="; ".join(reasons))
    streams.say(f"ringfence: denied by profile {req.profile.name!r} (run {run_id})")
    for r in reasons:
        streams.say(f"  reason: {safe(r)}")
    return Outcome(run_id, "denied", EXIT_DENIED, reasons=tuple(reasons))


def _pend(req, verdict, decision, ledger, streams, parent_id, *, where, reasons) -> Outcome:
    run_id = ledger.start_run(
        kind=where, command=req.text, argv=req.argv, state="waiting_for_approval",
        profile=req.profile.name, spec_digest=getattr(req.profile, "digest", None),
        workspace=req.workspace, cwd=req.cwd or os.getcwd(), verdict=verdict.to_json(),
        decision=decision.to_json() if decision else None, session=req.session,
        parent_id=parent_id, exit_code=EXIT_WAITING)
    a = ap.create(ledger, run_id=run_id, command=req.text, argv=req.argv, keys=verdict.keys,
                  verdict_class=verdict.verdict, reasons=reasons, where=where,
                  profile=req.profile.name, profile_source=req.profile.source,
                  profile_digest=getattr(req.profile, "digest", None) or None,
                  workspace=os.path.abspath(req.workspace), cwd=req.cwd or os.getcwd(),
                  session=req.session)
    place = "on the host" if where == "host" else "in its sandbox"
    streams.say(f"ringfence: waiting_for_approval {a.id} (run {run_id}): needs approval "
                f"under profile {req.profile.name!r} to run {place}: {safe(req.text)}")
    for r in reasons:
        streams.say(f"  reason: {safe(r)}")
    streams.say(f"  approve: ringfence approve {a.id} [--scope once|session|always]\n"
                f"  deny:    ringfence deny {a.id}")
    return Outcome(run_id, "waiting_for_approval", EXIT_WAITING, a.id, reasons)


# --- sandboxed requests ------------------------------------------------------------------

def _sandbox_request(req, verdict, ledger, deps, streams) -> Outcome:
    grants = active_keys(ledger, req.session)
    approved = False
    decision = deps.decide(verdict, req.profile, grants=grants, context="sandbox")
    if decision.decision == "deny":
        return _refuse(req, verdict, ledger, streams, None, kind="sandbox",
                       reasons=tuple(decision.reasons), decision=decision)
    if decision.decision == "ask" and req.consent:
        # The person approved this exact command in Claude Code (hook --wrap): the
        # token is bound to the command text, the tool_use_id and the session, and
        # is spent by this one run. Anything else falls through to a pending approval.
        from .hooks.store import consume_consent

        note = consume_consent(ledger, req.consent, command=req.text, session=req.session)
        approved = note is not None
        if approved:
            decision = type(decision)("allow", (*decision.reasons, note), decision.matched)
        else:
            streams.say("ringfence: the Claude Code consent token does not match this "
                        "command, session or is spent; asking instead")
    if decision.decision == "ask":
        return _pend(req, verdict, decision, ledger, streams, None, where="sandbox",
                     reasons=tuple(decision.reasons) or _reasons(verdict, decision, grants))
    run_id = ledger.start_run(
        kind="sandbox", command=req.text, argv=req.argv, state="running",
        profile=req.profile.name, spec_digest=getattr(req.profile, "digest", None),
        workspace=req.workspace, cwd=req.cwd or os.getcwd(), verdict=verdict.to_json(),
        decision=decision.to_json(), session=req.session)
    outcome, result = _sandbox_exec(req, ledger, deps, streams, run_id, verdict.keys,
                                    approved=approved)
    if (req.profile.host == "escalate" and outcome.state == "failed"
            and looks_like_boundary(result)):
        streams.say(f"ringfence: the sandboxed run {run_id} failed at the boundary "
                    f"(exit {outcome.exit_code}); escalating to a host request (Host-Assisted)")
        # Say it before anything runs on the host: the sandboxed attempt already
        # ran, so a host run repeats every side effect the command had in there.
        streams.say("ringfence: note: the sandboxed attempt already ran; what it changed "
                    "in the workspace stays, and a host run repeats the whole command")
        host = Request(profile=req.profile, command=req.command, argv=req.argv,
                       workspace=req.workspace, cwd=req.cwd, host=True, session=req.session,
                       interactive=req.interactive)
        child = _host_request(host, verdict, ledger, deps, streams, parent_id=run_id)
        return Outcome(run_id, child.state, child.exit_code, child.approval_id,
                       child.reasons, escalated_run_id=child.run_id)
    return outcome


def looks_like_boundary(result: Any) -> bool:
    """Did a sandboxed run fail the way a boundary fails (not the command's own bug)?"""
    if result is None:
        return False
    for n in getattr(result, "network", None) or ():
        allowed = n.get("allowed") if isinstance(n, dict) else getattr(n, "allowed", True)
        if allowed is False:
            return True
    return bool(BOUNDARY_PATTERNS.search(_text(getattr(result, "stderr_tail", None))))


def _text(value: Any) -> str:
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    return value or ""


def _sandbox_exec(req, ledger, deps, streams, run_id, keys, approval_id=None,
                  approved=False):
    # No walk of the workspace: a staged run reports its exact changes itself
    # (ringfence/settle.py); only a run that was not staged falls back to this.
    before = None
    started = time.monotonic()
    try:
        result = _call_runner(req, deps, streams, keys,
                              approved=approved or approval_id is not None)
    except RingfenceError as exc:
        # Fail closed (SandboxError, a profile the compiler rejects, ...): the
        # command did not run. Record why, say so, exit 125.
        ledger.append_event(run_id, "sandbox_error", exit_code=EXIT_UNSAFE,
                            duration=time.monotonic() - started, note=str(exc),
                            approval_id=approval_id)
        streams.say(f"ringfence: could not run safely: {exc}")
        return Outcome(run_id, "sandbox_error", EXIT_UNSAFE), None
    except BaseException as exc:   # Ctrl-C, a bug: the run must not stay "running"
        ledger.append_event(run_id, "aborted", duration=time.monotonic() - started,
                            note=f"interrupted: {type(exc).__name__}: {exc}",
                            approval_id=approval_id)
        raise
    return _record_sandbox(req, ledger, streams, run_id, result, before, started,
                           approval_id)


def _call_runner(req, deps, streams, keys, approved=False):
    # The runner re-checks the gate itself. We have already decided (with this
    # session's grants, or a person's approval), so the keys of what we run are
    # passed as grants: ask rules no longer hold it, deny rules still do.
    return deps.run_sandbox(list(req.argv) if req.argv is not None else None,
                            command=req.command if req.argv is None else None,
                            profile=req.profile, workspace=req.workspace,
                            timeout=req.timeout, grants=frozenset(keys),
                            out=streams.out, err=streams.err, cwd=req.cwd,
                            approved=approved, **_stdin_kw(req))


def _stdin_kw(req) -> dict:
    # Only when it differs from the default, so injected runners keep their signature.
    return {} if req.interactive else {"stdin": subprocess.DEVNULL}


def _record_sandbox(req, ledger, streams, run_id, result, before, started, approval_id):
    code = int(getattr(result, "exit_code", EXIT_UNSAFE))
    status = getattr(result, "status", None)
    if status in ("denied", "waiting_for_approval"):
        # The runner's own gate disagreed with ours: it ran nothing. Fail closed
        # and say so rather than guess which decision was right.
        note = (f"the runner refused ({status}): "
                + "; ".join(getattr(result, "reasons", ()) or ()))
        ledger.append_event(run_id, "sandbox_error", exit_code=EXIT_UNSAFE, note=note,
                            approval_id=approval_id)
        streams.say(f"ringfence: could not run safely: {note}")
        return Outcome(run_id, "sandbox_error", EXIT_UNSAFE), None
    state = status if status in ("completed", "failed", "aborted") else (
        "completed" if code == 0 else "failed")
    ledger.append_event(
        run_id, state, exit_code=code,
        duration=getattr(result, "duration", None) or time.monotonic() - started,
        stdout_tail=tail(getattr(result, "stdout_tail", None)),
        stderr_tail=tail(getattr(result, "stderr_tail", None)),
        changes=_changes(before, req.workspace, result), network=_jsonable(
            getattr(result, "network", None)),
        degradations=_jsonable(getattr(result, "degradations", None)),
        outcome=getattr(result, "outcome", None), approval_id=approval_id)
    if getattr(result, "held", None):
        from .held import pend_held

        pend_held(req, ledger, streams, run_id, result)
    return Outcome(run_id, state, code), result


def _changes(before, workspace, result=None) -> dict | None:
    staged = getattr(result, "changes", None) if result is not None else None
    if staged is not None:
        return staged
    if before is None:
        return None       # not staged (Observe: nothing writable), nothing to diff
    return diff(before, snapshot(workspace)).to_json()


def _jsonable(value: Any) -> Any:
    if value is None:
        return None
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    if hasattr(value, "to_json"):
        return value.to_json()
    if is_record(value):
        return asdict(value)
    return value if isinstance(value, (dict, str, int, float, bool)) else str(value)


# --- executing on the host ------------------------------------------------------------------

@record(frozen=False)
class HostResult:
    state: str
    exit_code: int


def _exec_and_record(ledger, run_id, streams, *, command, argv, cwd, workspace,
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
    ledger.append_event(run_id, state, exit_code=code, duration=time.monotonic() - started,
                        stdout_tail=out_tail, stderr_tail=err_tail,
                        changes=_changes(before, workspace) if before else None,
                        approval_id=approval_id)
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
        term.restore()
    if code < 0:
        code = 128 - code   # killed by a signal: report it the way a shell does
    return code, bytes(tails[1]), bytes(tails[2])


def _profile_ref(a: ap.Approval) -> str:
    src = a.profile_source or ""
    if src.startswith("builtin:"):
        return src.split(":", 1)[1]
    return src or (a.profile or "build")


__all__ = ["Request", "Outcome", "Deps", "Streams", "govern", "approve", "deny",
           "looks_like_boundary", "exec_host"]
