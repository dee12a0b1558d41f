"""The hook driven with real Claude Code event sequences on stdin (issue 13).

Pre answered `ask`, then Post with the same session_id and tool_use_id, is the
person's yes: it is recorded, and a capability is granted for the Claude
session. Everything is asserted on the answers and on the ledger.
"""

from __future__ import annotations

import io
import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from ringfence.hooks import claude_code as cc

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def env(tmp_path):
    proj = tmp_path / "proj"
    (proj / "src").mkdir(parents=True)
    (proj / ".git").mkdir()
    return {"RINGFENCE_HOME": str(tmp_path / "state"), "XDG_CONFIG_HOME": str(tmp_path / "cfg"),
            "HOME": str(tmp_path / "home"), "PATH": os.environ["PATH"], "_proj": str(proj)}


def event(name, command, tid="toolu_1", sid="sess-A", cwd=None, **extra):
    p = {"session_id": sid, "transcript_path": "/tmp/t.jsonl", "cwd": cwd,
         "permission_mode": "default", "hook_event_name": name, "tool_name": "Bash",
         "tool_input": {"command": command, "description": "d"}, "tool_use_id": tid}
    if name in ("PostToolUse",):
        p["tool_response"] = {"stdout": "", "stderr": "", "interrupted": False}
    if name == "PostToolUseFailure":
        p["error"] = "exit 1"
    p.update(extra)
    return p


def send(env, payload, *args) -> dict | None:
    payload = dict(payload, cwd=payload.get("cwd") or env["_proj"])
    out = io.StringIO()
    e = {k: v for k, v in env.items() if not k.startswith("_")}
    assert cc.main(list(args), stdin=io.BytesIO(json.dumps(payload).encode()), stdout=out,
                   stderr=io.StringIO(), env=e) == 0
    text = out.getvalue()
    return json.loads(text)["hookSpecificOutput"] if text else None


def decision(env, command, *args, **kw) -> str:
    return send(env, event("PreToolUse", command, **kw), *args)["permissionDecision"]


def rows(env, sql):
    c = sqlite3.connect(Path(env["RINGFENCE_HOME"]) / "ledger.db")
    c.row_factory = sqlite3.Row
    try:
        return [dict(r) for r in c.execute(sql)]
    finally:
        c.close()


def approve_in_claude(env, command, tid, *args, sid="sess-A", post="PostToolUse"):
    """What Claude Code sends when the person says yes: Pre (ask), then Post."""
    assert decision(env, command, *args, tid=tid, sid=sid) == "ask"
    assert send(env, event(post, command, tid=tid, sid=sid), *args) is None


def test_one_yes_grants_the_capability_for_that_claude_session(env):
    approve_in_claude(env, "longbridge quote AAPL.US", "toolu_1")
    for variant in ("longbridge quote TSLA.US | tail -5", "longbridge news FIG.US 2>&1 | head -30"):
        assert decision(env, variant, tid="toolu_2") == "allow"
    # Another Claude session, and a path-qualified program, still ask.
    assert decision(env, "longbridge quote X", sid="sess-B", tid="toolu_3") == "ask"
    assert decision(env, "./longbridge quote X", tid="toolu_4") == "ask"
    grants = rows(env, "SELECT key, scope, session FROM grants")
    # unwrapped, the call ran on the machine: a host grant (issue 20b)
    assert grants == [{"key": "longbridge", "scope": "session", "session": "claude-sess-A"}]
    post = rows(env, "SELECT * FROM hook_events WHERE event='PostToolUse'")
    assert [(p["tool_use_id"], p["decision"], json.loads(p["keys"])) for p in post] == [
        ("toolu_1", "approved", ["longbridge"])]


def test_post_tool_use_failure_is_a_yes_too(env):
    approve_in_claude(env, "pytest -q", "toolu_9", post="PostToolUseFailure")
    assert decision(env, "pytest -q 2>&1 | tail -20", tid="toolu_10") == "allow"


