"""The run ledger: SQLite (stdlib sqlite3), WAL, versioned migrations, append-only runs.

Every run, refusal and host execution gets one ``runs`` row that is never
rewritten. What happens to the run afterwards is appended to ``run_events``; the
current state of a run is its latest event. Append-only is enforced by the
database itself (triggers), not by convention, so a bug elsewhere cannot
quietly rewrite history.

States (SPEC §5): ``completed``, ``failed``, ``waiting_for_approval``,
``denied``, ``aborted``, ``sandbox_error``, plus the transient ``running``.
``waiting_for_approval`` is a resting state: a run waiting for a person is never
reported as stopped, failed or aborted. Only ``running`` is transient: when its
process is gone (SIGKILL, power loss) the run is *reported* ``aborted``, and the
next open of the ledger appends the ``aborted`` event for it. A ``running`` with no
pid has no process of ours to watch: run by Claude Code, it ends as ``hook_defer`` says.

The database is injectable: a path, an open ``sqlite3.Connection`` or
``":memory:"``; by default ``$RINGFENCE_HOME/ledger.db``, else
``$XDG_STATE_HOME/ringfence/ledger.db`` (``~/.local/state/ringfence``).
"""

from __future__ import annotations

import json
import os
import time
from contextlib import contextmanager
from collections.abc import Iterator, Mapping

from ringfence.rfcore.records import field, record

TYPE_CHECKING = False   # typing.TYPE_CHECKING without importing typing (hot path)
if TYPE_CHECKING:
    from pathlib import Path

try:
    # The C module the ``sqlite3`` package wraps: the package only adds the
    # (deprecated) datetime adapters, and ``import datetime`` with it was ~2 ms
    # of every hook call. Same classes, same exceptions (sqlite3 re-exports them).
    import _sqlite3 as sqlite3
except ImportError:  # pragma: no cover - an interpreter without the C module's name
    import sqlite3

from ringfence.rfcore.errors import LedgerError
from ringfence.rfcore.procs import alive as _alive
from ringfence.rfcore.procs import proc_start as _proc_start

STATES = ("completed", "failed", "waiting_for_approval", "denied", "aborted",
          "sandbox_error", "limit", "running")
FINAL_STATES = ("completed", "failed", "denied", "aborted", "sandbox_error", "limit")
TRANSIENT_STATES = ("running",)
TAIL_BYTES = 4096
BUSY_TIMEOUT_MS = 15000
_ALPHABET = "abcdefghijklmnopqrstuvwxyz234567"   # base32, lower case


def new_id(prefix: str) -> str:
    """A short unguessable id: prefix + 10 base32 chars (50 bits from the OS CSPRNG).

    os.urandom is what ``secrets`` draws from; importing ``secrets`` (hmac,
    base64, random) cost ~1.5 ms of every run. 32 symbols divide 256, so
    ``byte % 32`` is uniform: no modulo bias.
    """
    return prefix + "".join(_ALPHABET[b % 32] for b in os.urandom(10))


def state_dir(env: Mapping[str, str] | None = None) -> Path:
    from pathlib import Path

    return Path(_state_dir(env))


def default_path(env: Mapping[str, str] | None = None) -> Path:
    return state_dir(env) / "ledger.db"


def _state_dir(env: Mapping[str, str] | None) -> str:
    # A str: the hook opens the ledger on every call and never imports pathlib.
    from ringfence.rfcore.paths import state_dir

    return str(state_dir(env))


# --- migrations (ringfence/ledger/migrations.py): each applied in ONE transaction -----

from ringfence.ledger.migrations import MIGRATIONS  # noqa: E402


def migrate(conn: sqlite3.Connection, upto: int | None = None) -> int:
    """Apply pending migrations, each in its own IMMEDIATE transaction.

    The version is read again inside the transaction, so two processes opening a
    fresh ledger at once never apply a migration twice.
    """
    target = len(MIGRATIONS) if upto is None else upto
    while True:
        with transaction(conn):
            version = conn.execute("PRAGMA user_version").fetchone()[0]
            if version > len(MIGRATIONS):
                raise LedgerError(f"ledger schema v{version} is newer than this "
                                  f"ringfence (v{len(MIGRATIONS)})",
                                  hint="upgrade ringfence, or point RINGFENCE_HOME elsewhere")
            if version >= target:
                return version
            MIGRATIONS[version](conn)
            conn.execute(f"PRAGMA user_version = {version + 1}")


