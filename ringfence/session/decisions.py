"""Deciding without executing (issue 24): a person's answer to a pending approval,
recorded for whoever waits on the request, and the full output that caller got.

``approve ID --defer``, ``Session.decide`` and an MCP approval form all land here:
the decision is a ledger row (migration 8), never a run. ``Session.resume`` then
executes the request through the same ``approve`` path as the CLI (which checks
the command, the directory identity and the profile the person saw) and stores
the output, so a second resume, or a new process after a crash, gets it back.

A deferred decision is checked the way ``approve`` checks it, up front: a one-time
request takes only ``once``; a ``session`` grant needs a named session. A deferred
Claude Code call (``where == "claude-code"``) is decided only before it expires, and its
session grant goes to the session it came from (``ledger.hook_defer``).
"""

from __future__ import annotations

import time

from ringfence.ledger import pending as ap
from ringfence.ledger.store import Ledger, transaction
from ringfence.rfcore.errors import ApprovalError, UsageError

DECISIONS = ("once", "session", "always", "deny")


def validate(decision: str) -> str:
    if decision not in DECISIONS:
        raise UsageError(f"unknown decision {decision!r}",
                         hint="use once, session, always or deny")
    return decision


def record(ledger: Ledger, approval_id: str, decision: str, *, via: str,
           session: str | None = None) -> ap.Approval:
    """Record ``decision`` (not ``deny``: that is ``governor.deny``) for a pending
    approval; the request stays ``waiting_for_approval`` until someone resumes it."""
    validate(decision)
    if decision == "deny":
        raise UsageError("a denial is recorded by deny, not deferred")
    a = ap.get_or_for_run(ledger, approval_id)
    if a.where == "claude-code":
        # A deferred Claude Code call: decided for the session it came from, and only
        # while its clock runs (ledger.hook_defer).
        from ringfence.ledger.hook_defer import expire_stale

        if a.id in expire_stale(ledger):
            a = ap.get(ledger, a.id)
        session = None
    if a.status != "pending":
        raise ap.decided_error(a)
    if decision != "once" and not a.grantable:
        raise ApprovalError(
            f"approval {a.id} is a one-time request ({a.verdict_class}); no standing "
            f"grant may cover it, so {decision!r} is refused",
            hint=f"decide it for this execution only: ringfence approve {a.id} --defer "
                 "--scope once")
    grant_session = session or a.session or ""
    if decision == "session" and (not grant_session or grant_session.startswith("proc-")):
        raise ApprovalError(
            "a session grant needs a named session; this request came from an unnamed "
            "(per-process) session", hint="decide once or always instead")
    with transaction(ledger.conn) as c:
        row = c.execute("SELECT status FROM approvals WHERE id=?", (a.id,)).fetchone()
        if row is None or row["status"] != "pending":    # decided meanwhile
            raise ap.decided_error(ap.get(ledger, a.id))
        c.execute("INSERT OR REPLACE INTO decisions VALUES (?,?,?,?,?,?)",
                  (a.id, decision, time.time(), ap._who(), grant_session, via))
    return a


def get(ledger: Ledger, approval_id: str) -> dict | None:
    row = ledger.conn.execute("SELECT * FROM decisions WHERE approval_id=?",
                              (approval_id,)).fetchone()
    return dict(row) if row is not None else None


def save_output(ledger: Ledger, run_id: str, approval_id: str | None, stdout: bytes,
                stderr: bytes, truncated: bool) -> None:
    with transaction(ledger.conn) as c:
        c.execute("INSERT OR REPLACE INTO outputs VALUES (?,?,?,?,?,?)",
                  (run_id, approval_id, time.time(), stdout, stderr, int(truncated)))


def load_output(ledger: Ledger, run_id: str) -> tuple[bytes, bytes, bool] | None:
    row = ledger.conn.execute("SELECT stdout, stderr, truncated FROM outputs WHERE run_id=?",
                              (run_id,)).fetchone()
    if row is None:
        return None
    return bytes(row["stdout"] or b""), bytes(row["stderr"] or b""), bool(row["truncated"])


def withdraw(ledger: Ledger, approval_id: str, note: str) -> ap.Approval:
    """The waiting caller gave up (``Session.cancel``): the approval is ``cancelled``
    and its run ``aborted``; nothing ran. A person's later approve finds it decided."""
    with transaction(ledger.conn) as c:
        a = ap.get(ledger, approval_id)
        if a.status != "pending":
            raise ap.decided_error(a)
        c.execute("UPDATE approvals SET status='cancelled', decided_at=?, decided_by=? "
                  "WHERE id=? AND status='pending'", (time.time(), ap._who(), a.id))
        ledger.append_event_tx(c, a.run_id, "aborted", approval_id=a.id, note=note)
    return ap.get(ledger, approval_id)
