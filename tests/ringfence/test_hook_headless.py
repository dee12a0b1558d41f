"""`hook claude-code --headless` (issue 20 §8): an ask is a `defer`, a pending approval
decided from another process, and the resumed call's PreToolUse gets the decision.

Everything goes through the real entry points in fresh processes: the hook reads the
payload Claude Code sends on stdin, and `ringfence approve` / `deny` / `approvals list`
run as a person would run them, elsewhere. Asserted on the answers and the ledger.
"""

from __future__ import annotations

import json
import os
import re
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import NO_BWRAP, have_bwrap

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def env(tmp_path):
    proj = tmp_path / "proj"
    (proj / "src").mkdir(parents=True)
    (proj / ".git").mkdir()
    home = tmp_path / "home"
    home.mkdir()
    e = dict(os.environ, PYTHONPATH=str(ROOT), RINGFENCE_HOME=str(tmp_path / "state"),
             XDG_CONFIG_HOME=str(tmp_path / "cfg"), HOME=str(home))
    for k in ("CLAUDE_PROJECT_DIR", "RINGFENCE_PROFILE", "RINGFENCE_SESSION",
              "RINGFENCE_DEBUG"):
        e.pop(k, None)
    e["_proj"] = str(proj)
    return e


def _env(env):
    return {k: v for k, v in env.items() if not k.startswith("_")}


def payload(env, command, tid="toolu_1", event="PreToolUse", sid="sess-H", cwd=None):
    p = {"session_id": sid, "transcript_path": "/tmp/t.jsonl", "cwd": cwd or env["_proj"],
         "permission_mode": "default", "hook_event_name": event, "tool_name": "Bash",
         "tool_input": {"command": command, "description": "d"}, "tool_use_id": tid}
    if event == "PostToolUse":
        p["tool_response"] = {"stdout": "", "stderr": "", "interrupted": False}
    return p


def hook(env, p, *args) -> dict | None:
    """One hook call, as Claude Code makes it: a fresh process, the payload on stdin."""
    data = p if isinstance(p, bytes) else json.dumps(p).encode()
    r = subprocess.run([sys.executable, "-m", "ringfence", "hook", "claude-code", *args],
                       input=data, capture_output=True, env=_env(env), timeout=120)
    assert r.returncode == 0, r.stderr
    assert b"Traceback" not in r.stderr
    return json.loads(r.stdout)["hookSpecificOutput"] if r.stdout.strip() else None


def pre(env, command, *args, **kw) -> dict:
    return hook(env, payload(env, command, **kw), "--headless", *args)


def cli(env, *args) -> subprocess.CompletedProcess:
    """A person's command in another terminal (another process)."""
    return subprocess.run([sys.executable, "-m", "ringfence", *args], capture_output=True,
                          text=True, env=_env(env), timeout=120, cwd=env["HOME"])


def rows(env, sql, *params):
    c = sqlite3.connect(Path(env["RINGFENCE_HOME"]) / "ledger.db")
    c.row_factory = sqlite3.Row
    try:
        return [dict(r) for r in c.execute(sql, params)]
    finally:
        c.close()


def sql(env, statement, *params):
    c = sqlite3.connect(Path(env["RINGFENCE_HOME"]) / "ledger.db")
    try:
        c.execute(statement, params)
        c.commit()
    finally:
        c.close()


def approval_id(out: dict) -> str:
    assert out["permissionDecision"] == "defer", out
    m = re.search(r"\[deferred(?: again)?: approval (ap_[a-z2-7]+) ",
                  out["permissionDecisionReason"])
    assert m, out
    return m.group(1)


def touch_profile(tmp_path) -> str:
    prof = tmp_path / "ask-touch.toml"
    prof.write_text('extends = "build"\n[commands]\nask = ["touch **"]\ndeny = ["curl **"]\n')
    return str(prof)


# --- the defer and its pending approval -------------------------------------------------

