"""The ledger's schema: migrations, applied in order by ``ledger.migrate``.

Each migration is one function, applied in ONE transaction; a new one goes at
the END of ``MIGRATIONS`` (the version is its position). Append-only is enforced
by triggers: UPDATE and DELETE on ``runs``/``run_events`` abort, except DELETE
inside `ledger prune`'s transaction (migration 4, see ``ledger.prune``); the
same holds for ``hook_events`` and the DELETE of ``hook_asks`` (migration 7).
"""

from __future__ import annotations

TYPE_CHECKING = False   # typing.TYPE_CHECKING without importing typing (hot path)
if TYPE_CHECKING:   # annotations only: the ledger opens connections (``_sqlite3``)
    import sqlite3


def _m1_runs(c: sqlite3.Connection) -> None:
    c.execute("""CREATE TABLE runs (
        id TEXT PRIMARY KEY, created_at REAL NOT NULL, kind TEXT NOT NULL,
        profile TEXT, spec_digest TEXT, workspace TEXT, cwd TEXT,
        command TEXT NOT NULL, argv TEXT, verdict TEXT, decision TEXT,
        session TEXT, parent_id TEXT REFERENCES runs(id))""")
    c.execute("""CREATE TABLE run_events (
        run_id TEXT NOT NULL REFERENCES runs(id), seq INTEGER NOT NULL,
        state TEXT NOT NULL, at REAL NOT NULL, pid INTEGER, pid_start TEXT,
        exit_code INTEGER, duration REAL, stdout_tail TEXT, stderr_tail TEXT,
        changes TEXT, network TEXT, degradations TEXT, approval_id TEXT, note TEXT,
        PRIMARY KEY (run_id, seq))""")
    for table in ("runs", "run_events"):
        for op in ("UPDATE", "DELETE"):
            c.execute(f"""CREATE TRIGGER {table}_no_{op.lower()} BEFORE {op} ON {table}
                BEGIN SELECT RAISE(ABORT, '{table} are append-only'); END""")


def _m2_approvals(c: sqlite3.Connection) -> None:
    c.execute("""CREATE TABLE approvals (
        id TEXT PRIMARY KEY, run_id TEXT NOT NULL REFERENCES runs(id),
        created_at REAL NOT NULL, command TEXT NOT NULL, argv TEXT,
        keys TEXT NOT NULL, verdict_class TEXT NOT NULL, reasons TEXT NOT NULL,
        where_ TEXT NOT NULL, profile TEXT, profile_source TEXT,
        profile_digest TEXT, workspace TEXT, cwd TEXT, session TEXT,
        status TEXT NOT NULL DEFAULT 'pending', scope TEXT,
        decided_at REAL, decided_by TEXT, decided_session TEXT)""")
    c.execute("CREATE INDEX approvals_status ON approvals(status)")
    c.execute("""CREATE TABLE grants (
        key TEXT NOT NULL, scope TEXT NOT NULL, session TEXT NOT NULL,
        created_at REAL NOT NULL, expires_at REAL, approval_id TEXT,
        PRIMARY KEY (key, scope, session))""")


def _m3_event_index(c: sqlite3.Connection) -> None:
    c.execute("CREATE INDEX run_events_state ON run_events(state)")
    c.execute("CREATE INDEX runs_created ON runs(created_at)")


def _m4_prune_path(c: sqlite3.Connection) -> None:
    """Migration 4: DELETE on runs/run_events only through a prune permit; the
    ``outcome`` column of run events."""
    c.execute("CREATE TABLE prune_permit (token TEXT PRIMARY KEY)")
    for table in ("runs", "run_events"):
        c.execute(f"DROP TRIGGER {table}_no_delete")
        c.execute(f"""CREATE TRIGGER {table}_no_delete BEFORE DELETE ON {table}
            WHEN NOT EXISTS (SELECT 1 FROM prune_permit)
            BEGIN SELECT RAISE(ABORT, '{table} are append-only (only ledger prune deletes)');
            END""")
    c.execute("""CREATE TRIGGER runs_keep_pending BEFORE DELETE ON runs
        WHEN EXISTS (SELECT 1 FROM approvals WHERE run_id = OLD.id AND status = 'pending')
        BEGIN SELECT RAISE(ABORT, 'a run waiting for approval is never pruned'); END""")
    c.execute("CREATE INDEX IF NOT EXISTS runs_parent ON runs(parent_id)")
    # Why a run ended, where the state alone does not say: "timeout", "signal".
    c.execute("ALTER TABLE run_events ADD COLUMN outcome TEXT")
    c.execute("CREATE INDEX IF NOT EXISTS approvals_run ON approvals(run_id)")


def _m5_approval_identity(c: sqlite3.Connection) -> None:
    # Issue 10 §5: an approval binds to the identity (st_dev:st_ino) of its working
    # directory and workspace. Requests recorded before this have NULL here, and
    # `approve` refuses them (it cannot tell whether the directory was swapped).
    c.execute("ALTER TABLE approvals ADD COLUMN cwd_id TEXT")
    c.execute("ALTER TABLE approvals ADD COLUMN workspace_id TEXT")


