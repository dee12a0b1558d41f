"""Standing grants: per capability KEY, never per command text (SPEC §5).

A grant for ``longbridge`` covers ``longbridge news X 2>&1 | head`` and
``longbridge quote Y | tail -5`` because both classify to the key
``longbridge``. It never covers ``./longbridge`` or ``/tmp/x/longbridge``: the
classifier keeps the path in the key, and matching here is exact string
equality, never a prefix or a glob.

Scopes:
  ``once``     nothing is stored; the approval covers one execution.
  ``session``  tied to the session name; expires after the session TTL.
  ``always``   stored until revoked.

The session is ``--session`` or ``RINGFENCE_SESSION``; without either, each
process is its own session (a fresh random name), so nothing leaks between
unrelated invocations.

Where a grant was earned (issue 20). A yes to a command that ran in a sandbox
(ringfence's, or Claude Code's own when the hook does not wrap) is a *sandbox*
grant: its key is stored with ``SANDBOX_MARK`` in front. A yes to a host request
(``run --host``, or a Claude Code call sent with ``dangerouslyDisableSandbox``)
is a *host* grant (the bare key). ``active_keys(..., place="host")`` returns host
grants only, so a yes to ``rm -f .coverage`` in a sandbox never lets
``rm -rf ~/x`` run unsandboxed; ``place="sandbox"`` returns both, unmarked.
``SANDBOX_MARK`` starts with ``[``, which no capability key can hold.

Exact grants (``session.ask_grants``: one argv, one directory, for an ask rule or
an irreversible action) are only ever stored for one session: ``always`` never
covers an ask rule.
"""

from __future__ import annotations

import os
import re
import time
from ringfence.rfcore.records import record
from collections.abc import Iterable, Mapping

from ringfence.rfcore.errors import UsageError

from ringfence.ledger.store import Ledger, new_id, transaction

SCOPES = ("once", "session", "always")
DEFAULT_SESSION_TTL = 8 * 3600.0
_UNITS = {"": 1, "s": 1, "m": 60, "h": 3600, "d": 86400}
_PROCESS_SESSION: str | None = None
SANDBOX_MARK = "[sandbox] "
PLACES = ("host", "sandbox")
# An exact grant's key (ringfence/session/ask_grants.py builds it): a JSON object,
# which no capability key can start like ("{" is fail-closed in a command name).
EXACT_PREFIX = '{"argv": '


def is_exact(key: str) -> bool:
    return key.startswith(EXACT_PREFIX)


@record
class Grant:
    key: str
    scope: str
    session: str            # "" for always
    created_at: float
    expires_at: float | None
    approval_id: str | None

    @property
    def place(self) -> str:
        """Where the yes was given: ``sandbox`` grants never cover a host request."""
        return "sandbox" if self.key.startswith(SANDBOX_MARK) else "host"

    @property
    def exact(self) -> dict | None:
        """``{"argv", "cwd"}`` of an exact grant (an ask rule's yes), else None."""
        key = self.key[len(SANDBOX_MARK):] if self.place == "sandbox" else self.key
        if not is_exact(key):
            return None
        import json

        try:
            data = json.loads(key)
        except ValueError:
            return None
        return data if isinstance(data, dict) else None

    def shown(self) -> str:
        """The capability, or ``exactly `git push origin main` (in /repo)``."""
        exact = self.exact
        key = self.key[len(SANDBOX_MARK):] if self.place == "sandbox" else self.key
        if exact is None:
            return key
        import shlex

        return f"exactly `{shlex.join(map(str, exact.get('argv', [])))}` (in {exact.get('cwd')})"

    def to_json(self) -> dict:
        return {"key": self.key, "scope": self.scope, "session": self.session or None,
                "created_at": self.created_at, "expires_at": self.expires_at,
                "approval_id": self.approval_id, "place": self.place, "exact": self.exact}


MAX_SESSION_TTL = 365 * 86400


def session_ttl(env: Mapping[str, str] | None = None) -> float:
    """RINGFENCE_SESSION_TTL: seconds, or a number with s/m/h/d. Default 8h."""
    env = os.environ if env is None else env
    raw = env.get("RINGFENCE_SESSION_TTL", "").strip()
    if not raw:
        return DEFAULT_SESSION_TTL
    m = re.fullmatch(r"(\d{1,12}(?:\.\d{1,6})?)\s*([smhd]?)", raw)
    ttl = float(m.group(1)) * _UNITS[m.group(2)] if m else 0.0
    if not 0 < ttl <= MAX_SESSION_TTL:
        raise UsageError(f"RINGFENCE_SESSION_TTL={raw[:40]!r} is not a duration from 1s to "
                         "365d; nothing was run",
                         hint="use seconds or a number with s/m/h/d, e.g. 8h")
    return ttl


