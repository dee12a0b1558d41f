"""The Claude Code PreToolUse hook, run as Claude Code runs it: a subprocess with JSON on stdin."""

from __future__ import annotations

import io
import json
import os
import shlex
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from ringfence.profiles.model import Profile
from ringfence.hooks import claude_code as cc

ROOT = Path(__file__).resolve().parents[2]


def needs_classifier(test):
    """Marks tests that use the real classifier (they fail, never skip, without it)."""
    return test


def payload(command, tool="Bash", **extra) -> dict:
    p = {"session_id": "abc123", "transcript_path": "/tmp/t.jsonl", "cwd": str(ROOT),
         "permission_mode": "default", "hook_event_name": "PreToolUse", "tool_name": tool,
         "tool_input": {"command": command, "description": "d", "timeout": 120000},
         "tool_use_id": "toolu_01ABC"}
    p.update(extra)
    return p


@pytest.fixture
def home(tmp_path, monkeypatch):
    monkeypatch.setenv("RINGFENCE_HOME", str(tmp_path / "home"))
    monkeypatch.delenv("RINGFENCE_SESSION", raising=False)
    monkeypatch.delenv("RINGFENCE_PROFILE", raising=False)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "cfg"))
    return tmp_path


def hook(stdin: bytes | str, *args: str, env_extra=None) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=str(ROOT), **(env_extra or {}))
    data = stdin.encode() if isinstance(stdin, str) else stdin
    return subprocess.run([sys.executable, "-m", "ringfence", "hook", "claude-code", *args],
                          input=data, capture_output=True, env=env, timeout=60, cwd=ROOT)


def answer(r: subprocess.CompletedProcess) -> dict:
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)["hookSpecificOutput"]


# --- without the classifier: input handling and the wrap round-trip -------------------------

def test_other_tools_get_no_decision(home):
    for tool in ("Write", "Read", "mcp__x__y"):
        r = hook(json.dumps(payload("ignored", tool=tool)), "--profile", "build")
        assert (r.returncode, r.stdout, r.stderr) == (0, b"", b"")


def test_other_events_get_no_decision(home):
    for event in ("PostToolUse", "PostToolUseFailure", "SessionStart", "Stop"):
        r = hook(json.dumps(payload("ls", hook_event_name=event)))
        assert (r.returncode, r.stdout) == (0, b"")


@pytest.mark.parametrize("raw", [b"{not json", b"", b"\xff\xfe", b"[1, 2"])
def test_bad_json_is_a_clear_message_and_a_safe_ask(home, raw):
    r = hook(raw, "--profile", "build")
    out = answer(r)
    assert out["hookEventName"] == "PreToolUse" and out["permissionDecision"] == "ask"
    assert "unreadable hook input" in out["permissionDecisionReason"]
    assert b"cannot read hook JSON on stdin" in r.stderr and b"Traceback" not in r.stderr


@pytest.mark.parametrize("body", ['"just a string"', "[1]", "null"])
def test_non_object_json_asks(home, body):
    out = answer(hook(body))
    assert out["permissionDecision"] == "ask" and "not a JSON object" in out["permissionDecisionReason"]


def test_bash_without_command_asks(home):
    p = payload("x")
    p["tool_input"] = {"description": "no command"}
    out = answer(hook(json.dumps(p)))
    assert out["permissionDecision"] == "ask" and "no command" in out["permissionDecisionReason"]


def test_bad_arguments_and_unknown_profile(home):
    r = hook(json.dumps(payload("ls")), "--bogus")
    assert r.returncode == 125 and b"unknown argument '--bogus'" in r.stderr
    out = answer(hook(json.dumps(payload("ls")), "--profile", "no-such-profile"))
    assert out["permissionDecision"] == "ask"
    assert "cannot load the profile" in out["permissionDecisionReason"]


def test_hook_help_and_unknown_integration():
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    r = subprocess.run([sys.executable, "-m", "ringfence", "hook", "--help"], capture_output=True,
                       env=env, timeout=60)
    assert r.returncode == 0 and b"Example" in r.stdout
    r = subprocess.run([sys.executable, "-m", "ringfence", "hook", "cursor"], input=b"{}",
                       capture_output=True, env=env, timeout=60)
    assert r.returncode == 125 and b"unknown hook integration 'cursor'" in r.stderr