@contextmanager
def transaction(conn: sqlite3.Connection) -> Iterator[sqlite3.Connection]:
    """BEGIN IMMEDIATE ... COMMIT, or ROLLBACK on any error: all writes are atomic."""
    try:
        conn.execute("BEGIN IMMEDIATE")
    except sqlite3.Error as exc:
        raise LedgerError(f"ledger is busy or unwritable: {exc}") from exc
    try:
        yield conn
        conn.execute("COMMIT")
    except BaseException as exc:
        try:
            conn.execute("ROLLBACK")
        except sqlite3.Error:
            pass                # the failed COMMIT already rolled back
        raise     # sqlite3.Error: the CLI says it as one line (rfcore.errors.ledger_write_error)


def tail(data: bytes | str | None, limit: int = TAIL_BYTES) -> str | None:
    if data is None:
        return None
    if isinstance(data, bytes):
        data = data[-limit:].decode("utf-8", "replace")
    return data[-limit:]


# --- records ---------------------------------------------------------------------

# ``outcome`` (migration 4) says why a run ended where the state alone does not:
# "timeout" (the wall-clock limit killed it; state aborted, exit 124) or "signal".
_RESULT_FIELDS = ("exit_code", "duration", "stdout_tail", "stderr_tail", "changes",
                  "network", "degradations", "outcome")
_JSON_FIELDS = ("changes", "network", "degradations")


@record(frozen=False)
class RunRecord:
    id: str
    created_at: float
    kind: str                       # "sandbox" | "host"
    command: str
    profile: str | None = None
    spec_digest: str | None = None
    workspace: str | None = None
    cwd: str | None = None
    argv: list[str] | None = None
    verdict: dict | None = None
    decision: dict | None = None
    session: str | None = None
    parent_id: str | None = None
    events: list[dict] = field(default_factory=list)
    approvals: list[dict] = field(default_factory=list)
    children: list[str] = field(default_factory=list)

    @property
    def state(self) -> str:
        """The latest event's state; a dead `running` (with a pid) reads as `aborted`."""
        last = self.events[-1] if self.events else None
        if last is None:
            return "aborted"
        if (last["state"] in TRANSIENT_STATES and last["pid"] is not None
                and not _alive(last["pid"], last["pid_start"])):
            return "aborted"
        return last["state"]

    def result(self, name: str) -> object:
        """The latest non-null value of a result field across the events."""
        for event in reversed(self.events):
            if event.get(name) is not None:
                return event[name]
        return None

    def to_json(self) -> dict:
        out = {k: getattr(self, k) for k in (
            "id", "created_at", "kind", "profile", "spec_digest", "workspace", "cwd",
            "command", "argv", "verdict", "decision", "session", "parent_id")}
        out["state"] = self.state
        out.update({k: self.result(k) for k in _RESULT_FIELDS})
        out["approvals"] = self.approvals
        out["children"] = self.children
        out["events"] = [{k: v for k, v in e.items() if k not in ("run_id", "pid_start")}
                         for e in self.events]
        return out