def current_session(cli_value: str | None = None,
                    env: Mapping[str, str] | None = None) -> tuple[str, bool]:
    """Return (session name, named?). Unnamed sessions are private to this process."""
    global _PROCESS_SESSION
    env = os.environ if env is None else env
    name = cli_value or env.get("RINGFENCE_SESSION") or ""
    if name.strip():
        return name, True
    if _PROCESS_SESSION is None:
        _PROCESS_SESSION = new_id(f"proc-{os.getpid()}-")
    return _PROCESS_SESSION, False


def validate_scope(scope: str) -> str:
    if scope not in SCOPES:
        raise UsageError(f"unknown scope {scope!r}", hint="use once, session or always")
    return scope


def add_grants(ledger: Ledger, keys: Iterable[str], scope: str, session: str, *,
               approval_id: str | None = None, ttl: float | None = None,
               in_transaction: bool = False, place: str = "host") -> int:
    """Store grants for `keys` earned at `place`. `once` stores nothing; an exact
    grant is stored for `session` only, whatever the scope. Returns rows written."""
    validate_scope(scope)
    keys = list(dict.fromkeys(keys))
    if place not in PLACES:
        raise ValueError(f"unknown grant place {place!r}")
    if scope == "once":
        return 0
    now = time.time()
    expires = None
    if scope == "session" or any(is_exact(k) for k in keys):
        expires = now + (session_ttl() if ttl is None else ttl)
    mark = SANDBOX_MARK if place == "sandbox" else ""
    rows = []
    for k in keys:
        if is_exact(k):
            if session:      # `always` never covers an ask rule: this session only
                rows.append((mark + k, "session", session, now, expires, approval_id))
        elif scope == "session":
            rows.append((mark + k, scope, session, now, expires, approval_id))
        else:
            rows.append((mark + k, scope, "", now, None, approval_id))
    sql = "INSERT OR REPLACE INTO grants VALUES (?,?,?,?,?,?)"
    if in_transaction:
        ledger.conn.executemany(sql, rows)
    else:
        with transaction(ledger.conn) as c:
            c.executemany(sql, rows)
    return len(rows)


def active_keys(ledger: Ledger, session: str, *, now: float | None = None,
                place: str = "sandbox") -> frozenset[str]:
    """Keys granted `always`, or for `session` and not yet expired, that cover a
    request at `place`: host grants only for a host request; both for a sandbox."""
    now = time.time() if now is None else now
    rows = ledger.conn.execute(
        "SELECT key FROM grants WHERE scope='always' OR "
        "(scope='session' AND session=? AND expires_at > ?)", (session, now)).fetchall()
    n = len(SANDBOX_MARK)
    if place == "host":
        return frozenset(r[0] for r in rows if not r[0].startswith(SANDBOX_MARK))
    return frozenset(r[0][n:] if r[0].startswith(SANDBOX_MARK) else r[0] for r in rows)


def list_grants(ledger: Ledger, *, include_expired: bool = False) -> list[Grant]:
    now = time.time()
    rows = ledger.conn.execute("SELECT * FROM grants ORDER BY key, scope, session").fetchall()
    grants = [Grant(r["key"], r["scope"], r["session"], r["created_at"], r["expires_at"],
                    r["approval_id"]) for r in rows]
    return [g for g in grants if include_expired or g.expires_at is None or g.expires_at > now]


def revoke(ledger: Ledger, key: str | None = None, *, all_: bool = False) -> int:
    """Delete grants for `key` (every scope and session), or every grant."""
    if not all_ and not key:
        raise UsageError("name a capability key to revoke, or pass --all")
    from ringfence.ledger.store import storable

    key = storable(key)
    with transaction(ledger.conn) as c:
        if all_:
            return c.execute("DELETE FROM grants").rowcount
        return c.execute("DELETE FROM grants WHERE key IN (?, ?)",
                         (key, SANDBOX_MARK + key)).rowcount
