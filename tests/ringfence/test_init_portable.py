"""`init claude-code` as a new user runs it (issue 20 §3, §4): --wrap by default,
portable project settings, personal ones apart, and never Claude's sandbox
around ringfence's."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from ringfence.hooks.portable import nesting

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def proj(tmp_path):
    p = tmp_path / "proj"
    p.mkdir()
    subprocess.run(["git", "init", "-q", str(p)], check=True)
    return p


def rf(proj, *args):
    env = dict(os.environ, PYTHONPATH=str(ROOT), HOME=str(proj.parent / "home"),
               XDG_CONFIG_HOME=str(proj.parent / "cfg"), RINGFENCE_HOME=str(proj.parent / "s"))
    env.pop("CLAUDE_PROJECT_DIR", None)
    env.pop("RINGFENCE_PROFILE", None)
    return subprocess.run([sys.executable, "-m", "ringfence", *args], cwd=proj, env=env,
                          capture_output=True, text=True, timeout=120)


def test_an_empty_repo_gets_a_short_portable_file(proj):
    r = rf(proj, "init", "claude-code")
    assert r.returncode == 0, r.stderr
    shared = proj / ".claude" / "settings.json"
    text = shared.read_text()
    data = json.loads(text)
    # Nothing of this machine: no venv, no interpreter, no absolute path, no home.
    for machine in (str(proj), sys.executable, str(ROOT), str(proj.parent), "//"):
        assert machine not in text, machine
    hooks = {h["command"] for e in data["hooks"].values() for x in e for h in x["hooks"]}
    assert hooks == {"ringfence hook claude-code --wrap"}        # --wrap is the default
    assert "sandbox" not in data
    assert "Edit(/.git/hooks/**)" in data["permissions"]["deny"]   # relative to the project
    assert text.count("\n") <= 100
    lines = text.count("\n")
    assert f"wrote {shared} ({lines} lines, {len(text.encode())} bytes)" in r.stdout
    # Personal settings apart: credential denials of this user.
    local = json.loads((proj / ".claude" / "settings.local.json").read_text())
    assert "Read(~/.ssh/**)" in local["permissions"]["deny"] and "hooks" not in local


def test_switching_to_wrap_removes_the_nesting_sandbox_and_shows_it(proj):
    assert rf(proj, "init", "claude-code", "--no-wrap").returncode == 0
    local = proj / ".claude" / "settings.local.json"
    assert json.loads(local.read_text())["sandbox"]["enabled"] is True
    # A sandbox block the user put in the project settings nests as well.
    shared = proj / ".claude" / "settings.json"
    data = json.loads(shared.read_text())
    data["sandbox"] = {"enabled": True, "autoAllowBashIfSandboxed": True}
    shared.write_text(json.dumps(data))
    ok, detail = nesting(str(proj), str(proj.parent / "home"))
    assert ok                                  # no --wrap hook yet: nothing nests
    r = rf(proj, "init", "claude-code")
    assert r.returncode == 0, r.stderr
    assert r.stdout.count("removing its enabled 'sandbox' block") == 2
    assert '-    "enabled": true,' in r.stdout or '-  "sandbox": {' in r.stdout
    assert "sandbox" not in json.loads(shared.read_text())
    assert "sandbox" not in json.loads(local.read_text())
    assert nesting(str(proj), str(proj.parent / "home"))[0]


def test_doctor_detects_the_nesting(proj):
    claude = proj / ".claude"
    claude.mkdir()
    (claude / "settings.json").write_text(json.dumps({"hooks": {"PreToolUse": [{
        "matcher": "Bash", "hooks": [{"type": "command",
                                      "command": "ringfence hook claude-code --wrap"}]}]}}))
    home = proj.parent / "home" / ".claude"
    home.mkdir(parents=True)
    (home / "settings.json").write_text(json.dumps({"sandbox": {"enabled": True}}))
    r = rf(proj, "doctor", "--json")
    check = next(c for c in json.loads(r.stdout)["checks"]
                 if c["name"] == "Claude Code sandbox nesting")
    assert check["ok"] is False and "RF640" in check["detail"] and check["fix"]
    assert r.returncode != 0
    (home / "settings.json").write_text(json.dumps({"sandbox": {"enabled": False}}))
    r = rf(proj, "doctor", "--json")
    check = next(c for c in json.loads(r.stdout)["checks"]
                 if c["name"] == "Claude Code sandbox nesting")
    assert check["ok"] is True
