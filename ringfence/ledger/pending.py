"""Pending approvals: a request that waits for a person (SPEC §5).

An approval records everything needed to execute the request later, exactly
where it was asked for: on the ``host`` (``bash -c`` in the recorded cwd) or in
the ``sandbox`` (same profile and workspace) when a profile's ``ask`` rule held
a sandboxed run back.

Claiming is atomic across processes: ``BEGIN IMMEDIATE`` takes the write lock,
and ``UPDATE ... WHERE status='pending'`` must change exactly one row. Two
concurrent ``ringfence approve`` calls therefore execute the command once; the
loser gets :class:`ApprovalError` (exit 2), never a second run. Grants for a
``session``/``always`` approval are written in the same transaction as the
claim, so a crash cannot leave a grant without its approval or the reverse.
"""

from __future__ import annotations

import json
import os
import shlex
import stat
import time
from ringfence.rfcore.records import record

from ringfence.rfcore.errors import ApprovalError, RingfenceError

from ringfence.ledger.grants import add_grants, validate_scope
from ringfence.ledger.store import Ledger, new_id, transaction

# "stage": a sandboxed run's changes to host-obeyed files, held in its stage until
# a person applies (approve) or drops (deny) them (ringfence/session/held.py).
# "claude-code": a Claude Code call the hook deferred (``hook claude-code --headless``):
# decided here, run by Claude Code when its caller resumes (ledger/hook_defer.py).
WHERE = ("host", "sandbox", "stage", "claude-code")


@record
class Approval:
    id: str
    run_id: str
    created_at: float
    command: str
    argv: tuple[str, ...] | None
    keys: tuple[str, ...]
    verdict_class: str
    reasons: tuple[str, ...]
    where: str
    profile: str | None
    profile_source: str | None
    profile_digest: str | None
    workspace: str | None
    cwd: str | None
    session: str | None
    status: str = "pending"
    scope: str | None = None
    decided_at: float | None = None
    decided_by: str | None = None
    # What the person saw, besides the command and the profile: the identity
    # ("st_dev:st_ino") of the working directory and of the workspace at request
    # time. `approve` refuses when either changed (a directory swapped for a
    # symlink, say), so an approved `rm -rf build` cannot run somewhere else.
    cwd_id: str | None = None
    workspace_id: str | None = None

    @property
    def grantable(self) -> bool:
        """One-time requests are never covered by a standing grant."""
        return self.verdict_class == "capability" and bool(self.keys)

    def age(self, now: float | None = None) -> float:
        return (time.time() if now is None else now) - self.created_at

    def to_json(self) -> dict:
        return {"id": self.id, "run_id": self.run_id, "created_at": self.created_at,
                "command": self.command, "argv": list(self.argv) if self.argv else None,
                "capabilities": list(self.keys), "verdict": self.verdict_class,
                "reasons": list(self.reasons), "where": self.where, "profile": self.profile,
                "workspace": self.workspace, "cwd": self.cwd, "session": self.session,
                "age_seconds": round(self.age(), 1),
                "status": self.status, "scope": self.scope, "decided_at": self.decided_at,
                "decided_by": self.decided_by, "cwd_identity": self.cwd_id,
                "workspace_identity": self.workspace_id}


def _from_row(r) -> Approval:
    argv = json.loads(r["argv"]) if r["argv"] else None
    return Approval(r["id"], r["run_id"], r["created_at"], r["command"],
                    tuple(argv) if argv is not None else None, tuple(json.loads(r["keys"])),
                    r["verdict_class"], tuple(json.loads(r["reasons"])), r["where_"],
                    r["profile"], r["profile_source"], r["profile_digest"], r["workspace"],
                    r["cwd"], r["session"], r["status"], r["scope"], r["decided_at"],
                    r["decided_by"], r["cwd_id"], r["workspace_id"])


def dir_identity(path: str | None) -> str | None:
    """"st_dev:st_ino" of the directory ``path`` names now, None if it is none."""
    if not path:
        return None
    try:
        st = os.stat(path)
    except OSError:
        return None
    return f"{st.st_dev}:{st.st_ino}" if stat.S_ISDIR(st.st_mode) else None