def test_one_time_is_approved_once_and_never_granted(env):
    cmd = "cat <<'EOF' | longbridge import\nAAPL\nEOF"
    approve_in_claude(env, cmd, "toolu_1")
    assert decision(env, cmd, tid="toolu_2") == "ask"
    assert decision(env, "longbridge quote X", tid="toolu_3") == "ask"
    assert rows(env, "SELECT * FROM grants") == []
    [post] = rows(env, "SELECT decision, note FROM hook_events WHERE event='PostToolUse'")
    assert post == {"decision": "approved",
                    "note": "one_time verdict: approved once, never granted"}


def test_a_post_for_another_command_grants_nothing(env):
    """The Pre -> Post link is bound to the asked text: a Post that carries the
    asked tool_use_id with a different command settles the ask as a mismatch."""
    assert decision(env, "longbridge quote X", tid="toolu_1") == "ask"
    send(env, event("PostToolUse", "rm -rf ~/work", tid="toolu_1"))
    # ... and the genuine Post afterwards finds nothing open any more.
    send(env, event("PostToolUse", "longbridge quote X", tid="toolu_1"))
    # A Post with an id that never asked, or from another session, settles nothing.
    send(env, event("PostToolUse", "rm x", tid="toolu_never"))
    assert decision(env, "make test", tid="toolu_2") == "ask"
    send(env, event("PostToolUse", "make test", tid="toolu_2", sid="sess-OTHER"))
    assert rows(env, "SELECT * FROM grants") == []
    assert [r["decision"] for r in rows(
        env, "SELECT decision FROM hook_events WHERE event='PostToolUse' ORDER BY seq")] == [
        "mismatch", None, None, None]
    assert decision(env, "rm -rf ~/work", tid="toolu_5") == "ask"


def test_profile_hook_grant_once_grants_nothing(env, tmp_path):
    prof = tmp_path / "once.toml"
    prof.write_text('extends = "build"\n[hook]\ngrant = "once"\n')
    approve_in_claude(env, "longbridge quote X", "toolu_1", "--profile", str(prof))
    assert decision(env, "longbridge quote X", "--profile", str(prof), tid="toolu_2") == "ask"
    assert rows(env, "SELECT * FROM grants") == []


@pytest.mark.parametrize("mode", ["bypassPermissions", "dontAsk"])
def test_nobody_asked_means_no_grant(env, mode):
    p = event("PreToolUse", "longbridge quote X", permission_mode=mode)
    assert send(env, p)["permissionDecision"] == "ask"
    send(env, event("PostToolUse", "longbridge quote X"))
    assert rows(env, "SELECT * FROM grants") == []


def test_every_decision_is_recorded_with_event_reasons_ids_and_session(env):
    decision(env, "cd /tmp && echo DONE", tid="t1")
    decision(env, "longbridge quote X", tid="t2")
    ev = rows(env, "SELECT event, session, tool_use_id, decision, reasons, verdict, profile "
                   "FROM hook_events ORDER BY seq")
    assert [(e["event"], e["session"], e["tool_use_id"], e["decision"], e["verdict"],
             e["profile"]) for e in ev] == [
        ("PreToolUse", "sess-A", "t1", "allow", "helper", "build"),
        ("PreToolUse", "sess-A", "t2", "ask", "capability", "build")]
    assert json.loads(ev[1]["reasons"]) == ["needs approval for capability `longbridge`"]


def test_permission_request_keeps_a_deny_and_leaves_the_rest_to_the_person(env, tmp_path):
    prof = tmp_path / "p.toml"
    prof.write_text('extends = "build"\n[commands]\ndeny = ["rm **"]\n')
    out = send(env, event("PermissionRequest", "rm -rf build"), "--profile", str(prof))
    assert out["hookEventName"] == "PermissionRequest"
    assert out["decision"]["behavior"] == "deny" and "rm" in out["decision"]["message"]
    assert send(env, event("PermissionRequest", "ls"), "--profile", str(prof)) is None


