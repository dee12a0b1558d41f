"""The hook's ledger records: every decision, the asks waiting for their Post event,
and the one-use consent tokens of ``--wrap`` (tables from ledger migration 4).

The Pre -> Post link (issue 13). PreToolUse answered ``ask`` stores the ask under
its Claude ``session_id`` and ``tool_use_id`` with the exact command text, its
--wrap rewrite, the verdict and its keys. Claude Code runs the tool only after
the person said yes, so a PostToolUse / PostToolUseFailure for the same pair is
that yes, but only if its ``tool_input.command`` is the text that was asked
about: a Post for another command settles the ask as ``mismatch`` and grants
nothing. An ask is settled once; a second Post finds nothing to settle.

Consent tokens (--wrap). The wrapped command carries a random token; the ledger
keeps only its sha256, bound to the exact text ``ringfence run`` will run, the
ringfence session and the tool_use_id. ``consume_consent`` spends it atomically
(one UPDATE), so it unlocks one run of that one text, within ``CONSENT_TTL``, and
never after its ask was settled (the Post, or PermissionDenied, closes it).
The state directory is hidden in every sandbox, so nothing sandboxed can read
or forge these rows.
"""

from __future__ import annotations

import json
import os
import time

from ringfence.rfcore.hashing import sha256

from ringfence.ledger.store import Ledger, storable, transaction

CONSENT_TTL = 15 * 60.0
# An open ask older than this is expired: Claude Code sends no event when a person
# answers No in the dialog (PermissionDenied is for auto-mode denials only), so a
# late Post can no longer turn it into a grant. The consent window, and migration
# 7's never-prune window for open asks, are the same length.
ASK_TTL = CONSENT_TTL


def token_digest(token: str) -> str:
    return sha256(token.encode("utf-8", "surrogateescape")).hexdigest()


def new_token() -> str:
    return os.urandom(16).hex()


_CONSENT = "--hook-consent "


def redact(text: str | None) -> str | None:
    """``text`` with its --wrap consent token replaced by ``-``: the ledger keeps the
    wrapped command without the token (only its sha256, in ``consent``)."""
    if not text or _CONSENT not in text:
        return text
    import re

    return re.sub(r"--hook-consent [0-9a-f]+", "--hook-consent -", text)


def record_event(ledger: Ledger, *, event: str, session: str | None,
                 tool_use_id: str | None, tool_name: str | None = None,
                 command: str | None = None, decision: str | None = None,
                 reasons=(), verdict: str | None = None, keys=(),
                 profile: str | None = None, workspace: str | None = None,
                 note: str | None = None, conn=None) -> None:
    sql = ("INSERT INTO hook_events (at, event, session, tool_use_id, tool_name, command, "
           "decision, reasons, verdict, keys, profile, workspace, note) "
           "VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)")
    row = (time.time(), event, storable(session), storable(tool_use_id), storable(tool_name),
           storable(command), decision, json.dumps(list(reasons)), verdict,
           json.dumps(list(keys)), profile, storable(workspace), note)
    if conn is not None:
        conn.execute(sql, row)
        return
    with transaction(ledger.conn) as c:
        c.execute(sql, row)


def remember_ask(ledger: Ledger, *, session: str, tool_use_id: str, rf_session: str,
                 command: str, wrapped: str | None, run_text: str | None, verdict: str,
                 keys, grant_scope: str, profile: str | None,
                 consent: str | None, conn, approval_id: str | None = None) -> bool:
    """Store (or refresh, while still unsettled) the ask of one tool call; False
    when it was not stored (settled, or another command under this id).
    ``approval_id``: the pending approval of a deferred ask (``hook_defer``)."""
    row = conn.execute("SELECT status, command FROM hook_asks WHERE session=? AND "
                       "tool_use_id=?", (storable(session), storable(tool_use_id))).fetchone()
    if row is not None and (row["status"] != "asked" or row["command"] != storable(command)):
        # Settled asks are history, and an open one keeps the text first asked
        # about: a replayed Pre can neither re-open it nor swap its command.
        return False
    # An older open ask of the same command in this session was not run (its Post
    # never came): a No in the dialog, which Claude Code does not report. Close it.
    conn.execute("UPDATE hook_asks SET status='superseded', decided_at=? WHERE session=? "
                 "AND command=? AND tool_use_id != ? AND status='asked'",
                 (time.time(), storable(session), storable(command), storable(tool_use_id)))
    conn.execute("INSERT OR REPLACE INTO hook_asks (session, tool_use_id, at, rf_session, "
                 "command, wrapped, run_text, verdict, keys, grant_scope, profile, consent, "
                 "approval_id) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)",
                 (storable(session), storable(tool_use_id), time.time(), rf_session,
                  storable(command), storable(redact(wrapped)), storable(run_text), verdict,
                  json.dumps(list(keys)), grant_scope, profile,
                  token_digest(consent) if consent else None, approval_id))
    return True