def create(ledger: Ledger, *, run_id: str, command: str, keys, verdict_class: str,
           reasons, where: str, argv=None, profile: str | None = None,
           profile_source: str | None = None, profile_digest: str | None = None,
           workspace: str | None = None, cwd: str | None = None,
           session: str | None = None) -> Approval:
    if where not in WHERE:
        raise ApprovalError(f"an approval runs on 'host' or in 'sandbox', not {where!r}")
    from ringfence.ledger.store import storable

    approval_id = new_id("ap_")
    cwd_id, workspace_id = dir_identity(cwd), dir_identity(workspace)
    # a held path that is not UTF-8 (a name of any bytes) is kept as visible escapes
    command, workspace, cwd = storable(command), storable(workspace), storable(cwd)
    profile_source = storable(profile_source)
    with transaction(ledger.conn) as c:
        c.execute("""INSERT INTO approvals (id, run_id, created_at, command, argv, keys,
            verdict_class, reasons, where_, profile, profile_source, profile_digest,
            workspace, cwd, session, cwd_id, workspace_id)
            VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)""", (
            approval_id, run_id, time.time(), command,
            json.dumps(list(argv)) if argv is not None else None, json.dumps(list(keys)),
            verdict_class, json.dumps(list(reasons)), where, profile, profile_source,
            profile_digest, workspace, cwd, session, cwd_id, workspace_id))
    return get(ledger, approval_id)


def get(ledger: Ledger, approval_id: str) -> Approval:
    from ringfence.ledger.store import storable

    approval_id = storable(approval_id)
    row = ledger.conn.execute("SELECT * FROM approvals WHERE id=?", (approval_id,)).fetchone()
    if row is None:
        raise ApprovalError(f"no approval {approval_id!r}",
                            hint="see pending requests with 'ringfence approvals list'")
    return _from_row(row)


def get_or_for_run(ledger: Ledger, ident: str) -> Approval:
    """An approval by its id, or a run's pending held changes by the RUN id."""
    if not ident.startswith("run_"):
        return get(ledger, ident)
    from ringfence.ledger.store import storable

    row = ledger.conn.execute("SELECT * FROM approvals WHERE run_id=? AND where_='stage' "
                              "ORDER BY (status='pending') DESC, created_at DESC LIMIT 1",
                              (storable(ident),)).fetchone()
    if row is None:
        raise ApprovalError(f"run {ident!r} has no held changes",
                            hint="see pending requests with 'ringfence approvals list'")
    return _from_row(row)


def pending(ledger: Ledger) -> list[Approval]:
    rows = ledger.conn.execute("SELECT * FROM approvals WHERE status='pending' "
                               "ORDER BY created_at").fetchall()
    return [_from_row(r) for r in rows]


def decided_error(a: Approval) -> ApprovalError:
    when = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(a.decided_at or 0))
    if a.status == "expired":     # a deferred Claude Code call (ledger/hook_defer.py)
        return ApprovalError(f"approval {a.id} expired at {when}: not decided, or its "
                             "decision not used, within 15 minutes; nothing was decided",
                             hint="resume the Claude Code session: the call is deferred "
                                  "again under a new approval id")
    return ApprovalError(f"approval {a.id} was already {a.status} "
                         f"(by {a.decided_by or '?'} at {when}); nothing was run again",
                         hint="run the command again to create a new request")


def claim(ledger: Ledger, approval_id: str, *, scope: str, session: str,
          ttl: float | None = None, on_claim=None, grant_keys=None,
          place: str | None = None) -> Approval:
    """Atomically move a pending approval to `approved` and store its grants.

    `on_claim(conn, approval)` runs inside the same transaction (the governor
    appends the resume's `running` event there), so the claim, the grants and
    the event commit together or not at all. `place`: where the yes was given
    (default: ``host`` for a host request, else ``sandbox``; a deferred hook call
    says where it runs).
    """
    validate_scope(scope)
    with transaction(ledger.conn) as c:
        a = get(ledger, approval_id)
        if a.status != "pending":
            raise decided_error(a)
        if scope != "once" and not a.grantable:
            raise ApprovalError(
                f"approval {a.id} is a one-time request ({a.verdict_class}); "
                f"no standing grant may cover it, so --scope {scope} is refused",
                hint=f"approve it for this execution only: ringfence approve {a.id} --scope once")
        cur = c.execute("UPDATE approvals SET status='approved', scope=?, decided_at=?, "
                        "decided_by=?, decided_session=? WHERE id=? AND status='pending'",
                        (scope, time.time(), _who(), session, a.id))
        if cur.rowcount != 1:   # cannot happen under the IMMEDIATE lock; fail closed anyway
            raise decided_error(get(ledger, approval_id))
        # grant_keys: what the yes may grant (gate.grant_items: an ask rule's or an
        # irreversible action's yes grants its exact argv for the session only).
        # Where it was approved decides the place: a sandbox yes never covers the host.
        add_grants(ledger, a.keys if grant_keys is None else grant_keys, scope, session,
                   approval_id=a.id, ttl=ttl, in_transaction=True,
                   place=place or ("host" if a.where == "host" else "sandbox"))
        claimed = get(ledger, approval_id)
        if on_claim is not None:
            on_claim(c, claimed)
    return claimed