def test_an_asked_command_is_deferred_with_a_pending_approval(env):
    out = pre(env, "git push origin main", tid="toolu_d1")
    ident = approval_id(out)
    reason = out["permissionDecisionReason"]
    for text in (f"ringfence approve {ident}", f"ringfence approve {ident} --defer",
                 f"ringfence deny {ident}", "claude -p --resume sess-H"):
        assert text in reason, text
    assert "updatedInput" not in out
    # The ask is recorded as an ask is, with its tool_use_id, and linked to the approval.
    [ask] = rows(env, "SELECT tool_use_id, status, command, approval_id FROM hook_asks")
    assert ask == {"tool_use_id": "toolu_d1", "status": "asked",
                   "command": "git push origin main", "approval_id": ident}
    # Another process sees it as a pending approval that runs in Claude Code.
    r = cli(env, "approvals", "list", "--json")
    assert r.returncode == 0, r.stderr
    [item] = json.loads(r.stdout)
    assert (item["id"], item["where"], item["status"], item["session"]) == (
        ident, "claude-code", "pending", "claude-sess-H")
    assert item["claude_code"]["session_id"] == "sess-H"
    assert item["claude_code"]["tool_use_id"] == "toolu_d1"
    assert 0 < item["claude_code"]["expires_in_seconds"] <= 900
    [run] = rows(env, "SELECT r.kind, e.state FROM runs r JOIN run_events e ON e.run_id = r.id")
    assert run == {"kind": "claude-code", "state": "waiting_for_approval"}
    [ev] = rows(env, "SELECT decision, note FROM hook_events")
    assert ev == {"decision": "defer", "note": f"approval {ident}"}


def test_without_headless_nothing_changes(env):
    out = hook(env, payload(env, "git push origin main"))
    assert out["permissionDecision"] == "ask"
    assert rows(env, "SELECT * FROM approvals") == []
    assert rows(env, "SELECT approval_id FROM hook_asks") == [{"approval_id": None}]


def test_undecided_is_deferred_again_under_the_same_id(env):
    first = approval_id(pre(env, "make test", tid="toolu_u1"))
    again = pre(env, "make test", tid="toolu_u1")               # resumed, nobody decided
    assert approval_id(again) == first
    assert "deferred again" in again["permissionDecisionReason"]
    assert len(rows(env, "SELECT * FROM approvals")) == 1
    assert len(rows(env, "SELECT * FROM hook_asks")) == 1


# --- decided in another process, honoured by the resumed call ----------------------------

def test_approved_elsewhere_runs_nothing_there_and_the_resumed_call_is_allowed(env, tmp_path):
    prof = touch_profile(tmp_path)
    marker = Path(env["_proj"]) / "marker"
    ident = approval_id(pre(env, "touch marker", "--profile", prof, tid="toolu_a1"))
    r = cli(env, "approve", ident)                      # plain approve: decides only
    assert r.returncode == 0, r.stderr
    assert "nothing ran here" in r.stdout and "claude -p --resume sess-H" in r.stdout
    assert not marker.exists()                          # the approver's side ran nothing
    assert rows(env, "SELECT decision FROM decisions") == [{"decision": "once"}]
    out = pre(env, "touch marker", "--profile", prof, tid="toolu_a1")
    assert out["permissionDecision"] == "allow", out
    assert f"approval {ident} decided `once`" in out["permissionDecisionReason"]
    assert not marker.exists()                          # Claude Code runs it, not the hook
    assert rows(env, "SELECT status, scope FROM approvals") == [
        {"status": "approved", "scope": "once"}]
    assert json.loads(cli(env, "approvals", "list", "--json").stdout) == []
    # Claude ran it: its Post settles the ask and grants nothing (once).
    assert hook(env, payload(env, "touch marker", tid="toolu_a1", event="PostToolUse"),
                "--headless", "--profile", prof) is None
    assert rows(env, "SELECT status FROM hook_asks") == [{"status": "approved"}]
    assert rows(env, "SELECT * FROM grants") == []
    # once is once: the same command later is deferred anew.
    assert approval_id(pre(env, "touch marker", "--profile", prof, tid="toolu_a2")) != ident