TRICKY = [
    "ls -la",
    "longbridge news FIG.US 2>&1 | head -30",
    "echo 'single' \"double $HOME\" `date` $(whoami)",
    "printf '%s\\n' \"it's\" 'a \"quote\"' \\\\back\\\\slash",
    "cat <<'EOF'\nline one\n  $notexpanded\nEOF",
    "python3 -c 'print(\"ünïcødé ✓\")'",
    "a=1; b=$((a+1)) && echo $b || true &",
    "echo \"\t tab\" ; echo '' ; echo ~ *.py {a,b}",
    "  leading and trailing spaces  ",
    "--profile strict -c 'not an option'",
]


@pytest.mark.parametrize("command", TRICKY + ["x" * 131072 + "\nRINGFENCE_CMD_X\n",
                                              "printf '%s' \"$(cat <<'EOF'\n" + "y" * 140000
                                              + "\nEOF\n)\""])
def test_wrapped_command_round_trips_through_bash(tmp_path, command):
    """bash must hand `ringfence run` exactly the original string, byte for byte, on
    stdin (a here-document), never in argv: 128 KiB and more must work."""
    fake = tmp_path / "ringfence"
    fake.write_text("#!/bin/sh\nfor a in \"$@\"; do printf '%s\\0' \"$a\"; done\n"
                    "printf 'STDIN\\0'; cat\n")
    fake.chmod(0o755)
    prof = Profile(name="build", source="builtin:build")
    wrapped = cc.wrap_command(command, prof, "claude-abc123")
    # The script reaches bash as a file (Claude Code's shell evaluates it the same way):
    # argv would cap the test itself at 128 KiB.
    script = tmp_path / "cmd.sh"
    script.write_text(wrapped)
    r = subprocess.run(["bash", str(script)], capture_output=True, timeout=30,
                       env=dict(os.environ, PATH=f"{tmp_path}:{os.environ['PATH']}"))
    assert r.returncode == 0, r.stderr[-500:]
    head, _, stdin = r.stdout.decode().partition("STDIN\0")
    args = head.split("\0")[:-1]
    assert args == ["run", "--no-stdin", "--profile", "build", "--session", "claude-abc123",
                    "--command-file", "-"]
    assert stdin == command + "\n"      # run strips exactly this one newline


def test_wrap_uses_the_profile_file_path_for_custom_profiles():
    prof = Profile(name="mine", source="/p/my profile.toml")
    assert cc.wrap_command("ls", prof, None).startswith(
        "ringfence run --no-stdin --profile '/p/my profile.toml' --command-file - "
        "<<'RINGFENCE_CMD_")


def test_session_naming():
    assert cc.session_for({"session_id": "abc"}, {}) == "claude-abc"
    assert cc.session_for({"session_id": "abc"}, {"RINGFENCE_SESSION": "s"}) == "s"
    assert cc.session_for({}, {}) is None


def test_internal_error_is_a_safe_ask(monkeypatch):
    def boom(*a, **k):
        raise KeyError("bug")
    monkeypatch.setattr(cc, "respond", boom)
    out, err = io.StringIO(), io.StringIO()
    assert cc.main([], stdin=io.BytesIO(b"{}"), stdout=out, stderr=err, env={}) == 0
    assert json.loads(out.getvalue())["hookSpecificOutput"]["permissionDecision"] == "ask"
    assert "internal error: KeyError" in err.getvalue()


# --- with the real classifier and gate ----------------------------------------------------------

@needs_classifier
def test_helper_is_allowed(home):
    out = answer(hook(json.dumps(payload("cd /tmp && echo DONE")), "--profile", "build"))
    assert out["permissionDecision"] == "allow"
    assert "updatedInput" not in out


@needs_classifier
def test_capability_not_granted_asks_with_reason(home):
    out = answer(hook(json.dumps(payload("longbridge news FIG.US 2>&1 | head -30")),
                      "--profile", "build"))
    assert out["permissionDecision"] == "ask"
    assert "longbridge" in out["permissionDecisionReason"]


@needs_classifier
def test_one_time_asks_with_codes_and_messages(home):
    from ringfence.classifier import classify

    cmd = "echo $(cat /etc/passwd) | sh"
    v = classify(cmd)
    out = answer(hook(json.dumps(payload(cmd)), "--profile", "build"))
    assert out["permissionDecision"] == "ask"
    assert v.findings, "the classifier must explain a one-time verdict"
    for f in v.findings:
        assert f"{f.code} {f.message}" in out["permissionDecisionReason"]


