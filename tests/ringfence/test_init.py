"""`ringfence init claude-code`: idempotent merge into an existing settings.json."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

USER_SETTINGS = {
    "model": "opus",
    "env": {"FOO": "1"},
    "permissions": {"allow": ["Bash(npm run lint)"], "deny": ["Read(./.env)"],
                    "defaultMode": "default"},
    "hooks": {"PostToolUse": [{"matcher": "Edit|Write",
                               "hooks": [{"type": "command", "command": "prettier --write"}]}],
              "Stop": [{"hooks": [{"type": "command", "command": "notify-send done"}]}]},
    "sandbox": {"excludedCommands": ["docker"], "network": {"allowedDomains": ["github.com"]}},
}


@pytest.fixture
def proj(tmp_path):
    p = tmp_path / "proj"
    (p / ".git").mkdir(parents=True)
    (p / ".claude").mkdir()
    (p / ".claude" / "settings.json").write_text(json.dumps(USER_SETTINGS, indent=4))
    return p


def init(proj, *args, home=None):
    env = dict(os.environ, PYTHONPATH=str(ROOT), HOME=str(home or proj.parent / "home"),
               XDG_CONFIG_HOME=str(proj.parent / "cfg"), RINGFENCE_HOME=str(proj.parent / "s"))
    env.pop("CLAUDE_PROJECT_DIR", None)
    env.pop("RINGFENCE_PROFILE", None)
    return subprocess.run([sys.executable, "-m", "ringfence", "init", "claude-code", *args],
                          cwd=proj, env=env, capture_output=True, text=True, timeout=60)


def contains(big, small) -> bool:
    """Every key, list item and value of `small` is in `big` (nothing the user wrote lost)."""
    if isinstance(small, dict):
        return isinstance(big, dict) and all(k in big and contains(big[k], v)
                                             for k, v in small.items())
    if isinstance(small, list):
        return isinstance(big, list) and all(any(contains(b, s) for b in big) for s in small)
    return big == small


def test_round_trip_keeps_every_user_key_and_is_idempotent(proj):
    path = proj / ".claude" / "settings.json"
    local = proj / ".claude" / "settings.local.json"
    before = path.read_text()
    dry = init(proj, "--project", "--profile", "build", "--no-wrap", "--dry-run")
    assert dry.returncode == 0, dry.stderr
    # Without --wrap, Claude Code's own sandbox block goes to the personal settings.
    assert "+    \"failIfUnavailable\": true," in dry.stdout and "not written" in dry.stdout
    assert path.read_text() == before and not local.exists()   # --dry-run changes nothing
    r = init(proj, "--project", "--profile", "build", "--no-wrap")
    assert r.returncode == 0, r.stderr
    data = json.loads(path.read_text())
    assert contains(data, USER_SETTINGS)
    assert json.loads(local.read_text())["sandbox"]["failIfUnavailable"] is True
    for event in ("PreToolUse", "PostToolUse", "PostToolUseFailure", "PermissionRequest",
                  "PermissionDenied"):
        ours = [h["command"] for e in data["hooks"][event] for h in e["hooks"]
                if "hook claude-code" in h["command"]]
        assert ours == ["ringfence hook claude-code --profile build"]
    assert not any(k.startswith("_") for k in data)
    once = path.read_text(), local.read_text()
    again = init(proj, "--project", "--profile", "build", "--no-wrap")
    assert again.returncode == 0 and again.stdout.count("already up to date") == 2
    assert (path.read_text(), local.read_text()) == once
    # Another profile or --wrap updates our entry in place: still one per event.
    wrap = init(proj, "--project", "--profile", "strict", "--wrap")
    assert wrap.returncode == 0, wrap.stderr
    data = json.loads(path.read_text())
    pre = [h["command"] for e in data["hooks"]["PreToolUse"] for h in e["hooks"]]
    assert len(pre) == 1 and pre[0].endswith("--profile strict --wrap")
    assert contains(data, USER_SETTINGS)
    assert "sandbox" not in json.loads(local.read_text())     # never nested (issue 20)


def test_user_scope_leaves_out_workspace_paths(proj, tmp_path):
    home = tmp_path / "home"
    r = init(proj, "--user", "--profile", "build", "--no-wrap", home=home)
    assert r.returncode == 0, r.stderr
    data = json.loads((home / ".claude" / "settings.json").read_text())
    text = json.dumps(data)
    assert str(proj) not in text and "~/.ssh" in text
    assert data["sandbox"]["failIfUnavailable"] is True
    r = init(proj, "--user", "--profile", "build", home=home)      # --wrap, the default
    data = json.loads((home / ".claude" / "settings.json").read_text())
    assert "sandbox" not in data and "removing its enabled 'sandbox' block" in r.stdout


def test_unreadable_settings_change_nothing(proj):
    path = proj / ".claude" / "settings.json"
    path.write_text("{ not json")
    r = init(proj, "--project")
    assert r.returncode == 125 and "cannot read" in r.stderr and "Traceback" not in r.stderr
    assert path.read_text() == "{ not json"