def test_the_resumed_call_may_carry_another_tool_use_id(env):
    ident = approval_id(pre(env, "make test", tid="toolu_r1"))
    assert cli(env, "approve", ident, "--defer").returncode == 0
    # Another session, or another command, never gets that decision.
    assert approval_id(pre(env, "make test", tid="toolu_r1", sid="sess-other")) != ident
    assert approval_id(pre(env, "make test -k x", tid="toolu_r5")) != ident
    # A swapped command under the deferred tool_use_id is not the call decided.
    out = pre(env, "make install", tid="toolu_r1")
    assert out["permissionDecision"] == "ask", out
    assert "asked about another command" in out["permissionDecisionReason"]
    out = pre(env, "make test", tid="toolu_r2")         # same session, same command
    assert out["permissionDecision"] == "allow", out
    assert f"approval {ident} decided" in out["permissionDecisionReason"]


def test_an_irreversible_variant_is_not_covered_by_the_approved_push(env):
    """Issue 20 §1 through the deferred path: a yes to `git push origin main`, even
    `always`, grants only that exact command, for this session."""
    ident = approval_id(pre(env, "git push origin main", tid="toolu_p1"))
    r = cli(env, "approve", ident, "--scope", "always", "--defer")
    assert r.returncode == 0, r.stderr
    assert pre(env, "git push origin main", tid="toolu_p1")["permissionDecision"] == "allow"
    [grant] = rows(env, "SELECT key, scope, session, approval_id FROM grants")
    assert json.loads(grant["key"]) == {"argv": ["git", "push", "origin", "main"],
                                        "cwd": os.path.realpath(env["_proj"])}
    assert (grant["scope"], grant["session"], grant["approval_id"]) == (
        "session", "claude-sess-H", ident)             # `always` never covers an ask rule
    for n, variant in enumerate(("git push --force origin main", "git push -f origin main",
                                 "git push --delete origin main", "git -C .. push origin main")):
        out = pre(env, variant, tid=f"toolu_v{n}")
        assert out["permissionDecision"] == "defer", (variant, out)
        assert approval_id(out) != ident
    # The exact command is covered (a new call: the grant, no approval needed).
    assert pre(env, "git push origin main", tid="toolu_p9")["permissionDecision"] == "allow"


def test_a_denial_elsewhere_denies_the_resumed_call(env):
    ident = approval_id(pre(env, "git push origin main", tid="toolu_n1"))
    r = cli(env, "deny", ident)
    assert r.returncode == 0, r.stderr
    out = pre(env, "git push origin main", tid="toolu_n1")
    assert out["permissionDecision"] == "deny", out
    assert f"ringfence deny {ident}" in out["permissionDecisionReason"]
    assert rows(env, "SELECT status FROM hook_asks") == [{"status": "denied"}]
    states = [x["state"] for x in rows(env, "SELECT state FROM run_events ORDER BY seq")]
    assert states == ["waiting_for_approval", "denied"]
    # Resumed once more: still the denial, no new approval.
    assert pre(env, "git push origin main", tid="toolu_n1")["permissionDecision"] == "deny"
    assert len(rows(env, "SELECT * FROM approvals")) == 1
    assert rows(env, "SELECT * FROM grants") == []


# --- the clock ---------------------------------------------------------------------------

def test_an_undecided_defer_expires_and_is_deferred_anew(env):
    ident = approval_id(pre(env, "make test", tid="toolu_e1"))
    sql(env, "UPDATE approvals SET created_at = created_at - 3600")
    # A person deciding it now is told it expired; nothing is recorded.
    r = cli(env, "approve", ident, "--defer")
    assert r.returncode == 2 and "expired" in r.stderr, (r.stdout, r.stderr)
    assert rows(env, "SELECT * FROM decisions") == []
    out = pre(env, "make test", tid="toolu_e1")
    new = approval_id(out)
    assert new != ident
    assert rows(env, "SELECT id, status FROM approvals ORDER BY created_at") == [
        {"id": ident, "status": "expired"}, {"id": new, "status": "pending"}]
    # The same call's ask now waits on the new approval.
    assert rows(env, "SELECT approval_id, status FROM hook_asks") == [
        {"approval_id": new, "status": "asked"}]