@needs_classifier
def test_granted_capability_is_allowed_for_that_session_only(home):
    from ringfence.ledger.grants import add_grants
    from ringfence.ledger.store import Ledger

    with Ledger() as led:
        add_grants(led, ["longbridge"], "session", "claude-abc123", ttl=3600)
    cmd = "longbridge quote AAPL.US | tail -5"
    assert answer(hook(json.dumps(payload(cmd)), "--profile", "build"))["permissionDecision"] == "allow"
    other = payload(cmd, session_id="zzz")
    assert answer(hook(json.dumps(other), "--profile", "build"))["permissionDecision"] == "ask"
    path_q = payload("./longbridge quote AAPL.US")
    assert answer(hook(json.dumps(path_q), "--profile", "build"))["permissionDecision"] == "ask"


@needs_classifier
def test_deny_rule_denies(home, tmp_path):
    prof = tmp_path / "p.toml"
    prof.write_text('extends = "build"\n[commands]\ndeny = ["rm **"]\n')
    out = answer(hook(json.dumps(payload("rm -rf build")), "--profile", str(prof)))
    assert out["permissionDecision"] == "deny"
    assert "rm" in out["permissionDecisionReason"]


@needs_classifier
def test_wrap_sets_updated_input_keeping_other_fields(home):
    cmd = "longbridge news FIG.US 2>&1 | head -30"
    out = answer(hook(json.dumps(payload(cmd)), "--profile", "build", "--wrap"))
    upd = out["updatedInput"]
    assert upd["description"] == "d" and upd["timeout"] == 120000
    # the wrapped command names this very ringfence, never a bare `ringfence`
    # looked up on the agent's PATH
    assert upd["command"].startswith(shlex.join([
        sys.executable, "-m", "ringfence", "run", "--no-stdin", "--profile", "build",
        "--session",
        "claude-abc123", "--workspace", str(ROOT), "--command-file", "-"]) + " <<'")
    assert upd["command"].split("\n")[1:-1] == [cmd]


@needs_classifier
def test_wrap_judges_in_the_sandbox_context(home):
    # Unwrapped, an ungranted capability runs on the host: ask (Build) or deny
    # (Strict denies host requests). Wrapped, it runs inside the sandbox, which is
    # the boundary: allow, but deny and ask rules still hold.
    cmd = "longbridge news FIG.US 2>&1 | head -30"
    assert answer(hook(json.dumps(payload(cmd)), "--profile", "build"))["permissionDecision"] == "ask"
    assert answer(hook(json.dumps(payload(cmd)), "--profile", "strict"))["permissionDecision"] == "deny"
    for prof in ("build", "strict"):
        out = answer(hook(json.dumps(payload(cmd)), "--profile", prof, "--wrap"))
        assert out["permissionDecision"] == "allow", (prof, out)
        assert out["updatedInput"]["command"].startswith(
            shlex.join([sys.executable, "-m", "ringfence", "run", "--no-stdin", "--profile"]))
    push = answer(hook(json.dumps(payload("git push origin main")), "--profile", "build", "--wrap"))
    assert push["permissionDecision"] == "ask"
    denied = answer(hook(json.dumps(payload("git push origin main")), "--profile", "strict", "--wrap"))
    assert denied["permissionDecision"] == "deny" and "updatedInput" not in denied


@needs_classifier
def test_hook_imports_no_typer_rich_or_lark(home):
    code = textwrap.dedent("""
        import io, json, sys
        from ringfence.fast.hook import main
        sys.stdin = io.TextIOWrapper(io.BytesIO(json.dumps({"tool_name": "Bash",
            "tool_input": {"command": "git status | head"}, "session_id": "s"}).encode()))
        main(["claude-code", "--profile", "build"])
        bad = sorted(m for m in sys.modules if m.split(".")[0] in ("typer", "rich", "lark", "bashlex", "click"))
        print(json.dumps(bad), file=sys.stderr)
    """)
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, timeout=60,
                       env=dict(os.environ, PYTHONPATH=str(ROOT)))
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stderr.decode().strip().splitlines()[-1]) == []


def test_reason_lists_each_finding_once_even_when_the_gate_gives_none():
    from ringfence.classifier.verdict import Finding, Verdict

    v = Verdict("x", "one_time", findings=(Finding("RF101", "substitution", (0, 1)),
                                           Finding("RF105", "writes a file", (0, 1))))
    gate = type("D", (), {"reasons": ("one-time approval required: RF101 substitution",)})()
    assert cc._reason(v, gate, "build", None) == (
        "ringfence (build, one_time): one-time approval required: RF101 substitution; "
        "RF105 writes a file")
    empty = type("D", (), {"reasons": ()})()
    assert cc._reason(v, empty, "build", "note") == (
        "ringfence (build, one_time): RF101 substitution; RF105 writes a file; note")
