"""Deferred hook asks (issue 20 §8): ``hook claude-code --headless`` answers ``defer``
where it would ask, and the ask becomes a pending approval another process decides.

One deferred call, start to end:

1. PreToolUse that the gate answers ``ask``: a run (kind ``claude-code``, state
   ``waiting_for_approval``), a pending approval (``where = "claude-code"``: Claude Code
   runs it, never the approver) and the hook ask (``hook_asks.approval_id``, the
   link of migration 9). Claude Code stops with ``stop_reason: "tool_deferred"``.
2. A person decides from anywhere: ``ringfence approve ID [--scope S]`` (with or
   without ``--defer``) records the decision (``decisions``; nothing runs there),
   ``ringfence deny ID`` denies the approval.
3. The caller resumes the session (``claude -p --resume``); PreToolUse runs again for
   the same call. :func:`find` returns its deferred ask (same Claude session and
   ``tool_use_id``, else the same session and command) with the approval's state.

4. The resumed call is allowed (the approval is claimed): Claude Code runs it, not
   ringfence, so the run records a hand-over, not an outcome (:func:`hand_over`): state
   ``running`` with no pid. ``ledger.store`` judges a ``running`` run by its process;
   one without a pid has none of ours to watch, so it is never taken for a crashed
   ringfence process. ``waiting_for_approval`` would say a person is still needed,
   and ``completed`` would claim a result nobody has seen.
5. Claude Code reports the result: the call's PostToolUse (``completed``, or ``failed``
   when the response says interrupted or carries a non-zero exit status),
   PostToolUseFailure (``failed``), PermissionDenied (``denied``), matched by Claude
   session and ``tool_use_id`` through the ask's ``approval_id`` (:func:`report`).

Clocks (the hook's ``ASK_TTL``, 15 minutes): an undecided approval expires that long
after the defer, and a decision that long after it was made if no resumed call used
it. An expired approval is ``expired`` (its run ``aborted``), and the call's next
PreToolUse defers anew under a new id. A call allowed that long ago whose result
never came (the session was interrupted) ends ``aborted``, saying so: Claude Code's
Bash calls stop after 10 minutes at most, so a report would have come. :func:`expire_stale`
sweeps both (``approvals list``, ``approve``, and the writable opens of ``ledger
list/show/export``), :func:`expire` ends one pending approval.
"""

from __future__ import annotations

import json
import time

from ringfence.ledger.hook_rows import ASK_TTL, redact
from ringfence.ledger.store import Ledger, storable, transaction

WHERE = "claude-code"
TTL = ASK_TTL

_FIND = """SELECT h.*, a.status AS ap_status, a.created_at AS ap_created_at,
    a.decided_at AS ap_decided_at, a.decided_by AS ap_decided_by, a.run_id AS ap_run_id,
    a.cwd_id AS ap_cwd_id, a.profile_digest AS ap_profile_digest,
    d.decision AS decision, d.decided_at AS d_at, d.decided_by AS d_by, d.session AS d_session
    FROM hook_asks h JOIN approvals a ON a.id = h.approval_id
    LEFT JOIN decisions d ON d.approval_id = a.id
    WHERE h.session = ? AND h.command = ?
      AND ((h.status = 'asked' AND a.status = 'pending')
           OR (a.status = 'denied' AND a.decided_at > ? AND h.status IN ('asked', 'denied')))
    ORDER BY (h.tool_use_id = ?) DESC, h.at DESC LIMIT 1"""


def find(conn, session: str, tool_use_id: str, command: str,
         now: float | None = None) -> dict | None:
    """The live deferred ask a PreToolUse resumes, with ``state``: ``waiting``,
    ``decided`` (``decision`` once/session/always), ``denied`` or ``expired``."""
    now = time.time() if now is None else now
    row = conn.execute(_FIND, (storable(session), storable(command), now - TTL,
                               storable(tool_use_id))).fetchone()
    if row is None:
        return None
    d = dict(row, keys=json.loads(row["keys"]))
    if d["ap_status"] == "denied":
        d["state"] = "denied"
    elif d["decision"] is None:
        d["state"] = "expired" if d["ap_created_at"] <= now - TTL else "waiting"
    else:
        d["state"] = "expired" if d["d_at"] <= now - TTL else "decided"
    return d


def call_of(conn, approval_id: str) -> dict | None:
    """The Claude Code call of a deferred approval: ``session``, ``tool_use_id``, ``at``."""
    row = conn.execute("SELECT session, tool_use_id, at FROM hook_asks WHERE approval_id=? "
                       "ORDER BY at DESC LIMIT 1", (storable(approval_id),)).fetchone()
    return dict(row) if row is not None else None


def expire(ledger: Ledger, conn, approval_id: str, run_id: str, why: str) -> bool:
    """Mark one pending deferred approval ``expired`` and abort its run (inside the
    caller's transaction). False when it was no longer pending."""
    cur = conn.execute("UPDATE approvals SET status='expired', decided_at=?, "
                       "decided_by='ringfence' WHERE id=? AND status='pending' AND where_=?",
                       (time.time(), approval_id, WHERE))
    if cur.rowcount != 1:
        return False
    ledger.append_event_tx(conn, run_id, "aborted", approval_id=approval_id, note=why)
    return True


_STALE = ("SELECT a.id, a.run_id, d.decided_at AS d_at FROM approvals a "
          "LEFT JOIN decisions d ON d.approval_id = a.id "
          "WHERE a.status = 'pending' AND a.where_ = ? AND "
          "((d.decided_at IS NULL AND a.created_at <= ?) OR d.decided_at <= ?)")