def settle_ask(conn, session: str, tool_use_id: str, *, command: str | None,
               status_if_match: str) -> tuple[str, dict | None]:
    """Settle the ask of (session, tool_use_id) once. Returns (outcome, ask row):
    outcome is ``none`` (no open ask), ``mismatch`` (the Post ran another command)
    or ``status_if_match``."""
    row = conn.execute("SELECT * FROM hook_asks WHERE session=? AND tool_use_id=? "
                       "AND status='asked'", (storable(session), storable(tool_use_id))
                       ).fetchone()
    if row is None:
        return "none", None
    if row["at"] <= time.time() - ASK_TTL:
        conn.execute("UPDATE hook_asks SET status='expired', decided_at=? WHERE session=? "
                     "AND tool_use_id=? AND status='asked'",
                     (time.time(), row["session"], row["tool_use_id"]))
        return "expired", dict(row, keys=json.loads(row["keys"]))
    ask = dict(row)
    ask["keys"] = json.loads(ask["keys"])
    outcome = status_if_match if ran_as_asked(ask, command) else "mismatch"
    conn.execute("UPDATE hook_asks SET status=?, decided_at=? WHERE session=? AND "
                 "tool_use_id=? AND status='asked'",
                 (outcome, time.time(), ask["session"], ask["tool_use_id"]))
    return outcome, ask


def ran_as_asked(ask: dict, command: str | None) -> bool:
    """Is ``command`` (a Post's) the one asked about, as asked or its --wrap rewrite?"""
    return command is not None and (storable(command) == ask["command"] or
                                    storable(redact(command)) == ask["wrapped"])


def ask_for_request(conn, session: str, command: str) -> dict | None:
    """The open, unexpired ask a PermissionRequest (which has no tool_use_id) belongs
    to: same Claude session, same command text (as asked, or its --wrap rewrite);
    the latest one."""
    row = conn.execute("SELECT * FROM hook_asks WHERE session=? AND status='asked' AND "
                       "(command=? OR wrapped=?) AND at > ? ORDER BY at DESC LIMIT 1",
                       (storable(session), storable(command), storable(redact(command)),
                        time.time() - ASK_TTL)).fetchone()
    return dict(row) if row is not None else None


def consume_consent(ledger: Ledger, token: str, *, command: str, session: str) -> str | None:
    """Spend a --wrap consent token for exactly ``command`` in ``session``.

    Returns the note to record with the run, or None when the token is unknown,
    spent, expired, settled, or bound to another text or session."""
    with transaction(ledger.conn) as c:
        row = c.execute("SELECT session, tool_use_id FROM hook_asks WHERE consent=? AND "
                        "consent_used IS NULL AND status='asked' AND run_text=? AND "
                        "rf_session=? AND at > ?",
                        (token_digest(token), storable(command), storable(session),
                         time.time() - CONSENT_TTL)).fetchone()
        if row is None:
            return None
        c.execute("UPDATE hook_asks SET consent_used=? WHERE session=? AND tool_use_id=? "
                  "AND consent_used IS NULL", (time.time(), row["session"],
                                               row["tool_use_id"]))
    return (f"approved by the person in Claude Code (session {row['session']}, "
            f"tool_use_id {row['tool_use_id']}); one-use consent spent")


def list_events(ledger: Ledger, limit: int | None = 50) -> list[dict]:
    sql = "SELECT * FROM hook_events ORDER BY seq DESC" + (" LIMIT ?" if limit else "")
    out = []
    for r in ledger.conn.execute(sql, (limit,) if limit else ()).fetchall():
        d = dict(r)
        d["reasons"] = json.loads(d["reasons"] or "[]")
        d["keys"] = json.loads(d["keys"] or "[]")
        out.append(d)
    return out
