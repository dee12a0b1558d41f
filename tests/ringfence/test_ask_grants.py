"""Ask rules are never widened by a grant; a call run outside Claude's sandbox is a
host request (issue 20 §1, §2).

A yes to `git push origin main` must never allow `git push --force origin main`,
`git push --delete origin x` or `git -C ../other push -f`: through the real hook
(PreToolUse ask, then PostToolUse with the same tool_use_id) and through `ringfence
run` approvals, asserted on the remote (the host side): its branches are unchanged.
"""

from __future__ import annotations

import io
import json
import os
import re
import sqlite3
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from ringfence.classifier import classify
from ringfence.session.gate import decide, grant_items
from ringfence.hooks import claude_code as cc
from ringfence.profiles.load import load_profile
from ringfence.rfcore.actions import IRREVERSIBLE
from ringfence.session.ask_grants import exact_token

ROOT = Path(__file__).resolve().parents[2]
GIT_ID = ["-c", "user.email=a@b", "-c", "user.name=a"]
VARIANTS = ("git push --force origin main", "git push --delete origin x",
            "git -C ../other push -f", "git push -f origin main",
            "git push origin main --force", "git push origin +main",
            "cd ../other && git push origin main", "env -C ../other git push origin main",
            "GIT_DIR=../other/.git git push origin main", "git push origin main x",
            "git push", "git send-pack origin main")


def _git(*args, cwd):
    return subprocess.run(["git", *GIT_ID, *args], cwd=cwd, check=True,
                          capture_output=True, text=True).stdout


@pytest.fixture
def repo(tmp_path):
    """A workspace whose `origin` is a local bare repository with `main` and `x`."""
    remote = tmp_path / "remote.git"
    _git("init", "-q", "--bare", "-b", "main", str(remote), cwd=tmp_path)
    ws = tmp_path / "proj"
    other = tmp_path / "other"
    for d in (ws, other):
        _git("init", "-q", "-b", "main", str(d), cwd=tmp_path)
        _git("commit", "-q", "--allow-empty", "-m", "one", cwd=d)
        _git("remote", "add", "origin", str(remote), cwd=d)
    _git("push", "-q", "origin", "main", "main:x", cwd=ws)
    _git("commit", "-q", "--allow-empty", "-m", "two", cwd=ws)   # main is ahead by one
    return tmp_path, ws, remote


def _remote_refs(remote: Path) -> str:
    return _git("for-each-ref", "--format=%(refname) %(objectname)", cwd=remote)


# --- through the hook ------------------------------------------------------------------

@pytest.fixture
def env(tmp_path):
    return {"RINGFENCE_HOME": str(tmp_path / "state"), "XDG_CONFIG_HOME": str(tmp_path / "cfg"),
            "HOME": str(tmp_path / "home"), "PATH": os.environ["PATH"]}


def event(name, command, cwd, tid, sid="sess-A", **tool_input):
    p = {"session_id": sid, "transcript_path": "/tmp/t.jsonl", "cwd": str(cwd),
         "permission_mode": "default", "hook_event_name": name, "tool_name": "Bash",
         "tool_input": {"command": command, "description": "d", **tool_input},
         "tool_use_id": tid}
    if name == "PostToolUse":
        p["tool_response"] = {"stdout": "", "stderr": "", "interrupted": False}
    return p


def send(env, payload, *args):
    out = io.StringIO()
    assert cc.main(list(args), stdin=io.BytesIO(json.dumps(payload).encode()), stdout=out,
                   stderr=io.StringIO(), env=env) == 0
    text = out.getvalue()
    return json.loads(text)["hookSpecificOutput"] if text else None


def pre(env, command, cwd, tid, *args, **kw) -> str:
    return send(env, event("PreToolUse", command, cwd, tid, **kw), *args)["permissionDecision"]


def yes(env, command, cwd, tid, *args, **kw):
    """The person says yes in Claude Code: Pre answered ask, then Post of the same id."""
    assert pre(env, command, cwd, tid, *args, **kw) == "ask"
    assert send(env, event("PostToolUse", command, cwd, tid, **kw), *args) is None


def grants(env):
    c = sqlite3.connect(Path(env["RINGFENCE_HOME"]) / "ledger.db")
    try:
        return c.execute("SELECT key, scope, session FROM grants").fetchall()
    finally:
        c.close()