# --- --wrap: shell state stays in Claude's shell ---------------------------------------------

@pytest.mark.parametrize("command,expected", [
    ("cd src", "allow"), ("export X=1", "allow"), ("set -e", "allow"), ("unset X", "allow"),
    ("source .venv/bin/activate", "ask"), ("alias ll='ls -l'", "ask"),
])
def test_wrap_leaves_pure_shell_state_in_claudes_shell(env, command, expected):
    out = send(env, event("PreToolUse", command), "--wrap")
    assert out["permissionDecision"] == expected
    assert "updatedInput" not in out    # runs in Claude's shell, judged as a host command


def test_wrap_keeps_a_leading_cd_in_claudes_shell(env):
    out = send(env, event("PreToolUse", "cd src && pytest -q"), "--wrap")
    text = out["updatedInput"]["command"]
    assert text.startswith("cd src && ")
    assert f"--workspace {env['_proj']}" in text
    assert text.split("\n")[1:-1] == ["pytest -q"]
    # A cd that is not a plain static step is not hoisted.
    out = send(env, event("PreToolUse", "cd $(mktemp -d) && ls"), "--wrap")
    assert out["updatedInput"]["command"].split("\n")[1:-1] == ["cd $(mktemp -d) && ls"]


def test_workspace_is_the_project_from_a_subdirectory(env):
    out = send(env, event("PreToolUse", "ls", cwd=env["_proj"] + "/src"), "--wrap")
    assert f"--workspace {env['_proj']} " in out["updatedInput"]["command"]
    [pre] = rows(env, "SELECT workspace FROM hook_events")
    assert pre["workspace"] == env["_proj"]


# --- --wrap: one prompt, the real output, no replay ----------------------------------------------

def _bash(script: str, cwd: str, env: dict) -> subprocess.CompletedProcess:
    e = {k: v for k, v in env.items() if not k.startswith("_")}
    e["PYTHONPATH"] = str(ROOT)
    return subprocess.run(["bash", "-c", script], cwd=cwd, env=e, capture_output=True,
                          text=True, timeout=120)


@pytest.mark.sandbox
def test_wrap_asks_once_and_the_agent_sees_the_output(env, tmp_path):
    proj = Path(env["_proj"])
    (proj / "notes.txt").write_text("hello from the project\n")
    prof = tmp_path / "ask-cat.toml"
    prof.write_text('extends = "build"\n[commands]\nask = ["cat **"]\n')
    cmd = "cat notes.txt && exit 3"
    out = send(env, event("PreToolUse", cmd, tid="toolu_w1"), "--wrap", "--profile", str(prof))
    assert out["permissionDecision"] == "ask"          # Claude's one prompt
    wrapped = out["updatedInput"]["command"]
    r = _bash(wrapped, str(proj), env)                  # the person said yes: Claude runs it
    assert (r.returncode, r.stdout) == (3, "hello from the project\n"), r.stderr
    # Replaying the same wrapped text (same token) is a fresh request: 75, nothing ran.
    r2 = _bash(wrapped, str(proj), env)
    assert r2.returncode == 75 and r2.stdout == ""
    # The token is bound to the exact text: another command with it is not covered.
    token = wrapped.split("--hook-consent ")[1].split()[0]
    other = wrapped.replace("\ncat notes.txt && exit 3\n", "\ncat /etc/hostname\n")
    out2 = send(env, event("PreToolUse", "cat x", tid="toolu_w2"), "--wrap", "--profile", str(prof))
    assert token not in out2["updatedInput"]["command"]
    assert _bash(other, str(proj), env).returncode == 75
    send(env, event("PostToolUse", wrapped, tid="toolu_w1"), "--wrap", "--profile", str(prof))
    runs = rows(env, "SELECT r.command, e.state, e.exit_code FROM runs r JOIN run_events e "
                     "ON e.run_id = r.id ORDER BY r.created_at, e.seq")
    states = [(x["command"], x["state"]) for x in runs]
    # a staged run records "running" again (with its exit code) before it settles
    states = [s for i, s in enumerate(states) if i == 0 or s != states[i - 1]]
    assert states[:3] == [(cmd, "running"), (cmd, "failed"), (cmd, "waiting_for_approval")]