def _m6_hook(c: sqlite3.Connection) -> None:
    """Claude Code hook decisions (append-only) and the asks they wait on (issue 13).

    ``hook_asks`` binds a PreToolUse ``ask`` to its Claude session and
    ``tool_use_id``, the exact command text (and its --wrap rewrite), the verdict
    and its keys; the matching Post event turns it into an approval. A --wrap
    consent token is stored only as its sha256 and is spent by one run."""
    c.execute("""CREATE TABLE hook_events (
        seq INTEGER PRIMARY KEY AUTOINCREMENT, at REAL NOT NULL, event TEXT NOT NULL,
        session TEXT, tool_use_id TEXT, tool_name TEXT, command TEXT, decision TEXT,
        reasons TEXT, verdict TEXT, keys TEXT, profile TEXT, workspace TEXT, note TEXT)""")
    c.execute("CREATE INDEX hook_events_at ON hook_events(at)")
    for op in ("UPDATE", "DELETE"):
        c.execute(f"""CREATE TRIGGER hook_events_no_{op.lower()} BEFORE {op} ON hook_events
            BEGIN SELECT RAISE(ABORT, 'hook_events are append-only'); END""")
    c.execute("""CREATE TABLE hook_asks (
        session TEXT NOT NULL, tool_use_id TEXT NOT NULL, at REAL NOT NULL,
        rf_session TEXT NOT NULL, command TEXT NOT NULL, wrapped TEXT, run_text TEXT,
        verdict TEXT NOT NULL, keys TEXT NOT NULL, grant_scope TEXT NOT NULL,
        profile TEXT, consent TEXT, consent_used REAL,
        status TEXT NOT NULL DEFAULT 'asked', decided_at REAL,
        PRIMARY KEY (session, tool_use_id))""")
    c.execute("CREATE INDEX hook_asks_consent ON hook_asks(consent)")


# The --wrap consent window (ledger.hook_rows.CONSENT_TTL) when migration 7 was written:
# an unanswered ask younger than this is "open" and never pruned. A new window
# needs a new migration that replaces the trigger.
_OPEN_ASK_SECONDS = 15 * 60


def _m7_prune_hook(c: sqlite3.Connection) -> None:
    """Migration 7: `ledger prune` removes old hook rows (issue 13): DELETE on
    ``hook_events`` and ``hook_asks`` only through a prune permit, as for runs
    (migration 4); an open ask (unanswered, inside the consent window) never."""
    c.execute("DROP TRIGGER hook_events_no_delete")
    for table in ("hook_events", "hook_asks"):
        c.execute(f"""CREATE TRIGGER {table}_no_delete BEFORE DELETE ON {table}
            WHEN NOT EXISTS (SELECT 1 FROM prune_permit)
            BEGIN SELECT RAISE(ABORT, '{table} are append-only (only ledger prune deletes)');
            END""")
    # INSERT OR REPLACE (ledger.hook_rows.remember_ask refreshing an open ask) fires no
    # delete trigger: recursive_triggers is off.
    c.execute(f"""CREATE TRIGGER hook_asks_keep_open BEFORE DELETE ON hook_asks
        WHEN OLD.status = 'asked'
             AND OLD.at > (julianday('now') - 2440587.5) * 86400.0 - {_OPEN_ASK_SECONDS}
        BEGIN SELECT RAISE(ABORT, 'an open hook ask is never pruned'); END""")
    c.execute("CREATE INDEX hook_events_call ON hook_events(session, tool_use_id)")


def _m8_session(c: sqlite3.Connection) -> None:
    """Migration 8 (issue 24): the Session's deferred decisions and full outputs.

    ``decisions``: a person's answer to a pending approval recorded WITHOUT running
    it (``approve --defer``, ``Session.decide``, an MCP form); whoever waits on the
    request runs it (``Session.resume``) and gets its output. ``outputs``: that
    output, whole up to the Session's cap, so a caller that resumes again (or a
    new process after a crash) gets it back instead of a 4 KiB tail. Both go with
    their approval or run when ``ledger prune`` removes it (ON DELETE CASCADE).
    Written IF NOT EXISTS (idempotent)."""
    c.execute("""CREATE TABLE IF NOT EXISTS decisions (
        approval_id TEXT PRIMARY KEY REFERENCES approvals(id) ON DELETE CASCADE,
        decision TEXT NOT NULL, decided_at REAL NOT NULL, decided_by TEXT,
        session TEXT, via TEXT)""")
    c.execute("""CREATE TABLE IF NOT EXISTS outputs (
        run_id TEXT PRIMARY KEY REFERENCES runs(id) ON DELETE CASCADE,
        approval_id TEXT, at REAL NOT NULL, stdout BLOB, stderr BLOB,
        truncated INTEGER NOT NULL DEFAULT 0)""")


def _m9_hook_defer(c: sqlite3.Connection) -> None:
    """Migration 9 (issue 20 §8): a hook ask answered ``defer`` (``hook claude-code
    --headless``) is also a pending approval (``where_ = 'claude-code'``): ``approval_id``
    links the two, so ``ringfence approve``/``deny`` in another process decide it
    and the resumed call's PreToolUse finds the decision."""
    c.execute("ALTER TABLE hook_asks ADD COLUMN approval_id TEXT")
    c.execute("CREATE INDEX hook_asks_approval ON hook_asks(approval_id)")


MIGRATIONS = (_m1_runs, _m2_approvals, _m3_event_index, _m4_prune_path,
              _m5_approval_identity, _m6_hook, _m7_prune_hook,
              _m8_session, _m9_hook_defer)
