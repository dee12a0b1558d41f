"""Deciding a pending approval: ``approve`` executes the request where it was asked
for (on the host, or in its sandbox), streams its real output, exits with its status
and appends the result to the ORIGINAL run; ``deny`` records the refusal on it.

Held changes of a staged run (``where == "stage"``) go to ``ringfence.session.held``;
a deferred Claude Code call (``where == "claude-code"``) is never executed here: it is
decided (``session.decisions``) and Claude Code runs it (``ledger.hook_defer``).
"""

from __future__ import annotations

import os
import subprocess

from ringfence.rfcore.errors import ApprovalError

from ringfence.ledger import pending as ap
from ringfence.session.on_host import exec_and_record
from ringfence.session.request import Deps, Request, Streams, default_deps
from ringfence.session.in_sandbox import execute as sandbox_execute
from ringfence.ledger.store import Ledger


def approve(approval_id: str, *, scope: str = "once", session: str | None = None,
            ledger: Ledger, deps: Deps | None = None, streams: Streams | None = None) -> int:
    """Execute a pending request where it was asked for; resume its original run."""
    streams = streams or Streams()
    pending = ap.get_or_for_run(ledger, approval_id)
    if pending.status != "pending":
        raise ap.decided_error(pending)
    if pending.where == "stage":
        from ringfence.session.held import approve_held

        return approve_held(pending, scope=scope, ledger=ledger, streams=streams)
    if pending.where == "claude-code":
        # A deferred Claude Code call runs in Claude Code when its caller resumes the
        # session, never here: deciding it only records the decision.
        raise ApprovalError(f"{pending.id} is a deferred Claude Code call: it runs in "
                            "Claude Code, not here; nothing was run",
                            hint=f"decide it with: ringfence approve {pending.id} --defer "
                                 "[--scope once|session|always]")
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
                       on_claim=_resume, grant_keys=_grant_items(pending, profile, deps))
    if claimed.where == "host":
        # Runs in the very directory whose identity was checked (through its fd, so
        # no later rename or symlink can redirect it), without the person's terminal.
        return exec_and_record(ledger, claimed.run_id, streams,
                               command=claimed.command, argv=claimed.argv,
                               cwd=claimed.cwd, workspace=claimed.workspace,
                               approval_id=claimed.id, cwd_fd=cwd_fd,
                               stdin=subprocess.DEVNULL).exit_code
    # An approval executor is not the person's terminal session: stdin is /dev/null.
    req = Request(profile=profile, command=claimed.command if claimed.argv is None else None,
                  argv=claimed.argv, workspace=claimed.workspace or ".", cwd=claimed.cwd,
                  interactive=False)
    return sandbox_execute(req, ledger, deps, streams, claimed.run_id, claimed.keys,
                           approval_id=claimed.id)[0].exit_code


def _grant_items(pending, profile, deps) -> tuple[str, ...]:
    """What this yes may grant: the request's keys, but for an ask rule or an
    irreversible action only its exact argv, for the session (``gate.grant_items``)."""
    from ringfence.session.gate import grant_items

    if profile is None:   # a host request: its rules still come from its profile
        try:
            profile = deps.load_profile(_profile_ref(pending), workspace=pending.workspace)
        except Exception:   # irreversible actions are still held exact without it
            profile = None
    return grant_items(deps.classify(pending.command), profile, pending.cwd,
                       keys=pending.keys)


def deny(approval_id: str, *, ledger: Ledger) -> ap.Approval:
    pending = ap.get_or_for_run(ledger, approval_id)
    if pending.where == "stage":
        from ringfence.session.held import deny_held

        return deny_held(pending, ledger=ledger)
    approval_id = pending.id

    def _record(conn, denied: ap.Approval) -> None:
        ledger.append_event_tx(conn, denied.run_id, "denied", approval_id=denied.id,
                               note=f"denied by {denied.decided_by}")
    return ap.deny(ledger, approval_id, on_deny=_record)


def _profile_ref(a: ap.Approval) -> str:
    src = a.profile_source or ""
    if src.startswith("builtin:"):
        return src.split(":", 1)[1]
    return src or (a.profile or "build")
