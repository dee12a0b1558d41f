"""The hook through the real CLI with payloads it cannot read, shell state that
would move ringfence, asks that say why they would fail, and the events Claude
Code does and does not send (issue 20 §5-§8)."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from ringfence.hooks.claude_input import MAX_PAYLOAD

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def env(tmp_path):
    proj = tmp_path / "proj"
    proj.mkdir()
    subprocess.run(["git", "init", "-q", str(proj)], check=True)
    home = tmp_path / "home"
    home.mkdir()
    e = dict(os.environ, PYTHONPATH=str(ROOT), RINGFENCE_HOME=str(tmp_path / "state"),
             XDG_CONFIG_HOME=str(tmp_path / "cfg"), HOME=str(home))
    for k in ("CLAUDE_PROJECT_DIR", "RINGFENCE_PROFILE", "RINGFENCE_SESSION"):
        e.pop(k, None)
    e["_proj"] = str(proj)
    return e


def hook(env, stdin: bytes, *args) -> tuple[subprocess.CompletedProcess, dict | None]:
    e = {k: v for k, v in env.items() if not k.startswith("_")}
    r = subprocess.run([sys.executable, "-m", "ringfence", "hook", "claude-code", *args],
                       input=stdin, capture_output=True, env=e, timeout=120)
    out = json.loads(r.stdout)["hookSpecificOutput"] if r.stdout.strip() else None
    return r, out


def payload(env, command="ls", event="PreToolUse", tid="toolu_1", cwd=None, **tool_input):
    return {"session_id": "sess-A", "transcript_path": "/tmp/t.jsonl",
            "cwd": cwd or env["_proj"], "permission_mode": "default",
            "hook_event_name": event, "tool_name": "Bash", "tool_use_id": tid,
            "tool_input": {"command": command, "description": "d", **tool_input}}


def send(env, p, *args):
    return hook(env, json.dumps(p).encode(), *args)


def rows(env, sql, *params):
    c = sqlite3.connect(Path(env["RINGFENCE_HOME"]) / "ledger.db")
    c.row_factory = sqlite3.Row
    try:
        return [dict(r) for r in c.execute(sql, params)]
    finally:
        c.close()


# --- §6 never fails open or silent -------------------------------------------------------

def _shapes(env):
    ok = payload(env)
    deep = b'{"hook_event_name": "PreToolUse", "tool_name": "Bash", "tool_input": ' \
        + b"[" * 100_000 + b"]" * 100_000 + b"}"
    yield "100k-deep JSON", deep
    yield "over the maximum", json.dumps(dict(ok, pad="x" * MAX_PAYLOAD)).encode()
    yield "invalid UTF-8", json.dumps(ok).encode().replace(b'"ls"', b'"l\xff\xfes"')
    yield "empty", b""
    yield "truncated", json.dumps(ok).encode()[:-5]
    yield "an array", b"[1, 2]"
    yield "a huge integer", b'{"tool_name": "Bash", "n": ' + b"9" * 5000 + b"}"
    yield "tool_name not a string", json.dumps(dict(ok, tool_name=["Bash"])).encode()
    yield "event not a string", json.dumps(dict(ok, hook_event_name={"x": 1})).encode()
    yield "tool_input not an object", json.dumps(dict(ok, tool_input="ls")).encode()
    yield "command not a string", json.dumps(dict(ok, tool_input={"command": ["ls"]})).encode()
    yield "command a lone surrogate", json.dumps(dict(ok, tool_input={"command": "ls \ud800"})
                                                 ).encode()


@pytest.mark.parametrize("args", [(), ("--wrap",)], ids=["host", "wrap"])
def test_every_unreadable_shape_asks_with_a_reason_and_exit_0(env, args):
    for name, data in _shapes(env):
        r, out = hook(env, data, *args)
        assert r.returncode == 0, (name, r.stderr[-300:])
        assert out is not None, (name, r.stderr[-300:])             # never silent
        assert out["permissionDecision"] == "ask", name             # never open
        assert out["permissionDecisionReason"].startswith("ringfence"), name
        assert b"Traceback" not in r.stderr, name


def test_the_documented_maximum_is_in_the_docs():
    assert f"{MAX_PAYLOAD // (1024 * 1024)} MiB" in (ROOT / "docs" / "claude-code.md").read_text()


# --- §5 shell state that moves ringfence ------------------------------------------------

@pytest.mark.parametrize("command", [
    "export XDG_CACHE_HOME=/tmp/elsewhere", "export XDG_STATE_HOME=$PWD/.state",
    "XDG_CONFIG_HOME=./cfg", "unset RINGFENCE_HOME", "unset XDG_STATE_HOME",
    "export HOME=/tmp/h", "export PATH=./bin:$PATH", "declare -x XDG_DATA_HOME=/x"])
@pytest.mark.parametrize("args", [(), ("--wrap",)], ids=["host", "wrap"])
def test_shell_state_that_moves_ringfence_is_never_allowed_silently(env, command, args):
    r, out = send(env, payload(env, command), *args)
    assert out["permissionDecision"] in ("ask", "deny"), (command, out)
    assert "updatedInput" not in out            # it stays in Claude's shell: judged there
    # ... and a yes grants nothing: it is one-time.
    send(env, payload(env, command, event="PostToolUse"), *args)
    assert rows(env, "SELECT * FROM grants") == []


# --- §7 asks that can succeed -------------------------------------------------------------

def test_wrap_without_a_usable_workspace_asks_with_the_fix(env):
    home = env["HOME"]
    r, out = send(env, payload(env, "ls", cwd=home), "--wrap")
    assert out["permissionDecision"] == "ask"
    assert "RF616" in out["permissionDecisionReason"]
    assert "start Claude Code in the project directory" in out["permissionDecisionReason"]
    assert "updatedInput" not in out            # not wrapped into a run that must fail
    assert rows(env, "SELECT * FROM grants") == []
    send(env, payload(env, "ls", cwd=home, event="PostToolUse"), "--wrap")
    assert rows(env, "SELECT * FROM grants") == []


@pytest.mark.parametrize("url,says", [
    ("https://github.com/acme/app.git", "needs github.com"),
    ("git@github.com:acme/app.git", "uses ssh to github.com")])
def test_an_asked_push_the_proxy_blocks_says_so_and_offers_the_host_route(env, url, says):
    subprocess.run(["git", "-C", env["_proj"], "remote", "add", "origin", url], check=True)
    r, out = send(env, payload(env, "git push origin main"), "--wrap")
    reason = out["permissionDecisionReason"]
    assert out["permissionDecision"] == "ask" and says in reason, reason
    assert "dangerouslyDisableSandbox" in reason and "ringfence run --host" in reason
    # A registry the proxy allows: no such note.
    subprocess.run(["git", "-C", env["_proj"], "remote", "set-url", "origin",
                    "https://pypi.org/x.git"], check=True)
    r, out = send(env, payload(env, "git push origin main", tid="toolu_2"), "--wrap")
    assert "Host route" not in out["permissionDecisionReason"]


# --- §8 the events Claude Code sends, and does not ---------------------------------------

def test_permission_request_is_matched_to_its_pre_by_session_and_command(env):
    r, out = send(env, payload(env, "make test", tid="toolu_9"))
    assert out["permissionDecision"] == "ask"
    perm = payload(env, "make test", event="PermissionRequest")
    del perm["tool_use_id"]                     # Claude Code does not send one
    r, out = send(env, perm)
    assert out is None                          # the dialog is the person's
    [row] = rows(env, "SELECT tool_use_id, note FROM hook_events WHERE event=?",
                 "PermissionRequest")
    assert row["tool_use_id"] == "toolu_9" and "toolu_9" in row["note"]


def test_an_unanswered_ask_expires_and_a_later_post_grants_nothing(env):
    send(env, payload(env, "make test", tid="toolu_1"))
    c = sqlite3.connect(Path(env["RINGFENCE_HOME"]) / "ledger.db")
    c.execute("UPDATE hook_asks SET at = at - 3600")
    c.commit()
    c.close()
    send(env, payload(env, "make test", tid="toolu_1", event="PostToolUse"))
    assert rows(env, "SELECT * FROM grants") == []
    assert rows(env, "SELECT status FROM hook_asks") == [{"status": "expired"}]


def test_a_new_ask_of_the_same_command_closes_the_unanswered_one(env):
    send(env, payload(env, "make test", tid="toolu_1"))      # the person said No: no event
    send(env, payload(env, "make test", tid="toolu_2"))      # the agent tries again
    assert rows(env, "SELECT tool_use_id, status FROM hook_asks ORDER BY at") == [
        {"tool_use_id": "toolu_1", "status": "superseded"},
        {"tool_use_id": "toolu_2", "status": "asked"}]
    send(env, payload(env, "make test", tid="toolu_1", event="PostToolUse"))
    assert rows(env, "SELECT * FROM grants") == []


def test_no_decision_is_defer(env):
    """`defer` pauses a headless session (claude -p) for its caller; in a person's
    session it is not an opinion. ringfence answers allow/ask/deny or nothing."""
    seen = set()
    for command in ("ls", "make test", "git push origin main", "rm -rf /", "$(x)"):
        for args in ((), ("--wrap",)):
            r, out = send(env, payload(env, command), *args)
            seen.add(out["permissionDecision"])
    other = dict(payload(env), tool_name="Read")
    assert send(env, other)[1] is None          # other tools: no decision
    assert seen <= {"allow", "ask", "deny"}