def deny(ledger: Ledger, approval_id: str, *, on_deny=None) -> Approval:
    with transaction(ledger.conn) as c:
        a = get(ledger, approval_id)
        if a.status != "pending":
            raise decided_error(a)
        c.execute("UPDATE approvals SET status='denied', decided_at=?, decided_by=? "
                  "WHERE id=? AND status='pending'", (time.time(), _who(), a.id))
        denied = get(ledger, approval_id)
        if on_deny is not None:
            on_deny(c, denied)
    return denied


def _who() -> str:
    import getpass   # lazily: only approvals need it, not every run

    try:
        return getpass.getuser()
    except Exception:  # no passwd entry (containers): still record something
        return f"uid={os.getuid()}"


# --- what an approval binds to (SPEC §5): command, directory identity, profile ------

def check_command(a: Approval) -> None:
    if a.argv is not None and shlex.join(a.argv) != a.command:
        raise ApprovalError(f"{a.id}: the recorded argv is not the command that was shown "
                            f"({a.command!r}); nothing was run",
                            hint=f"deny it with: ringfence deny {a.id}")


def bound_profile(a: Approval, load):
    """The profile to run under (``load()`` loads it again), refused when it is not
    the one the person saw.

    A host request runs no profile, but its decision (what asks, what is denied)
    came from it, so a changed profile is refused there too."""
    if a.where != "sandbox" and not (a.profile_digest and a.profile_source):
        return None
    try:
        profile = load()
    except RingfenceError as exc:
        raise ApprovalError(f"profile {a.profile!r} of {a.id} can no longer be loaded "
                            f"({exc.message}); nothing was run",
                            hint="fix the profile, or deny the request and run it again") \
            from None
    if a.profile_digest and (getattr(profile, "digest", "") != a.profile_digest
                             or (a.profile and profile.name != a.profile)):
        # The approval was given for the policy in force at request time; running
        # under a changed profile would approve something nobody looked at.
        raise ApprovalError(f"profile {a.profile!r} changed since {a.id} was requested; "
                            "nothing was run", hint="run the command again to get a fresh request")
    return profile


def open_bound_dir(a: Approval, path: str | None, identity: str | None,
                   what: str) -> int | None:
    """An fd of ``path``, refused unless it is the very directory the request saw.

    The path is resolved again (symlinks followed), and the identity of what it
    leads to now must be the recorded one: a sandboxed run that swapped a
    directory for a symlink (``mv sub sub.old; ln -s /elsewhere sub``) makes it
    point at another inode, and nothing runs."""
    if not path:
        return None
    try:
        fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    except OSError:
        raise ApprovalError(f"the {what} {path!r} of {a.id} no longer exists; nothing was run",
                            hint=f"deny it with: ringfence deny {a.id}") from None
    st = os.fstat(fd)
    if identity is None or f"{st.st_dev}:{st.st_ino}" != identity:
        os.close(fd)
        why = ("its identity was not recorded (a request from an older ringfence)"
               if identity is None else
               "it is not the directory the request was made in (it was replaced, moved "
               "or swapped for a symbolic link since)")
        raise ApprovalError(f"the {what} {path!r} of {a.id} changed: {why}; nothing was run",
                            hint=f"check it, deny the request (ringfence deny {a.id}) and run "
                                 "the command again from the right directory")
    return fd