class Ledger:
    """One open ledger. Thread-unsafe by design: one per process/thread."""

    def __init__(self, db: str | os.PathLike | sqlite3.Connection | None = None, *,
                 env: Mapping[str, str] | None = None, recover: bool = True) -> None:
        if isinstance(db, sqlite3.Connection):
            self.conn = db
            self.path = None
        else:
            path = os.path.join(_state_dir(env), "ledger.db") if db is None else db
            self.path = str(path)
            try:
                if self.path != ":memory:":
                    os.makedirs(os.path.dirname(os.path.abspath(self.path)), mode=0o700,
                                exist_ok=True)
                    # Commands and output tails can hold secrets: owner-only from
                    # birth (sqlite gives -wal/-shm the same mode).
                    os.close(os.open(self.path, os.O_CREAT | os.O_RDWR, 0o600))
                self.conn = sqlite3.connect(self.path, timeout=BUSY_TIMEOUT_MS / 1000,
                                            isolation_level=None)
            except (OSError, sqlite3.Error) as exc:
                raise LedgerError(f"cannot open ledger {self.path}: {exc}",
                                  hint="set RINGFENCE_HOME to a writable directory") from exc
        self.conn.isolation_level = None   # explicit transactions only
        self.conn.row_factory = sqlite3.Row
        try:
            self.conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
            self.conn.execute("PRAGMA journal_mode = WAL")
            self.conn.execute("PRAGMA synchronous = NORMAL")
            self.conn.execute("PRAGMA foreign_keys = ON")
            migrate(self.conn)
            if recover:
                self.recover()
        except sqlite3.DatabaseError as exc:
            if "disk I/O" in str(exc) or "full" in str(exc):
                from ringfence.rfcore.errors import ledger_write_error
                raise ledger_write_error(exc, self.path) from exc
            raise LedgerError(f"ledger {self.path or '(connection)'} is unusable: {exc}") from exc

    def close(self) -> None:
        self.conn.close()

    def __enter__(self) -> "Ledger":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # --- writes ---

    def start_run(self, *, kind: str, command: str, state: str, argv=None,
                  profile: str | None = None, spec_digest: str | None = None,
                  workspace: str | None = None, cwd: str | None = None,
                  verdict: dict | None = None, decision: dict | None = None,
                  session: str | None = None, parent_id: str | None = None,
                  **event: object) -> str:
        """Insert the run row and its first event in one transaction; return the id."""
        run_id = new_id("run_")
        with transaction(self.conn) as c:
            c.execute("INSERT INTO runs VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)", (
                run_id, time.time(), kind, profile, spec_digest, storable(workspace),
                storable(cwd), storable(command),
                _dump(list(argv) if argv is not None else None), _dump(verdict),
                _dump(decision), session, parent_id))
            self._append(c, run_id, state, event)
        return run_id

    def append_event(self, run_id: str, state: str, **event: object) -> int:
        with transaction(self.conn) as c:
            return self._append(c, run_id, state, event)

    def append_event_tx(self, conn: sqlite3.Connection, run_id: str, state: str,
                        **event: object) -> int:
        """Append an event inside a transaction the caller already holds."""
        return self._append(conn, run_id, state, event)

    def _append(self, c: sqlite3.Connection, run_id: str, state: str,
                event: dict[str, object]) -> int:
        if state not in STATES:
            raise LedgerError(f"unknown run state {state!r}")
        unknown = set(event) - set(_RESULT_FIELDS) - {"approval_id", "note", "pid"}
        if unknown:
            raise LedgerError(f"unknown run event fields: {sorted(unknown)}")
        seq = c.execute("SELECT COALESCE(MAX(seq), 0) + 1 FROM run_events WHERE run_id=?",
                        (run_id,)).fetchone()[0]
        pid = event.get("pid", os.getpid()) if state in TRANSIENT_STATES else None
        values = {k: event.get(k) for k in _RESULT_FIELDS}
        from ringfence.ledger.changeset import pack_changes   # run events only, never the hook

        values["changes"] = pack_changes(values["changes"])
        for k in _JSON_FIELDS:
            values[k] = _dump(values[k])
        c.execute("""INSERT INTO run_events (run_id, seq, state, at, pid, pid_start,
            exit_code, duration, stdout_tail, stderr_tail, changes, network, degradations,
            approval_id, note, outcome) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)""", (
            run_id, seq, state, time.time(), pid, _proc_start(pid) if pid else None,
            values["exit_code"], values["duration"], tail(event.get("stdout_tail")),
            tail(event.get("stderr_tail")), values["changes"], values["network"],
            values["degradations"], event.get("approval_id"), event.get("note"),
            values["outcome"]))
        return seq

    def recover(self) -> list[str]:
        """Append `aborted` to every run whose latest event is a dead `running`."""
        rows = self.conn.execute("""SELECT e.run_id, e.pid, e.pid_start FROM run_events e
            WHERE e.state IN ('running') AND e.pid IS NOT NULL AND e.seq = (SELECT
            MAX(seq) FROM run_events WHERE run_id = e.run_id)""").fetchall()
        dead = [r["run_id"] for r in rows if not _alive(r["pid"], r["pid_start"])]
        if not dead:
            return []
        with transaction(self.conn) as c:
            for run_id in dead:
                last = c.execute("SELECT state FROM run_events WHERE run_id=? "
                                 "ORDER BY seq DESC LIMIT 1", (run_id,)).fetchone()
                if last["state"] == "running":   # re-checked under the write lock
                    self._append(c, run_id, "aborted",
                                 {"note": "the process running it died (killed or crashed)"})
        return dead

    # --- reads ---

    def get_run(self, run_id: str) -> RunRecord | None:
        run_id = storable(run_id)
        row = self.conn.execute("SELECT * FROM runs WHERE id=?", (run_id,)).fetchone()
        return self._record(row) if row else None

    def list_runs(self, limit: int | None = 50, *, state: str | None = None,
                  session: str | None = None, since: float | None = None) -> list[RunRecord]:
        """Newest first; ``state`` is the reported state (a dead `running` is `aborted`)."""
        where, args = [], []
        if session is not None:
            where.append("session = ?")
            args.append(storable(session))
        if since is not None:
            where.append("created_at >= ?")
            args.append(since)
        sql = ("SELECT * FROM runs" + (" WHERE " + " AND ".join(where) if where else "")
               + " ORDER BY created_at DESC, rowid DESC")
        if state is None:
            rows = self.conn.execute(sql + (" LIMIT ?" if limit else ""),
                                     (*args, limit) if limit else args).fetchall()
            return [self._record(r) for r in rows]
        out = []
        for row in self.conn.execute(sql, args):
            rec = self._record(row)
            if rec.state == state:
                out.append(rec)
                if limit and len(out) >= limit:
                    break
        return out

    def export(self) -> Iterator[dict]:
        for row in self.conn.execute("SELECT * FROM runs ORDER BY created_at, rowid").fetchall():
            yield self._record(row).to_json()

    def _record(self, row: sqlite3.Row) -> RunRecord:
        rec = RunRecord(id=row["id"], created_at=row["created_at"], kind=row["kind"],
                        command=row["command"], profile=row["profile"],
                        spec_digest=row["spec_digest"], workspace=row["workspace"],
                        cwd=row["cwd"], argv=_load(row["argv"]), verdict=_load(row["verdict"]),
                        decision=_load(row["decision"]), session=row["session"],
                        parent_id=row["parent_id"])
        for e in self.conn.execute("SELECT * FROM run_events WHERE run_id=? ORDER BY seq",
                                   (rec.id,)):
            event = dict(e)
            for k in _JSON_FIELDS:
                event[k] = _load(event[k])
            from ringfence.ledger.changeset import unpack_changes

            event["changes"] = unpack_changes(event["changes"])
            rec.events.append(event)
        rec.approvals = [dict(a) for a in self.conn.execute(
            "SELECT id, status, scope, where_ AS 'where', created_at, decided_at, decided_by "
            "FROM approvals WHERE run_id=? ORDER BY created_at", (rec.id,))]
        rec.children = [r[0] for r in self.conn.execute(
            "SELECT id FROM runs WHERE parent_id=? ORDER BY created_at", (rec.id,))]
        return rec


def storable(text: str | None) -> str | None:
    """Text sqlite can store: undecodable bytes (surrogate escapes, from a non-UTF-8
    argv) become visible backslash escapes instead of an encoding error. Used for
    everything a user or a command can put into the ledger, and for lookups."""
    if text is None:
        return None
    try:
        text.encode("utf-8")
        return text
    except UnicodeEncodeError:
        return text.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")


def _dump(value: object) -> str | None:
    if value is None:
        return None
    from ringfence.ledger.changeset import json_default

    return json.dumps(value, sort_keys=True, default=json_default)


def _load(text: str | None) -> object:
    return None if text is None else json.loads(text)


def open_ledger(db: str | os.PathLike | sqlite3.Connection | None = None, *,
                env: Mapping[str, str] | None = None) -> Ledger:
    return Ledger(db, env=env)