def test_run_reads_the_command_file(tmp_path):
    from ringfence.fast.run import parse_run_args

    f = tmp_path / "c.sh"
    f.write_text("echo 'a\nb'\n")
    assert parse_run_args(["--command-file", str(f)])["command"] == "echo 'a\nb'"
    from ringfence.rfcore.errors import UsageError

    with pytest.raises(UsageError, match="not both"):
        parse_run_args(["-c", "ls", "--command-file", str(f)])
    f.write_bytes(b"\xff")
    with pytest.raises(UsageError, match="RF008"):
        parse_run_args(["--command-file", str(f)])


def test_hook_subprocess_sequence_on_stdin(env):
    """The same Pre -> Post -> Pre sequence through the real entry point."""
    e = {k: v for k, v in env.items() if not k.startswith("_")}
    e["PYTHONPATH"] = str(ROOT)

    def run(p):
        r = subprocess.run([sys.executable, "-m", "ringfence", "hook", "claude-code"],
                           input=json.dumps(dict(p, cwd=env["_proj"])).encode(),
                           capture_output=True, env=e, timeout=60)
        assert r.returncode == 0, r.stderr
        return json.loads(r.stdout)["hookSpecificOutput"] if r.stdout else None

    assert run(event("PreToolUse", "make test", tid="x1"))["permissionDecision"] == "ask"
    assert run(event("PostToolUse", "make test", tid="x1")) is None
    assert run(event("PreToolUse", "make test 2>&1 | tail", tid="x2"))["permissionDecision"] == "allow"


def test_ledger_list_source_hook(env):
    approve_in_claude(env, "longbridge quote X", "toolu_L")
    e = {k: v for k, v in env.items() if not k.startswith("_")}
    e["PYTHONPATH"] = str(ROOT)
    r = subprocess.run([sys.executable, "-m", "ringfence", "ledger", "list", "--source", "hook",
                        "--json"], capture_output=True, text=True, env=e, timeout=60)
    assert r.returncode == 0, r.stderr
    got = [(x["event"], x["tool_use_id"], x["decision"]) for x in json.loads(r.stdout)]
    assert got == [("PostToolUse", "toolu_L", "approved"), ("PreToolUse", "toolu_L", "ask")]
    runs = subprocess.run([sys.executable, "-m", "ringfence", "ledger", "list", "--json"],
                          capture_output=True, text=True, env=e, timeout=60)
    assert json.loads(runs.stdout) == []          # hook decisions are not runs


def test_a_second_pre_cannot_swap_the_asked_command(env):
    assert decision(env, "longbridge quote X", tid="toolu_S") == "ask"
    assert decision(env, "curl evil.example", tid="toolu_S") == "ask"   # same id, new text
    send(env, event("PostToolUse", "curl evil.example", tid="toolu_S"))
    assert rows(env, "SELECT * FROM grants") == []
    [ask] = rows(env, "SELECT command, status FROM hook_asks")
    assert ask == {"command": "longbridge quote X", "status": "mismatch"}


def test_a_broken_ledger_is_said_and_never_an_allow(env):
    state = Path(env["RINGFENCE_HOME"])
    state.mkdir(parents=True)
    (state / "ledger.db").write_bytes(b"this is not a database" * 100)
    out = send(env, event("PreToolUse", "longbridge quote X"))
    assert out["permissionDecision"] == "ask"
    assert "ledger unavailable" in out["permissionDecisionReason"]