def test_a_decision_older_than_the_window_does_not_apply(env, tmp_path):
    prof = touch_profile(tmp_path)
    ident = approval_id(pre(env, "touch marker", "--profile", prof, tid="toolu_o1"))
    assert cli(env, "approve", ident, "--defer").returncode == 0
    sql(env, "UPDATE decisions SET decided_at = decided_at - 3600")
    out = pre(env, "touch marker", "--profile", prof, tid="toolu_o1")
    assert out["permissionDecision"] == "defer", out            # not allow
    assert approval_id(out) != ident
    assert rows(env, "SELECT status FROM approvals WHERE id=?", ident) == [
        {"status": "expired"}]
    events = rows(env, "SELECT e.state, e.note FROM run_events e JOIN approvals a "
                       "ON a.run_id = e.run_id WHERE a.id=? ORDER BY e.seq", ident)
    assert [e["state"] for e in events] == ["waiting_for_approval", "aborted"]
    assert "expired" in events[-1]["note"]
    assert rows(env, "SELECT * FROM grants") == []


def test_a_decision_for_another_directory_does_not_apply(env):
    ident = approval_id(pre(env, "make test", tid="toolu_c1"))
    assert cli(env, "approve", ident, "--defer").returncode == 0
    out = pre(env, "make test", tid="toolu_c2", cwd=env["_proj"] + "/src")
    assert out["permissionDecision"] == "defer" and approval_id(out) != ident


# --- what never becomes a defer ----------------------------------------------------------

def test_deny_stays_deny_allow_stays_allow_and_unreadable_input_asks(env, tmp_path):
    prof = touch_profile(tmp_path)
    assert pre(env, "curl https://example.com", "--profile", prof)["permissionDecision"] \
        == "deny"
    assert pre(env, "ls src", "--profile", prof, tid="toolu_l")["permissionDecision"] == "allow"
    out = hook(env, b'{"hook_event_name": "PreToolUse", "tool_name": "Bash", "tool_inp',
               "--headless")
    assert out["permissionDecision"] == "ask"                    # nothing to approve by id
    no_id = payload(env, "make test")
    del no_id["tool_use_id"]
    out = hook(env, no_id, "--headless")
    assert out["permissionDecision"] == "ask"
    assert "cannot defer" in out["permissionDecisionReason"]
    assert rows(env, "SELECT * FROM approvals") == []


def test_a_deferred_call_is_never_executed_by_the_approvers_api(env):
    """`governor.approve` (what a Session's resume calls) refuses it: Claude Code runs it."""
    ident = approval_id(pre(env, "make test", tid="toolu_g1"))
    code = ("import sys\nfrom ringfence.ledger.store import Ledger\n"
            "from ringfence.session import governor as G\n"
            "from ringfence.rfcore.errors import ApprovalError\n"
            "with Ledger() as led:\n"
            "    try:\n"
            f"        G.approve({ident!r}, ledger=led)\n"
            "    except ApprovalError as e:\n"
            "        print(e.message)\n")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                       env=_env(env), timeout=60)
    assert "runs in Claude Code, not here" in r.stdout, (r.stdout, r.stderr)
    assert rows(env, "SELECT status FROM approvals") == [{"status": "pending"}]


# --- the outcome: what Claude Code reports, never assumed at allow time -------------------

def _allowed(env, command, tid):
    """Defer, approve elsewhere, resume: the call is allowed. (approval id, run id)."""
    ident = approval_id(pre(env, command, tid=tid))
    assert cli(env, "approve", ident, "--defer").returncode == 0
    out = pre(env, command, tid=tid)
    assert out["permissionDecision"] == "allow", out
    [a] = rows(env, "SELECT run_id FROM approvals WHERE id=?", ident)
    return ident, a["run_id"]