@pytest.mark.parametrize("args", [(), ("--wrap",)], ids=["host", "wrap"])
def test_hook_yes_to_a_push_covers_that_exact_push_only(env, repo, args):
    tmp, ws, _ = repo
    yes(env, "git push origin main", ws, "toolu_1", *args)
    # The same argv, in the same directory and session: no second prompt.
    assert pre(env, "git push origin main", ws, "toolu_2", *args) == "allow"
    for i, variant in enumerate(VARIANTS):
        assert pre(env, variant, ws, f"toolu_v{i}", *args) == "ask", variant
    # Another directory, another Claude session: a new request.
    assert pre(env, "git push origin main", tmp / "other", "toolu_d", *args) == "ask"
    assert pre(env, "git push origin main", ws, "toolu_s", *args, sid="sess-B") == "ask"
    # What is stored is one exact, session-scoped grant; never the key `git push`.
    rows = grants(env)
    assert len(rows) == 1 and rows[0][1:] == ("session", "claude-sess-A")
    key = rows[0][0]
    assert key.startswith("[sandbox] ") == bool(args)     # unwrapped: a host grant (20b)
    assert "git push" != key and json.loads(key.removeprefix("[sandbox] "))["argv"] == [
        "git", "push", "origin", "main"]


def test_hook_yes_to_a_variant_grants_nothing_wider(env, repo):
    _, ws, _ = repo
    yes(env, "git push --force origin main", ws, "toolu_1")
    assert pre(env, "git push --force origin main", ws, "toolu_2") == "allow"
    assert pre(env, "git push --force origin x", ws, "toolu_3") == "ask"
    assert pre(env, "git push origin main", ws, "toolu_4") == "ask"


def test_hook_yes_to_a_push_after_cd_grants_nothing(env, repo):
    _, ws, _ = repo
    yes(env, "cd . && git push origin main", ws, "toolu_1")
    assert grants(env) == []
    assert pre(env, "cd . && git push origin main", ws, "toolu_2") == "ask"


def test_hook_keys_still_cover_their_decorated_variants(env, repo):
    """Only ask rules and irreversible actions are exact: pytest stays a key grant."""
    _, ws, _ = repo
    yes(env, "make -n", ws, "toolu_1")
    assert pre(env, "make -n 2>&1 | tail -5", ws, "toolu_2") == "allow"


# --- through `ringfence run` approvals ---------------------------------------------------

