"""`ringfence ledger prune`: the one way rows ever leave the append-only ledger.

Design (issue 14 §10):
- The ``runs``/``run_events`` DELETE triggers (migration 4, ledger/migrations.py) refuse every delete
  unless the same transaction holds a row in ``prune_permit``. Only :func:`prune`
  writes one, inside ``BEGIN IMMEDIATE``, and removes it before ``COMMIT``: a
  stray ``DELETE`` anywhere else still aborts, as before. UPDATE stays refused.
- Never pruned, whatever the cut-off: a run a *pending* approval points at
  (a person may still approve it), and every ancestor of a kept run (its
  ``parent_id`` must stay valid). A second trigger refuses to delete a run with a
  pending approval even under a permit (defence in depth).
- Decided approvals of pruned runs go with them; standing grants stay (revoke
  them with ``ringfence grants revoke``).
- One transaction: all or nothing.

The Claude Code hook's rows (issue 13) go by the same options: a ``hook_events``
row goes when it is older than ``before`` and outside the ``keep`` newest hook
events (``keep`` counts runs and hook events separately: ``--keep 1000`` keeps
1000 of each). A ``hook_asks`` row goes when none of its events stays, it is
older than ``before``, and it is not *open*. Open means unanswered (``asked``)
and younger than the consent window (``ledger.hook_rows.CONSENT_TTL``): its Post may
still come and become a grant, its ``--wrap`` consent may still be spent, so it
stays with every event of its call. An unanswered ask past the window can still
be pruned; a Post arriving after that finds no ask and grants nothing (the safe
direction). No pending approval points at hook rows (approvals point at runs).
The hook tables' DELETE triggers take the same permit (migration 7), and a
trigger refuses to delete an open ask even under it.
"""

from __future__ import annotations

import sqlite3


def candidates(conn: sqlite3.Connection, *, before: float | None,
               keep: int | None) -> tuple[list[str], int]:
    """(run ids to delete, how many older runs were kept because they must stay)."""
    rows = conn.execute("SELECT id, parent_id FROM runs "
                        "ORDER BY created_at DESC, rowid DESC").fetchall()
    created = dict(conn.execute("SELECT id, created_at FROM runs").fetchall())
    parent = {r[0]: r[1] for r in rows}
    old = set()
    for n, (run_id, _) in enumerate(rows):      # newest first: children before parents
        if keep is not None and n < keep:
            continue
        if before is not None and created[run_id] >= before:
            continue
        old.add(run_id)
    pending = {r[0] for r in conn.execute(
        "SELECT run_id FROM approvals WHERE status = 'pending'")}
    must_stay = set()
    for run_id in [r for r, _ in rows if r not in old] + sorted(pending):
        p = run_id
        while p is not None and p not in must_stay:   # the kept run and its ancestors
            must_stay.add(p)
            p = parent.get(p)
    gone = [r for r, _ in rows if r in old and r not in must_stay]
    return gone, len(old) - len(gone)


def hook_candidates(conn: sqlite3.Connection, *, before: float | None, keep: int | None,
                    now: float) -> tuple[list[int], list[tuple[str, str]], int]:
    """(hook_events seqs to delete, hook_asks (session, tool_use_id) to delete,
    how many old events were kept because their ask is still open)."""
    from ringfence.ledger.hook_rows import CONSENT_TTL

    # One second wider than the schema's trigger (hook_asks_keep_open), whose clock,
    # julianday('now'), SQLite truncates to the millisecond: an ask at the window's
    # edge is kept here rather than refused there (which would roll the prune back).
    open_calls = {(r[0], r[1]) for r in conn.execute(
        "SELECT session, tool_use_id FROM hook_asks WHERE status = 'asked' AND at > ?",
        (now - CONSENT_TTL - 1.0,))}
    gone, held, staying = [], 0, set()
    rows = conn.execute("SELECT seq, at, session, tool_use_id FROM hook_events "
                        "ORDER BY seq DESC").fetchall()
    for n, (seq, at, session, tool_use_id) in enumerate(rows):   # newest first
        call = (session, tool_use_id)
        if (keep is not None and n < keep) or (before is not None and at >= before):
            staying.add(call)
        elif call in open_calls:
            staying.add(call)
            held += 1
        else:
            gone.append(seq)
    asks = [(r[0], r[1]) for r in conn.execute(
        "SELECT session, tool_use_id, at FROM hook_asks ORDER BY at")
        if (r[0], r[1]) not in open_calls and (r[0], r[1]) not in staying
        and (before is None or r[2] < before)]
    return gone, asks, held


def _delete_hook_rows(c: sqlite3.Connection, seqs: list[int],
                      asks: list[tuple[str, str]]) -> None:
    for i in range(0, len(seqs), 500):
        chunk = seqs[i:i + 500]
        c.execute(f"DELETE FROM hook_events WHERE seq IN ({','.join('?' * len(chunk))})",
                  chunk)
    c.executemany("DELETE FROM hook_asks WHERE session = ? AND tool_use_id = ?", asks)


def prune(ledger, *, before: float | None = None, keep: int | None = None,
          dry_run: bool = False, now: float | None = None) -> dict:
    """Delete old runs and hook rows in one transaction; return what was (or would
    be) removed."""
    import time

    from ringfence.ledger.store import transaction

    if before is None and keep is None:
        raise ValueError("prune needs before or keep")
    conn = ledger.conn
    now = time.time() if now is None else now
    with transaction(conn) as c:
        gone, held = candidates(c, before=before, keep=keep)
        hook_seqs, hook_asks, hook_held = hook_candidates(c, before=before, keep=keep, now=now)
        events = 0
        if (gone or hook_seqs or hook_asks) and not dry_run:
            c.execute("INSERT INTO prune_permit VALUES ('ledger prune')")
            for i in range(0, len(gone), 500):
                chunk = gone[i:i + 500]
                marks = ",".join("?" * len(chunk))
                c.execute(f"DELETE FROM approvals WHERE run_id IN ({marks})", chunk)
                events += c.execute(f"DELETE FROM run_events WHERE run_id IN ({marks})",
                                    chunk).rowcount
                c.execute(f"DELETE FROM runs WHERE id IN ({marks})", chunk)
            _delete_hook_rows(c, hook_seqs, hook_asks)
            c.execute("DELETE FROM prune_permit")
        elif gone:
            marks = ",".join("?" * len(gone))
            events = c.execute(f"SELECT COUNT(*) FROM run_events WHERE run_id IN ({marks})",
                               gone).fetchone()[0]
    removed = gone or hook_seqs or hook_asks
    if removed and not dry_run and getattr(ledger, "path", None) not in (None, ":memory:"):
        try:
            conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        except sqlite3.Error:
            pass
    return {"runs": len(gone), "events": events, "kept_for_pending_or_children": held,
            "dry_run": dry_run, "hook_events": len(hook_seqs), "hook_asks": len(hook_asks),
            "hook_kept_for_open_asks": hook_held}


def describe(result: dict) -> str:
    """The one line `ledger prune` prints for people."""
    verb = "would delete" if result["dry_run"] else "deleted"
    held, hook_held = result["kept_for_pending_or_children"], result["hook_kept_for_open_asks"]
    text = f"{verb} {result['runs']} run(s) and {result['events']} event(s)"
    if result["hook_events"] or result["hook_asks"]:
        text += f", {result['hook_events']} hook event(s) and {result['hook_asks']} hook ask(s)"
    if held:
        text += f"; kept {held} older run(s) that a pending approval or a kept run needs"
    if hook_held:
        text += f"; kept {hook_held} hook event(s) of asks still open"
    return text