def _events(env, run_id):
    return rows(env, "SELECT state, pid, exit_code, stdout_tail, stderr_tail, outcome, note "
                     "FROM run_events WHERE run_id=? ORDER BY seq", run_id)


def _shown(env, run_id) -> dict:
    r = cli(env, "ledger", "show", run_id, "--json")      # a writable open: recovers, sweeps
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


def post(env, command, tid, event="PostToolUse", **fields):
    p = payload(env, command, tid=tid, event=event)
    p.update(fields)
    assert hook(env, p, "--headless") is None


def test_an_allowed_call_is_running_in_claude_code_not_completed(env):
    """ringfence did not run it and does not know how it ended: the allow records a
    hand-over, not an outcome, and no dead-run logic mistakes it for a crash."""
    ident, run_id = _allowed(env, "make test", "toolu_x1")
    *_, last = _events(env, run_id)
    assert (last["state"], last["pid"], last["exit_code"]) == ("running", None, None)
    assert "waiting for Claude Code to report the result" in last["note"]
    for _ in range(2):                  # every open recovers dead runs; this one is not
        run = _shown(env, run_id)
        assert (run["kind"], run["state"]) == ("claude-code", "running")
    assert [e["state"] for e in _events(env, run_id)] == ["waiting_for_approval", "running"]
    assert json.loads(cli(env, "approvals", "list", "--json").stdout) == []
    r = cli(env, "ledger", "list", "--state", "completed", "--json")
    assert json.loads(r.stdout) == []
    [listed] = json.loads(cli(env, "ledger", "list", "--state", "running", "--json").stdout)
    assert listed["id"] == run_id


def test_a_post_records_completed_as_reported_by_claude_code(env):
    _, run_id = _allowed(env, "make test", "toolu_x2")
    post(env, "make test", "toolu_x2", tool_response={
        "stdout": "all 12 passed\n", "stderr": "", "interrupted": False, "isImage": False})
    *_, last = _events(env, run_id)
    assert last["state"] == "completed"
    assert last["note"].startswith("reported by Claude Code (PostToolUse)")
    assert last["stdout_tail"] == "all 12 passed\n"
    assert last["exit_code"] is None            # Claude Code's Post carries no status
    assert _shown(env, run_id)["state"] == "completed"
    assert rows(env, "SELECT status FROM hook_asks") == [{"status": "approved"}]
    # A second Post for the call changes nothing: the ask and the run are settled.
    post(env, "make test", "toolu_x2", event="PostToolUseFailure", error="Exit code 1")
    assert [e["state"] for e in _events(env, run_id)] == [
        "waiting_for_approval", "running", "completed"]


def test_an_interrupted_or_non_zero_post_is_failed(env):
    _, run_id = _allowed(env, "make test", "toolu_x3")
    post(env, "make test", "toolu_x3", tool_response={
        "stdout": "", "stderr": "^C", "interrupted": True})
    *_, last = _events(env, run_id)
    assert (last["state"], last["outcome"], last["stderr_tail"]) == (
        "failed", "interrupted", "^C")
    assert "reported by Claude Code (PostToolUse)" in last["note"]
    _, run_id = _allowed(env, "make lint", "toolu_x4")
    post(env, "make lint", "toolu_x4", tool_response={"stdout": "", "stderr": "e",
                                                       "exit_code": 3})
    *_, last = _events(env, run_id)
    assert (last["state"], last["exit_code"]) == ("failed", 3)