# Allowed (claimed: ``decided_at`` is the allow) and still handed over, past the clock.
_UNREPORTED = ("SELECT a.id, a.run_id FROM approvals a JOIN run_events e ON "
               "e.run_id = a.run_id WHERE a.status = 'approved' AND a.where_ = ? AND "
               "a.decided_at <= ? AND e.state = 'running' AND e.pid IS NULL AND "
               "e.seq = (SELECT MAX(seq) FROM run_events WHERE run_id = a.run_id)")
NEVER_REPORTED = ("allowed, but Claude Code never reported a result within 15 minutes "
                  "(no PostToolUse or PostToolUseFailure: the session was interrupted or "
                  "never resumed past it); whether it ran, and how it ended, is unknown")


def expire_stale(ledger: Ledger, now: float | None = None) -> list[str]:
    """Expire every deferred approval past its clock (returns their ids), and end
    ``aborted`` every allowed call whose result Claude Code never reported."""
    now = time.time() if now is None else now
    args = (WHERE, now - TTL, now - TTL)
    conn = ledger.conn
    if (conn.execute(_STALE, args).fetchone() is None
            and conn.execute(_UNREPORTED, args[:2]).fetchone() is None):
        return []
    gone = []
    with transaction(conn) as c:
        for r in c.execute(_STALE, args).fetchall():
            why = ("expired: decided, but no resumed call used the decision within 15 "
                   "minutes" if r["d_at"] is not None else
                   "expired: not decided within 15 minutes of the defer")
            if expire(ledger, c, r["id"], r["run_id"], why):
                gone.append(r["id"])
        for r in c.execute(_UNREPORTED, args[:2]).fetchall():
            if _handed_over(c, r["run_id"]):            # re-checked under the write lock
                ledger.append_event_tx(c, r["run_id"], "aborted", approval_id=r["id"],
                                       note=NEVER_REPORTED)
    return gone


def hand_over(ledger: Ledger, conn, run_id: str, approval_id: str, note: str) -> None:
    """The resumed call is allowed: Claude Code runs it. Its run is ``running`` with no
    pid (no ringfence process holds it) until :func:`report` or the clock ends it."""
    ledger.append_event_tx(conn, run_id, "running", approval_id=approval_id, pid=None,
                           note=note)


def report(ledger: Ledger, conn, approval_id: str, state: str, note: str,
           **result: object) -> str | None:
    """End the run of an allowed deferred call with what Claude Code reported (inside
    the caller's transaction). Returns the run id, or None when the run was no longer
    handed over (already reported, or ended by the clock): a run ends once."""
    row = conn.execute("SELECT run_id FROM approvals WHERE id=? AND where_=?",
                       (storable(approval_id), WHERE)).fetchone()
    if row is None or not _handed_over(conn, row["run_id"]):
        return None
    ledger.append_event_tx(conn, row["run_id"], state, approval_id=approval_id, note=note,
                           **result)
    return row["run_id"]


def _handed_over(conn, run_id: str) -> bool:
    last = conn.execute("SELECT state, pid FROM run_events WHERE run_id=? ORDER BY seq DESC "
                        "LIMIT 1", (run_id,)).fetchone()
    return last is not None and last["state"] == "running" and last["pid"] is None


def reopen(conn, session: str, tool_use_id: str, *, wrapped: str | None,
           run_text: str | None, consent_digest: str | None) -> None:
    """The resumed call is allowed: its ask is open from now, with the --wrap rewrite
    and consent token of this answer (so ``ringfence run`` can spend it), and its Post
    settles it (granting nothing more: the approval's claim stored the grants)."""
    conn.execute("UPDATE hook_asks SET at=?, wrapped=?, run_text=?, consent=?, "
                 "consent_used=NULL WHERE session=? AND tool_use_id=? AND status='asked'",
                 (time.time(), storable(redact(wrapped)), storable(run_text), consent_digest,
                  session, tool_use_id))


def has_ask(conn, session: str, tool_use_id: str) -> bool:
    return conn.execute("SELECT 1 FROM hook_asks WHERE session=? AND tool_use_id=?",
                        (storable(session), storable(tool_use_id))).fetchone() is not None


def rebind(conn, session: str, old_tid: str, new_tid: str) -> None:
    """A deferred ask allowed to a call with another ``tool_use_id`` (same session and
    command) moves to that id: its Post, which reports the result, comes under it."""
    conn.execute("UPDATE hook_asks SET tool_use_id=? WHERE session=? AND tool_use_id=? "
                 "AND status='asked'", (storable(new_tid), session, old_tid))


def settle_denied(conn, session: str, tool_use_id: str) -> None:
    conn.execute("UPDATE hook_asks SET status='denied', decided_at=? WHERE session=? AND "
                 "tool_use_id=? AND status='asked'", (time.time(), session, tool_use_id))


def stored_elsewhere(conn, session: str, tool_use_id: str, command: str) -> str | None:
    """Why this call's ask cannot be stored under its ``tool_use_id`` (settled, or held
    by another command), or None."""
    row = conn.execute("SELECT status, command FROM hook_asks WHERE session=? AND "
                       "tool_use_id=?", (storable(session), storable(tool_use_id))).fetchone()
    if row is None:
        return None
    if row["command"] != storable(command):
        return f"tool_use_id {tool_use_id} was asked about another command"
    if row["status"] != "asked":
        return f"this call was already settled ({row['status']})"
    return None