def rf(*args, cwd, home, session="work"):
    env = dict(os.environ, PYTHONPATH=str(ROOT), RINGFENCE_HOME=str(home / "state"),
               XDG_CONFIG_HOME=str(home / "cfg"), RINGFENCE_SESSION=session)
    env.pop("RINGFENCE_PROFILE", None)
    return subprocess.run([sys.executable, "-m", "ringfence", *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=120)


def _approval_id(stderr: str) -> str:
    m = re.search(r"waiting_for_approval (ap_[a-z2-7]+)", stderr)
    assert m, stderr
    return m.group(1)


def test_run_host_approval_grants_the_exact_push_only(repo):
    tmp, ws, remote = repo
    r = rf("run", "--host", "--profile", "build", "-c", "git push origin main", cwd=ws, home=tmp)
    assert r.returncode == 75, r.stderr
    ok = rf("approve", _approval_id(r.stderr), "--scope", "session", cwd=ws, home=tmp)
    assert ok.returncode == 0, ok.stderr
    before = _remote_refs(remote)
    for variant in VARIANTS:
        r = rf("run", "--host", "--profile", "build", "-c", variant, cwd=ws, home=tmp)
        assert r.returncode == 75, (variant, r.stdout, r.stderr)
    assert _remote_refs(remote) == before           # nothing was force-pushed or deleted
    assert "refs/heads/x " in before
    again = rf("run", "--host", "--profile", "build", "-c", "git push origin main", cwd=ws,
               home=tmp)
    assert again.returncode == 0, again.stderr       # the exact command: no second prompt
    other = rf("run", "--host", "--profile", "build", "-c", "git push origin main", cwd=ws,
               home=tmp, session="elsewhere")
    assert other.returncode == 75


def test_run_always_never_covers_an_ask_rule(repo):
    tmp, ws, remote = repo
    r = rf("run", "--host", "--profile", "build", "-c", "git push origin main", cwd=ws, home=tmp)
    ok = rf("approve", _approval_id(r.stderr), "--scope", "always", cwd=ws, home=tmp)
    assert ok.returncode == 0, ok.stderr
    listed = json.loads(rf("grants", "list", "--json", cwd=ws, home=tmp).stdout)
    assert [g["scope"] for g in listed] == ["session"]      # stored for the session only
    assert listed[0]["exact"]["argv"] == ["git", "push", "origin", "main"]
    assert listed[0]["place"] == "host"
    table = rf("grants", "list", cwd=ws, home=tmp).stdout
    assert "exactly" in table and '{"argv"' not in table      # shown as the command
    r = rf("run", "--host", "--profile", "build", "-c", "git push origin main", cwd=ws,
           home=tmp, session="tomorrow")
    assert r.returncode == 75, r.stderr


def test_run_sandbox_grant_never_covers_a_host_request(repo):
    """A yes given in the sandbox (where=sandbox) is a sandbox grant."""
    from ringfence.ledger.grants import add_grants, active_keys
    from ringfence.ledger.store import Ledger

    led = Ledger(":memory:")
    add_grants(led, ["rm"], "session", "s", place="sandbox")
    assert active_keys(led, "s", place="host") == frozenset()
    assert active_keys(led, "s", place="sandbox") == {"rm"}
    add_grants(led, ["rm"], "session", "s", place="host")
    assert active_keys(led, "s", place="host") == {"rm"}


# --- dangerouslyDisableSandbox -----------------------------------------------------------

@pytest.mark.parametrize("args", [(), ("--wrap",)], ids=["host", "wrap"])
def test_unsandboxed_call_is_a_host_request(env, repo, args):
    tmp, ws, _ = repo
    victim = tmp / "home" / "important"
    if args:     # wrapped, rm runs in ringfence's sandbox without asking
        assert pre(env, "rm -f .coverage", ws, "toolu_1", *args) == "allow"
    else:        # unwrapped it runs on the machine: a yes is a host grant (issue 20b),
        yes(env, "rm -f .coverage", ws, "toolu_1", *args)      # so no sandbox one here
        assert [k for k, _, _ in grants(env)] == ["rm"]
        return
    # A sandbox grant for `rm` never lets `rm -rf ~/important` out of the sandbox.
    for flag in (True, "true", 1, "yes"):
        out = send(env, event("PreToolUse", f"rm -rf {victim}", ws, "toolu_2", *args,
                              dangerouslyDisableSandbox=flag), *args)
        assert out["permissionDecision"] == "ask", flag
        assert "host request" in out["permissionDecisionReason"]
        assert "updatedInput" not in out            # never wrapped: it is a host request
    # The flag off is not a host request.
    out = send(env, event("PreToolUse", "rm -f .coverage", ws, "toolu_3", *args,
                          dangerouslyDisableSandbox=False), *args)
    assert out["permissionDecision"] == "allow"
    # A yes to an unsandboxed call is a host grant, and covers unsandboxed calls.
    yes(env, "rm -f .coverage", ws, "toolu_4", *args, dangerouslyDisableSandbox=True)
    assert pre(env, "rm -f x.log", ws, "toolu_5", *args, dangerouslyDisableSandbox=True) \
        == "allow"
    keys = sorted(k for k, _, _ in grants(env))
    assert keys == ["rm"]


def test_unsandboxed_push_after_a_sandboxed_yes_asks(env, repo):
    _, ws, _ = repo
    yes(env, "git push origin main", ws, "toolu_1", "--wrap")
    assert pre(env, "git push origin main", ws, "toolu_2", "--wrap",
               dangerouslyDisableSandbox=True) == "ask"


def test_strict_denies_an_unsandboxed_call(env, repo):
    _, ws, _ = repo
    assert pre(env, "ls", ws, "toolu_1", "--profile", "strict", "--wrap") == "allow"
    assert pre(env, "rm -f x", ws, "toolu_2", "--profile", "strict", "--wrap",
               dangerouslyDisableSandbox=True) == "deny"


# --- the table and the words --------------------------------------------------------------

def test_irreversible_table_is_observe_ask_and_strict_deny():
    def words(path, key):
        data = tomllib.loads((ROOT / "profiles" / path).read_text())
        return {tuple(p.split()[:-1]) for p in data["commands"][key]}
    assert set(IRREVERSIBLE) == words("observe.toml", "ask") == words("strict.toml", "deny")


def test_irreversible_without_an_ask_rule_is_still_exact(tmp_path):
    """A user profile with no ask rules: a grant of `npm publish` covers nothing."""
    (tmp_path / "p.toml").write_text('extends = "_base"\nhost = "ask"\n')
    prof = load_profile(str(tmp_path / "p.toml"))
    v = classify("npm publish --tag beta")
    assert decide(v, prof, grants=frozenset({"npm publish"}), cwd=str(tmp_path)).decision == "ask"
    items = grant_items(v, prof, str(tmp_path))
    assert items == (exact_token(v, v.capabilities[0], str(tmp_path)),)
    assert decide(v, prof, grants=frozenset(items), cwd=str(tmp_path)).decision == "allow"
    assert decide(classify("npm publish"), prof, grants=frozenset(items),
                  cwd=str(tmp_path)).decision == "ask"


@pytest.mark.parametrize("doc", ["docs/profiles.md", "profiles/observe.toml",
                                 "profiles/build.toml", "profiles/strict.toml",
                                 "profiles/host-assisted.toml", "profiles/_base.toml"])
def test_docs_and_profiles_say_ask_rules_are_never_widened(doc):
    text = " ".join((ROOT / doc).read_text().replace("#", " ").split())
    assert "never widened by a grant" in text, doc
    assert "ask rules can be covered" not in text and "even when a grant would" not in text


@pytest.mark.sandbox
def test_run_sandbox_approval_grants_the_exact_push_only(repo):
    """`ringfence run` (sandboxed) holds `git push` for its ask rule; a session yes
    there covers that exact push in the sandbox, never a variant, never the host."""
    tmp, ws, remote = repo
    r = rf("run", "--profile", "build", "-c", "git push origin main", cwd=ws, home=tmp)
    assert r.returncode == 75, r.stderr
    rf("approve", _approval_id(r.stderr), "--scope", "session", cwd=ws, home=tmp)
    before = _remote_refs(remote)
    for variant in VARIANTS[:3]:
        r = rf("run", "--profile", "build", "-c", variant, cwd=ws, home=tmp)
        assert r.returncode == 75, (variant, r.stderr)
    r = rf("run", "--host", "--profile", "build", "-c", "git push origin main", cwd=ws,
           home=tmp)
    assert r.returncode == 75, r.stderr              # a sandbox yes never covers the host
    assert _remote_refs(remote) == before
    again = rf("run", "--profile", "build", "-c", "git push origin main", cwd=ws, home=tmp)
    assert again.returncode != 75, again.stderr      # the exact command: no second prompt


@pytest.mark.sandbox
def test_wrap_an_exactly_granted_push_runs_and_a_variant_does_not(env, repo):
    """--wrap end to end: after the yes (consent, then Post), the same push is
    allowed and its wrapped run goes ahead in the sandbox; a variant's wrapped run,
    even if Claude ran it, is held (75) by `ringfence run` itself."""
    tmp, ws, remote = repo
    e = dict(env, PYTHONPATH=str(ROOT))

    def bash(script):
        return subprocess.run(["bash", "-c", script], cwd=ws, env=e, capture_output=True,
                              text=True, timeout=120)

    out = send(env, event("PreToolUse", "git push origin main", ws, "toolu_1"), "--wrap")
    assert out["permissionDecision"] == "ask"
    assert bash(out["updatedInput"]["command"]).returncode != 75     # the person's yes
    send(env, event("PostToolUse", out["updatedInput"]["command"], ws, "toolu_1"), "--wrap")
    again = send(env, event("PreToolUse", "git push origin main", ws, "toolu_2"), "--wrap")
    assert again["permissionDecision"] == "allow"
    assert "--hook-consent" not in again["updatedInput"]["command"]
    r = bash(again["updatedInput"]["command"])
    assert r.returncode != 75, r.stderr                # covered by the exact grant in `run`
    variant = send(env, event("PreToolUse", "git push --force origin main", ws, "toolu_3"),
                   "--wrap")
    assert variant["permissionDecision"] == "ask"
    forged = again["updatedInput"]["command"].replace("\ngit push origin main\n",
                                                      "\ngit push --force origin main\n")
    r = bash(forged)
    assert r.returncode == 75, r.stderr
    assert "refs/heads/main" in _remote_refs(remote)


def test_a_reader_grant_never_covers_a_host_read_outside_the_project(env, repo):
    """Without --wrap: a yes to `cat ../other/x` grants `cat`; `cat ~/.ssh/id_rsa`
    still asks, asserted on what the hook answers."""
    tmp, ws, _ = repo
    (tmp / "home" / ".ssh").mkdir(parents=True)
    (tmp / "home" / ".ssh" / "id_rsa").write_text("SECRET\n")
    assert pre(env, "cat README.md", ws, "toolu_0") == "allow"          # in the project
    yes(env, "cat ../other/notes.txt", ws, "toolu_1")
    for i, cmd in enumerate((f"cat {tmp}/home/.ssh/id_rsa", "cat ~/.ssh/id_rsa",
                             "cat ../../home/.ssh/id_rsa", "cd .. && cat home/.ssh/id_rsa",
                             "cat < ~/.ssh/id_rsa", 'cat "$HOME/.ssh/id_rsa"')):
        assert pre(env, cmd, ws, f"toolu_r{i}") == "ask", cmd
    assert pre(env, "cat README.md | head -3", ws, "toolu_2") == "allow"