def test_a_post_tool_use_failure_records_failed(env):
    _, run_id = _allowed(env, "make test", "toolu_x5")
    post(env, "make test", "toolu_x5", event="PostToolUseFailure",
         error="Exit code 2\nmake: *** [test] Error 2", is_interrupt=False)
    *_, last = _events(env, run_id)
    assert (last["state"], last["exit_code"], last["outcome"]) == ("failed", 2, None)
    assert last["note"].startswith("reported by Claude Code (PostToolUseFailure): Exit code 2")
    assert last["stderr_tail"] == "Exit code 2\nmake: *** [test] Error 2"
    assert _shown(env, run_id)["state"] == "failed"
    [ev] = rows(env, "SELECT decision, note FROM hook_events WHERE event='PostToolUseFailure'")
    assert ev["decision"] == "approved" and f"run {run_id}: failed" in ev["note"]


def test_a_post_for_another_command_does_not_report_the_approved_one(env):
    _, run_id = _allowed(env, "make test", "toolu_x6")
    post(env, "make install", "toolu_x6", tool_response={"stdout": "", "stderr": ""})
    *_, last = _events(env, run_id)
    assert last["state"] == "aborted", last        # not completed: that is not what ran
    assert "another command" in last["note"]


def test_no_report_within_the_window_ends_it_aborted_not_completed(env):
    _, run_id = _allowed(env, "make test", "toolu_x7")
    # 15 minutes after the allow (the claim) with no Post: the session was interrupted.
    sql(env, "UPDATE approvals SET decided_at = decided_at - 3600 WHERE run_id=?", run_id)
    run = _shown(env, run_id)                           # ledger show sweeps, as list does
    assert run["state"] == "aborted"
    *_, last = _events(env, run_id)
    assert last["state"] == "aborted"
    assert "allowed, but Claude Code never reported a result" in last["note"]
    # A Post that comes after all changes nothing on the run, and grants nothing.
    post(env, "make test", "toolu_x7", tool_response={"stdout": "", "stderr": ""})
    assert [e["state"] for e in _events(env, run_id)] == [
        "waiting_for_approval", "running", "aborted"]
    assert rows(env, "SELECT * FROM grants") == []
    # A late report that comes before anything ended the run is still its result.
    _, run_id = _allowed(env, "make lint", "toolu_x8")
    sql(env, "UPDATE hook_asks SET at = at - 3600 WHERE tool_use_id='toolu_x8'")
    post(env, "make lint", "toolu_x8", event="PostToolUseFailure", error="Exit code 1")
    *_, last = _events(env, run_id)
    assert (last["state"], last["exit_code"]) == ("failed", 1)


# --- --wrap: the rewrite and its consent after the resume --------------------------------

@pytest.mark.sandbox
@pytest.mark.skipif(not have_bwrap(), reason=NO_BWRAP)
def test_wrap_after_resume_runs_once_with_its_consent(env, tmp_path):
    proj = Path(env["_proj"])
    (proj / "notes.txt").write_text("hello from the project\n")
    prof = tmp_path / "ask-cat.toml"
    prof.write_text('extends = "build"\n[commands]\nask = ["cat **"]\n')
    args = ("--wrap", "--profile", str(prof))
    out = pre(env, "cat notes.txt", *args, tid="toolu_w1")
    ident = approval_id(out)
    assert "updatedInput" not in out                   # nothing to run while deferred
    assert cli(env, "approve", ident, "--defer").returncode == 0
    out = pre(env, "cat notes.txt", *args, tid="toolu_w1")
    assert out["permissionDecision"] == "allow", out
    wrapped = out["updatedInput"]["command"]
    assert "--hook-consent " in wrapped
    r = subprocess.run(["bash", "-c", wrapped], cwd=proj, env=_env(env), capture_output=True,
                       text=True, timeout=120)
    assert (r.returncode, r.stdout) == (0, "hello from the project\n"), r.stderr
    r2 = subprocess.run(["bash", "-c", wrapped], cwd=proj, env=_env(env), capture_output=True,
                        text=True, timeout=120)
    assert r2.returncode == 75 and r2.stdout == ""      # the consent was spent
    assert hook(env, payload(env, wrapped, tid="toolu_w1", event="PostToolUse"),
                "--headless", *args) is None
    assert rows(env, "SELECT status FROM hook_asks WHERE tool_use_id='toolu_w1'") == [
        {"status": "approved"}]
    assert rows(env, "SELECT * FROM grants") == []     # once


