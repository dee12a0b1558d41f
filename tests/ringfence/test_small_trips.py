"""Issue 23's smaller trips, each as a real user hits it: the ledger's export and hook
listing, messages that bound a huge command, the profile a read failed on, a bad
session TTL, a system dir as workspace, the export's workspace rule, unwrapped errors,
and the exit-code table every command follows (docs/exit-codes.md)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

CLI = [sys.executable, "-m", "ringfence"]
ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def env(tmp_path):
    home = tmp_path / "home"
    home.mkdir()
    return {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(home),
            "RINGFENCE_HOME": str(tmp_path / "state"), "LANG": "C.UTF-8",
            "XDG_CONFIG_HOME": str(home / ".config")}


def cli(env, *args, stdin=None, cwd=None, columns=None):
    e = dict(env)
    if columns:
        e["COLUMNS"] = str(columns)
    return subprocess.run([*CLI, *args], env=e, input=stdin, capture_output=True, text=True,
                          timeout=120, cwd=cwd)


def hook(env, command, cwd):
    payload = {"hook_event_name": "PreToolUse", "tool_name": "Bash", "session_id": "s1",
               "tool_use_id": "toolu_1", "cwd": str(cwd), "tool_input": {"command": command}}
    r = cli(env, "hook", "claude-code", stdin=json.dumps(payload), cwd=cwd)
    assert r.returncode == 0, r.stderr


def test_export_includes_the_hooks_decisions(env, tmp_path):
    hook(env, "git push origin main", tmp_path)
    r = cli(env, "ledger", "export")
    assert r.returncode == 0
    rows = [json.loads(x) for x in r.stdout.splitlines()]
    hooks = [x for x in rows if x.get("kind") == "hook"]
    assert len(hooks) == 1 and hooks[0]["command"] == "git push origin main"
    assert hooks[0]["event"] == "PreToolUse" and hooks[0]["decision"] == "ask"


def test_hook_listing_fits_80_columns(env, tmp_path):
    hook(env, "git push origin main --force && " + "echo padding " * 30, tmp_path)
    r = cli(env, "ledger", "list", "--source", "hook", columns=80)
    assert r.returncode == 0
    lines = r.stdout.splitlines()
    assert all(len(ln) <= 80 for ln in lines), lines
    row = next(ln for ln in lines if "git push" in ln)
    assert "pre" in row and "ask" in row and row.rstrip().endswith("…")


def test_an_empty_filter_is_not_an_empty_ledger(env):
    assert cli(env, "ledger", "list").stdout.strip() == "no runs recorded yet"
    r = cli(env, "ledger", "list", "--state", "denied")
    assert r.returncode == 0
    assert r.stdout.strip() == "no runs match --state denied (no runs recorded yet)"


BIG = "echo " + "a" * 200_000 + " > out.txt"


def test_a_200kb_command_is_shortened_in_the_waiting_message_and_approvals_list(env, tmp_path):
    f = tmp_path / "cmd"
    f.write_text(BIG)
    r = cli(env, "run", "-p", "build", "-w", str(tmp_path), "--command-file", str(f),
            cwd=tmp_path)
    assert r.returncode == 75, r.stderr
    assert len(r.stderr) < 5000 and "more characters" in r.stderr
    listed = cli(env, "approvals", "list", columns=100)
    assert listed.returncode == 0 and len(listed.stdout) < 8000
    assert "morecharacters" in "".join(listed.stdout.split())     # folded to the width
    whole = json.loads(cli(env, "approvals", "list", "--json").stdout)
    assert whole[0]["command"] == BIG                     # kept whole where it is data


def test_cannot_read_profile_names_the_file(tmp_path, monkeypatch):
    from ringfence.profiles import chain
    from ringfence.profiles.load import load_profile
    from ringfence.rfcore.errors import ProfileError

    p = tmp_path / "mine.toml"
    p.write_text('extends = "strict"\n')

    def unreadable(*_a, **_k):
        raise PermissionError(13, "Permission denied")
    monkeypatch.setattr(chain, "open", unreadable, raising=False)
    with pytest.raises(ProfileError) as info:
        load_profile(str(p))
    assert str(p) in info.value.message and "Permission denied" in info.value.message


@pytest.mark.parametrize("ttl", ["abc", "-5", "1e400", "0", "99999999999999999999d"])
def test_a_bad_session_ttl_is_refused_by_every_command(env, tmp_path, ttl):
    e = {**env, "RINGFENCE_SESSION_TTL": ttl}
    r = cli(e, "run", "-p", "strict", "-w", str(tmp_path), "--", "true", cwd=tmp_path)
    assert r.returncode == 125 and "RINGFENCE_SESSION_TTL" in r.stderr
    g = cli(e, "grants", "list")
    assert g.returncode == 2 and "RINGFENCE_SESSION_TTL" in g.stderr
    assert "Traceback" not in r.stderr + g.stderr


def test_a_good_session_ttl_is_taken(env):
    assert cli({**env, "RINGFENCE_SESSION_TTL": "2h"}, "grants", "list").returncode == 0


@pytest.mark.parametrize("ws", ["/etc", "/usr", "/usr/lib", "/boot", "/proc"])
def test_a_system_dir_is_refused_as_a_workspace(env, ws, tmp_path):
    if not os.path.isdir(ws):
        pytest.skip(f"{ws} does not exist here")
    r = cli(env, "run", "-p", "build", "-w", ws, "--", "true", cwd=tmp_path)
    assert r.returncode == 125 and "RF616" in r.stderr and "system directory" in r.stderr
    c = cli(env, "profile", "compile", "build", "--format", "json", "-w", ws)
    assert c.returncode != 0 and "RF616" in c.stderr


def test_a_project_under_usr_src_is_still_a_workspace():
    from ringfence.compiler.writable import _system_dir

    assert _system_dir("/usr/src/app") is None and _system_dir("/usr/local/src/x") is None
    assert _system_dir("/etc/nginx") == "/etc" and _system_dir("/usr/local/bin") == "/usr"


def test_profile_compile_takes_the_git_root_like_run(env, tmp_path):
    repo = tmp_path / "repo"
    (repo / "sub").mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    r = cli(env, "profile", "compile", "strict", "--format", "json", cwd=repo / "sub")
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["workspace"] == str(repo)


def test_errors_are_not_hard_wrapped_off_a_terminal(env):
    long_id = "run_" + "x" * 150
    r = cli(env, "ledger", "show", long_id, columns=80)
    assert r.returncode == 2
    first = r.stderr.splitlines()[0]
    assert long_id in first and first.startswith("error: no run ")


# --- the exit-code table (docs/exit-codes.md) ----------------------------------------

DOC = (ROOT / "docs" / "exit-codes.md").read_text(encoding="utf-8")


def test_the_table_names_every_exit_code_the_error_tree_uses():
    from ringfence.rfcore import errors

    for name in dir(errors):
        if name.startswith("EXIT_"):
            assert f"| {getattr(errors, name)} |" in DOC, name


@pytest.mark.parametrize("args,code", [
    (["ledger", "list", "--limit", "abc"], 2),
    (["ledger", "list", "--state", "nope"], 2),
    (["ledger", "show", "run_nope"], 2),
    (["approve", "ap_nope"], 2),
    (["deny", "ap_nope"], 2),
    (["profile", "show", "nope-no-such-profile"], 125),
    (["profile", "lint", "nope-no-such-profile"], 1),
    (["doctor", "--fix", "sysctl"], 2),
    (["run", "--timeout", "inf", "--", "true"], 125),
    (["run", "--no-such-flag"], 125),
])
def test_each_kind_of_error_exits_as_the_table_says(env, tmp_path, args, code):
    r = cli(env, *args, cwd=tmp_path)
    assert r.returncode == code, (args, r.returncode, r.stderr)
    assert "Traceback" not in r.stderr
    assert r.stderr.strip(), args                  # said, not silent


# --- bounded input (issue 23 item 6) --------------------------------------------------

def test_command_file_from_dev_zero_is_refused_at_its_maximum(env, tmp_path):
    from ringfence.fast.run import MAX_COMMAND_FILE

    r = cli(env, "run", "-p", "strict", "-w", str(tmp_path), "--command-file", "/dev/zero",
            cwd=tmp_path)
    assert r.returncode == 125 and f"longer than {MAX_COMMAND_FILE // 1024} KiB" in r.stderr
    big = tmp_path / "big"
    big.write_bytes(b"true " * (MAX_COMMAND_FILE // 5 + 10))
    r = subprocess.run([*CLI, "run", "-p", "strict", "-w", str(tmp_path), "--command-file", "-"],
                       env=env, stdin=open(big, "rb"), capture_output=True, text=True,
                       timeout=120, cwd=tmp_path)
    assert r.returncode == 125 and "longer than" in r.stderr


def test_hook_stdin_past_its_maximum_is_a_safe_ask(env, tmp_path):
    from ringfence.hooks.claude_code import MAX_HOOK_INPUT

    with open("/dev/zero", "rb") as zero:
        r = subprocess.run([*CLI, "hook", "claude-code"], env=env, stdin=zero,
                           capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert r.returncode == 0
    answer = json.loads(r.stdout)["hookSpecificOutput"]
    assert answer["permissionDecision"] == "ask"
    assert f"more than {MAX_HOOK_INPUT // (1024 * 1024)} MiB" in r.stderr


def test_a_profile_past_its_maximum_is_refused(tmp_path):
    from ringfence.profiles.chain import MAX_PROFILE_BYTES
    from ringfence.profiles.load import load_profile
    from ringfence.rfcore.errors import ProfileError

    p = tmp_path / "huge.toml"
    p.write_text('extends = "strict"\n' + "# pad\n" * (MAX_PROFILE_BYTES // 6 + 10))
    with pytest.raises(ProfileError, match="larger than"):
        load_profile(str(p))
    with pytest.raises(ProfileError, match="not a regular file"):
        load_profile("/dev/zero")