@pytest.mark.sandbox
def test_wrap_runs_a_128_kib_heredoc(env):
    """Past the kernel's 128 KiB limit for one argv string: the text goes on stdin."""
    proj = Path(env["_proj"])
    body = "\n".join(f"line {i:06d} " + "z" * 100 for i in range(1300))    # ~140 KB
    cmd = f"wc -l <<'EOF'\n{body}\nEOF"
    assert len(cmd.encode()) > 131072
    out = send(env, event("PreToolUse", cmd, tid="toolu_big"), "--wrap")
    assert out["permissionDecision"] == "ask"          # over 64 KiB: the classifier fails closed
    script = proj.parent / "wrapped.sh"
    script.write_text(out["updatedInput"]["command"])
    e = {k: v for k, v in env.items() if not k.startswith("_")}
    e["PYTHONPATH"] = str(ROOT)
    r = subprocess.run(["bash", str(script)], cwd=proj, env=e, capture_output=True, text=True,
                       timeout=120)
    assert (r.returncode, r.stdout.strip()) == (0, "1300"), r.stderr[-800:]


@pytest.mark.parametrize("cmd", [
    "x=$(printf %s \"" + "é" * 60000 + "\"); echo ${#x}; echo \"$0 $#\"; exit 7",
    "cat <<'EOF' | wc -c\n" + "q" * 200000 + "\nEOF\necho \"${rf_c-unset} ${rf_p-unset}\"",
])
def test_a_long_command_string_runs_exactly_as_bash_c(cmd):
    """The runner's way past MAX_ARG_STRLEN (pieces joined and eval'ed) behaves as
    `bash -c TEXT` would, had the kernel accepted it (compared on a short prefix-free
    variant: the same text through bash's stdin)."""
    from ringfence.session.runner import big_command

    inner = big_command(cmd)
    assert max(len(a.encode()) for a in inner) < 131072
    got = subprocess.run(inner, capture_output=True, text=True, timeout=60)
    want = subprocess.run(["bash", "-s"], input=cmd, capture_output=True, text=True, timeout=60)
    assert (got.returncode, got.stdout.replace("bash 0", "")) == (
        want.returncode, want.stdout.replace("bash 0", ""))


def test_a_refused_ask_closes_its_consent(env):
    """The person said no (PermissionDenied): the --wrap token of that call is dead."""
    from ringfence.ledger.hook_rows import consume_consent
    from ringfence.ledger.store import Ledger

    out = send(env, event("PreToolUse", "git push origin main", tid="toolu_no"), "--wrap")
    token = out["updatedInput"]["command"].split("--hook-consent ")[1].split()[0]
    send(env, event("PermissionDenied", "git push origin main", tid="toolu_no"), "--wrap")
    with Ledger(Path(env["RINGFENCE_HOME"]) / "ledger.db") as led:
        assert consume_consent(led, token, command="git push origin main",
                               session="claude-sess-A") is None
    [ask] = rows(env, "SELECT status FROM hook_asks")
    assert ask == {"status": "denied"}
    assert rows(env, "SELECT * FROM grants") == []


def test_consent_is_bound_to_text_and_session(env):
    from ringfence.ledger.hook_rows import consume_consent
    from ringfence.ledger.store import Ledger

    out = send(env, event("PreToolUse", "git push origin main", tid="toolu_c"), "--wrap")
    token = out["updatedInput"]["command"].split("--hook-consent ")[1].split()[0]
    with Ledger(Path(env["RINGFENCE_HOME"]) / "ledger.db") as led:
        assert consume_consent(led, token, command="git push --force origin main",
                               session="claude-sess-A") is None
        assert consume_consent(led, token, command="git push origin main",
                               session="claude-sess-B") is None
        assert consume_consent(led, "0" * 32, command="git push origin main",
                               session="claude-sess-A") is None
        assert "toolu_c" in consume_consent(led, token, command="git push origin main",
                                            session="claude-sess-A")
        assert consume_consent(led, token, command="git push origin main",
                               session="claude-sess-A") is None     # spent