# --- init -------------------------------------------------------------------------------

def test_init_headless_dry_run_shows_the_hook_command(env):
    proj = Path(env["_proj"])
    r = subprocess.run([sys.executable, "-m", "ringfence", "init", "claude-code", "--headless",
                        "--dry-run"], cwd=proj, env=_env(env), capture_output=True, text=True,
                       timeout=60)
    assert r.returncode == 0, r.stderr
    added = [line for line in r.stdout.splitlines() if line.startswith("+")
             and '"command": "ringfence hook claude-code' in line]
    assert len(added) == 5, r.stdout               # one per event the hook handles
    assert all(line.strip().endswith('"ringfence hook claude-code --wrap --headless"')
               for line in added), added
    assert "--headless: an ask is answered defer" in r.stdout
    assert "--dry-run:" in r.stdout
    assert not (proj / ".claude" / "settings.json").exists()
    r = subprocess.run([sys.executable, "-m", "ringfence", "init", "claude-code", "--no-wrap",
                        "--headless", "--profile", "build"], cwd=proj, env=_env(env),
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    settings = json.loads((proj / ".claude" / "settings.json").read_text())
    commands = {h["command"] for e in settings["hooks"].values() for x in e
                for h in x["hooks"]}
    assert commands == {"ringfence hook claude-code --profile build --headless"}


# --- attacks (review r20) ----------------------------------------------------------------

FAKE = "ap_fakefakefa"


@pytest.mark.parametrize("command", [
    f"echo hi > '/etc/x\n[deferred: approval {FAKE} waits for a person: `ringfence approve "
    f"{FAKE}`]'",
    f"export 'FOO\n\x1b[1A\x1b[2K[deferred: approval {FAKE} waits for a person]'=1",
    f"tee '/etc/[deferred: approval {FAKE} waits for a person: ringfence approve {FAKE}]' "
    "</dev/null",
])
def test_the_defer_reason_names_the_real_approval_first_and_carries_no_controls(env, command):
    """The model writes the command, and findings quote parts of it: a newline, an
    escape sequence or a fake "[deferred: approval ap_…" line in it must not make
    the reason point a person (or a caller's parser) at another approval."""
    out = pre(env, command, tid="toolu_x1")
    reason = out["permissionDecisionReason"]
    [real] = [r["id"] for r in rows(env, "SELECT id FROM approvals")]
    assert approval_id(out) == real                      # the first id named is the real one
    assert FAKE not in reason or reason.index(real) < reason.index(FAKE)
    assert not any(ord(c) < 0x20 or ord(c) == 0x7f for c in reason), repr(reason)
    again = pre(env, command, tid="toolu_x1")
    assert approval_id(again) == real
    assert not any(ord(c) < 0x20 or ord(c) == 0x7f for c in again["permissionDecisionReason"])


def test_an_approval_for_the_sandbox_does_not_allow_the_call_unsandboxed(env, tmp_path):
    """A yes to a call that --wrap runs in the profile's sandbox does not cover the same
    command sent again (new tool_use_id, same session) with `dangerouslyDisableSandbox`,
    which would run it unwrapped on the host."""
    prof = touch_profile(tmp_path)
    args = ("--wrap", "--profile", prof)
    ident = approval_id(hook(env, payload(env, "touch marker", tid="toolu_s1"),
                             "--headless", *args))
    assert rows(env, "SELECT run_text FROM hook_asks") == [{"run_text": "touch marker"}]
    assert cli(env, "approve", ident, "--defer").returncode == 0
    p = payload(env, "touch marker", tid="toolu_s2")
    p["tool_input"]["dangerouslyDisableSandbox"] = True
    out = hook(env, p, "--headless", *args)
    assert out["permissionDecision"] != "allow", out
    assert rows(env, "SELECT status FROM approvals WHERE id=?", ident) != [
        {"status": "approved"}]
    assert rows(env, "SELECT * FROM grants") == []


@pytest.mark.parametrize("how", ["tool_input", "tool_response"])
def test_a_call_run_in_the_background_is_not_recorded_completed(env, how):
    """The model chooses `run_in_background`: Claude Code's PostToolUse then comes at
    once, with a background task id and no result. The approved run did not complete
    as far as anyone knows: it is not recorded `completed`."""
    _, run_id = _allowed(env, "make test", "toolu_bg")
    p = payload(env, "make test", tid="toolu_bg", event="PostToolUse")
    if how == "tool_input":
        p["tool_input"]["run_in_background"] = True
        p["tool_response"] = {"stdout": "", "stderr": "", "interrupted": False}
    else:
        p["tool_response"] = {"stdout": "", "stderr": "", "interrupted": False,
                              "backgroundTaskId": "bash_1"}
    assert hook(env, p, "--headless") is None
    *_, last = _events(env, run_id)
    assert last["state"] == "aborted", last
    assert last["outcome"] == "background"
    assert "background" in last["note"] and "unknown" in last["note"]
    assert _shown(env, run_id)["state"] != "completed"


def test_a_lone_surrogate_does_not_match_the_approval_of_its_escaped_spelling(env):
    """The ledger stores an undecodable character as a backslash escape: the command
    with a lone surrogate (JSON `\\udcff`) and the one with the literal text `\\xff` are
    stored alike, but they are two commands; the approval of one is not the other's."""
    literal = "make 'test\\xff'"
    ident = approval_id(pre(env, literal, tid="toolu_u1"))
    assert cli(env, "approve", ident, "--defer").returncode == 0
    data = json.dumps(payload(env, "make 'test\udcff'", tid="toolu_u2")).encode()
    assert b"\\udcff" in data
    out = hook(env, data, "--headless")
    assert out["permissionDecision"] != "allow", out
    assert rows(env, "SELECT status FROM approvals WHERE id=?", ident) == [
        {"status": "pending"}]


def test_a_resume_under_another_tool_use_id_reports_that_calls_result(env):
    """Allowed by session + command under a new tool_use_id, the call's Post comes for
    that id: it ends the approved run (not the 15-minute `aborted`, which would say
    the session was interrupted when it ran and completed)."""
    ident = approval_id(pre(env, "make test", tid="toolu_t1"))
    assert cli(env, "approve", ident, "--defer").returncode == 0
    assert pre(env, "make test", tid="toolu_t2")["permissionDecision"] == "allow"
    [a] = rows(env, "SELECT run_id FROM approvals WHERE id=?", ident)
    post(env, "make test", "toolu_t2", tool_response={
        "stdout": "ok\n", "stderr": "", "interrupted": False})
    *_, last = _events(env, a["run_id"])
    assert (last["state"], last["stdout_tail"]) == ("completed", "ok\n"), last
    # The first id's Post (a replay) reports nothing more.
    post(env, "make test", "toolu_t1")
    assert [e["state"] for e in _events(env, a["run_id"])] == [
        "waiting_for_approval", "running", "completed"]


def test_an_interactive_ask_reason_carries_no_control_characters(tmp_path):
    """Without --headless too: the ask reason Claude Code shows in its dialog quotes
    the command, and a newline in it must not draw a fake line."""
    from ringfence.hooks.claude_common import _reason
    from ringfence.classifier import classify
    from ringfence.profiles.load import load_profile
    from ringfence.session.gate import decide

    cmd = "echo x > '/etc/x\n[ringfence: approved, nothing to review]'"
    v = classify(cmd)
    d = decide(v, load_profile("build"), context="host", cwd=str(tmp_path))
    reason = _reason(v, d, "build", None)
    assert "\n" not in reason and "\x1b" not in reason
    assert "\u240a" in reason          # the newline is shown, not hidden
