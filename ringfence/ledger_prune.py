"""`ringfence ledger prune`: the one way rows ever leave the append-only ledger.

Design (issue 14 §10):
- The ``runs``/``run_events`` DELETE triggers (ledger_schema migration 4) refuse every delete
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


def prune(ledger, *, before: float | None = None, keep: int | None = None,
          dry_run: bool = False) -> dict:
    """Delete old runs in one transaction; return what was (or would be) removed."""
    from ringfence.ledger import transaction

    if before is None and keep is None:
        raise ValueError("prune needs before or keep")
    conn = ledger.conn
    with transaction(conn) as c:
        gone, held = candidates(c, before=before, keep=keep)
        events = 0
        if gone and not dry_run:
            c.execute("INSERT INTO prune_permit VALUES ('ledger prune')")
            for i in range(0, len(gone), 500):
                chunk = gone[i:i + 500]
                marks = ",".join("?" * len(chunk))
                c.execute(f"DELETE FROM approvals WHERE run_id IN ({marks})", chunk)
                events += c.execute(f"DELETE FROM run_events WHERE run_id IN ({marks})",
                                    chunk).rowcount
                c.execute(f"DELETE FROM runs WHERE id IN ({marks})", chunk)
            c.execute("DELETE FROM prune_permit")
        elif gone:
            marks = ",".join("?" * len(gone))
            events = c.execute(f"SELECT COUNT(*) FROM run_events WHERE run_id IN ({marks})",
                               gone).fetchone()[0]
    if gone and not dry_run and getattr(ledger, "path", None) not in (None, ":memory:"):
        try:
            conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        except sqlite3.Error:
            pass
    return {"runs": len(gone), "events": events, "kept_for_pending_or_children": held,
            "dry_run": dry_run}
