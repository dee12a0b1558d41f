"""A grant covers only what its key names (issue 11 §1, §3, §4), attacked through
the real CLI (`ringfence run --host`) and the real hook, asserting on the host.

Each attack first grants the capability for its harmless use in the session,
exactly as a person would after one approval, then sends the harmful variant.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from ringfence.ledger.grants import add_grants
from ringfence.ledger.store import Ledger

ROOT = Path(__file__).resolve().parents[2]
SESSION = "i11"


@pytest.fixture
def host(tmp_path, monkeypatch):
    monkeypatch.setenv("RINGFENCE_HOME", str(tmp_path / "rfhome"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "cfg"))
    monkeypatch.delenv("RINGFENCE_PROFILE", raising=False)
    monkeypatch.setenv("RINGFENCE_SESSION", SESSION)
    ws = tmp_path / "ws"
    ws.mkdir()
    subprocess.run(["git", "init", "-q", str(ws)], check=True)
    subprocess.run(["git", "-C", str(ws), "-c", "user.email=a@b", "-c", "user.name=a",
                    "commit", "-q", "--allow-empty", "-m", "PAYLOAD"], check=True)
    return tmp_path, ws


def grant(*keys: str) -> None:
    with Ledger() as led:
        add_grants(led, list(keys), "session", SESSION, ttl=3600)


def run_host(command: str, cwd: Path) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    return subprocess.run([sys.executable, "-m", "ringfence", "run", "--host", "--profile",
                           "build", "-c", command], capture_output=True, timeout=120,
                          env=env, cwd=cwd)


def test_granted_git_log_does_not_cover_output_file(host):
    tmp, ws = host
    victim = tmp / "bashrc"
    victim.write_text("KEEP\n")
    grant("git log")
    ok = run_host("git log -1 --format=%B", ws)
    assert ok.returncode == 0 and ok.stdout == b"PAYLOAD\n\n", ok.stderr
    r = run_host(f"git log -1 --format=%B --output={victim}", ws)
    assert r.returncode == 75, r.stderr                       # waits for a person
    assert b"RF131" in r.stderr
    assert victim.read_text() == "KEEP\n"


def test_granted_find_does_not_cover_delete(host):
    tmp, ws = host
    keep = ws / "keep"          # in the project: a reader's grant covers reads there only
    (keep / "sub").mkdir(parents=True)
    (keep / "sub" / "f").write_text("x")
    grant("find")
    assert run_host(f"find {keep} -name f", ws).returncode == 0
    r = run_host(f"find {keep} -delete", ws)
    assert r.returncode == 75 and b"RF132" in r.stderr, r.stderr
    assert (keep / "sub" / "f").read_text() == "x"


def test_granted_git_grep_does_not_cover_open_files_in_pager(host):
    tmp, ws = host
    (ws / "a.txt").write_text("hi\n")
    subprocess.run(["git", "-C", str(ws), "add", "a.txt"], check=True)
    grant("git grep")
    marker = tmp / "M"
    r = run_host(f"git grep -O'id > {marker}; true' hi", ws)
    assert r.returncode == 75 and b"RF133" in r.stderr, r.stderr
    assert not marker.exists()


def test_granted_sed_does_not_cover_in_place_edit(host):
    tmp, ws = host
    victim = tmp / "rc"
    victim.write_text("a\n")
    grant("sed")
    r = run_host(f"sed -i s/a/PWNED/ {victim}", ws)
    assert r.returncode == 75 and b"RF131" in r.stderr, r.stderr
    assert victim.read_text() == "a\n"


def test_ringfence_cannot_approve_its_own_request(host):
    tmp, ws = host
    grant("ringfence", "ringfence ledger list", "ringfence approve", "ringfence run")
    pending = run_host("longbridge-not-granted quote X", ws)
    assert pending.returncode == 75
    aid = pending.stderr.split(b"waiting_for_approval ")[1].split()[0].decode()
    for cmd in (f"ringfence approve {aid} --scope always", f"./ringfence approve {aid}",
                f"{sys.executable} -m ringfence approve {aid}",
                "ringfence run --sandbox off -c id", "ringfence grants revoke --all"):
        r = run_host(cmd, ws)
        assert r.returncode == 77, (cmd, r.stderr)            # denied, never waits
        assert b"person's act" in r.stderr, (cmd, r.stderr)
    with Ledger() as led:
        from ringfence.ledger import pending as ap

        assert ap.get(led, aid).status == "pending"


# --- the hook: deny for control commands, ask for effects, quiet in the sandbox ----------------

def hook(command: str, *args: str) -> dict:
    payload = {"session_id": "abc", "cwd": str(ROOT), "hook_event_name": "PreToolUse",
               "tool_name": "Bash", "tool_input": {"command": command}}
    env = dict(os.environ, PYTHONPATH=str(ROOT), RINGFENCE_SESSION=SESSION)
    r = subprocess.run([sys.executable, "-m", "ringfence", "hook", "claude-code", *args],
                       input=json.dumps(payload).encode(), capture_output=True, env=env,
                       timeout=60, cwd=ROOT)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)["hookSpecificOutput"]


@pytest.mark.parametrize("wrap", [(), ("--wrap",)])
def test_hook_denies_ringfence_control_with_a_reason(host, wrap):
    grant("ringfence", "ringfence ledger list", "ringfence approve", "ringfence run")
    for cmd in ("ringfence approve ap_k3j5x7q2mn", "ringfence run --sandbox off -c id",
                "ringfence run --host -- id", "ringfence hook claude-code",
                "RINGFENCE_PROFILE=host ringfence run -c id"):
        out = hook(cmd, "--profile", "build", *wrap)
        assert out["permissionDecision"] == "deny", (cmd, out)
        assert "person's act" in out["permissionDecisionReason"]
        assert "updatedInput" not in out
    assert hook("ringfence ledger list", "--profile", "build", *wrap)["permissionDecision"] \
        == "allow"


def test_hook_asks_for_effects_on_the_host_and_not_in_the_sandbox(host):
    grant("sed", "find", "git log", "sudo")
    for cmd in ("sed -i s/a/b/ src/x.py", "find . -delete", "git log --output=x", "sudo -i",
                "sudo"):
        assert hook(cmd, "--profile", "build")["permissionDecision"] == "ask", cmd
    # the sandbox contains writes inside the workspace: no new question there
    for cmd in ("sed -i s/a/b/ src/x.py", "find build -name '*.o' -delete"):
        assert hook(cmd, "--profile", "build", "--wrap")["permissionDecision"] == "allow", cmd
