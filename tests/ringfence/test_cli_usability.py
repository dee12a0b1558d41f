"""What a new user trips on (issue 14): each numbered CLI defect, through the real CLI."""

from __future__ import annotations

import json
import os
import re
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import ROOT


def rf(*args: str, cwd=None, home: Path | None = None, columns: int = 200,
       stdin: str | None = None, **extra: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, COLUMNS=str(columns), NO_COLOR="1", PYTHONIOENCODING="utf-8",
               **extra)
    for name in ("RINGFENCE_DEBUG", "RINGFENCE_PROFILE", "RINGFENCE_SESSION"):
        env.pop(name, None)
    if home is not None:
        env.update(HOME=str(home), XDG_CONFIG_HOME=str(home / ".config"),
                   XDG_STATE_HOME=str(home / ".state"), RINGFENCE_HOME=str(home / "rf"))
    return subprocess.run([sys.executable, "-m", "ringfence", *args], cwd=cwd or ROOT,
                          env=env, capture_output=True, text=True, input=stdin, timeout=120)


def clean_failure(proc, code: int, *needles: str) -> None:
    assert proc.returncode == code, (proc.returncode, proc.stdout, proc.stderr)
    assert "Traceback" not in proc.stderr and "internal error" not in proc.stderr
    flat = " ".join((proc.stdout + proc.stderr).split())
    for needle in needles:
        assert needle in flat, flat


# 1 ------------------------------------------------------------------------------
@pytest.mark.parametrize("flag", ["--json", "--jsonl"])
def test_explain_json_is_a_usage_error(flag):
    clean_failure(rf("explain", flag, "ls"), 2, "explain is for people", "check --json")


# 2 ------------------------------------------------------------------------------
@pytest.mark.parametrize("value", ["1e400", "nan", "inf", "-inf", "-3", "0", "abc", "",
                                   "99999999999999999999", "1e6"])
def test_run_timeout_is_validated(value):
    # SPEC §4: bad arguments to `run` exit 125 (nothing ran); the message is precise.
    clean_failure(rf("run", "--timeout", value, "--", "true"), 125,
                  "--timeout takes a number of seconds greater than 0 and at most 604800")


@pytest.mark.parametrize("args,message", [
    (("ledger", "list", "--limit", "99999999999999999999"), "--limit takes a whole number"),
    (("ledger", "list", "--limit", "0"), "--limit takes a whole number from 1 to 1000000"),
    (("ledger", "list", "--limit", "2.5"), "--limit takes a whole number"),
    (("ledger", "prune", "--keep", "-1"), "--keep takes a whole number"),
    (("ledger", "prune", "--keep", "1e400"), "--keep takes a whole number"),
    (("check", "--jsonl", "--jobs", "99999999999999999999"), "--jobs takes a whole number"),
    (("check", "--jsonl", "--jobs", "nan"), "--jobs takes a whole number from 1 to 64"),
])
def test_every_numeric_option_is_validated(tmp_path, args, message):
    clean_failure(rf(*args, home=tmp_path, stdin=""), 2, message)


def test_all_numeric_options_use_the_one_validator():
    """Every numeric option of the CLI goes through ringfence.fast.numbers.number."""
    sources = {p: p.read_text() for p in (ROOT / "ringfence").rglob("*.py")}
    users = sorted(str(p.relative_to(ROOT)) for p, s in sources.items()
                   if "numbers import number" in s)
    assert users == ["ringfence/cli/ledger.py", "ringfence/fast/check.py",
                     "ringfence/fast/run.py"]
    for path, text in sources.items():   # no option parsed as a bare int/float elsewhere
        assert not re.search(r"typer\.Option\([^)]*\bmin=", text), path
        assert not re.search(r": (int|float)(\s*\|\s*None)? = typer\.Option", text), path


# 3 ------------------------------------------------------------------------------
def test_same_option_same_spelling(tmp_path):
    ws = tmp_path / "ws"
    ws.mkdir()
    assert rf("check", "-p", "strict", "--json", "git push").returncode == 0
    assert rf("check", "-p", "strict", "git push").returncode == 0
    assert rf("explain", "-p", "strict", "git push").returncode == 0
    proc = rf("profile", "compile", "strict", "-f", "json", "-w", str(ws), home=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["workspace"] == str(ws)
    assert rf("profile", "show", "strict", "-w", str(ws), home=tmp_path).returncode == 0
    assert rf("profile", "list", "-w", str(ws), home=tmp_path).returncode == 0
    for command in (["check"], ["explain"], ["profile", "show"], ["profile", "list"],
                    ["profile", "compile"]):
        out = rf(*command, "--help", columns=80).stdout
        if re.search(r"│ --profile\b", out):
            assert re.search(r"│ --profile\s+-p\b", out), command
        if re.search(r"│ --workspace\b", out):
            assert re.search(r"│ --workspace\s+-w\b", out), command
    run_help = rf("run", "--help").stdout
    assert "-p, --profile" in run_help and "-w, --workspace" in run_help
    payload = json.dumps({"hook_event_name": "PreToolUse", "tool_name": "Bash",
                          "tool_input": {"command": "git push"}, "session_id": "s",
                          "tool_use_id": "t", "cwd": str(ws)})
    short = rf("hook", "claude-code", "-p", "strict", stdin=payload, home=tmp_path)
    assert short.returncode == 0, short.stderr
    long = rf("hook", "claude-code", "--profile", "strict", stdin=payload, home=tmp_path)
    assert (json.loads(short.stdout)["hookSpecificOutput"]["permissionDecision"]
            == json.loads(long.stdout)["hookSpecificOutput"]["permissionDecision"])


# 4 ------------------------------------------------------------------------------
@pytest.mark.parametrize("fmt", ["srt", "seatbelt", "claude-code", "bwrap", "json"])
def test_export_refuses_the_workspaces_run_refuses(tmp_path, fmt):
    home = tmp_path
    (home / "proj").mkdir()
    for args, cwd, code in (([ "-w", "/"], None, "RF616"), (["-w", str(home)], None, "RF616"),
                            (["-w", str(home / "nope")], None, "RF609"), ([], "/", "RF616"),
                            ([], str(home), "RF616")):
        proc = rf("profile", "compile", "build", "--format", fmt, *args, cwd=cwd, home=home)
        clean_failure(proc, 2, code, "nothing was exported")
        assert proc.stdout == ""
    ok = rf("profile", "compile", "build", "--format", fmt, "-w", str(home / "proj"), home=home)
    assert ok.returncode == 0, ok.stderr


# 5 ------------------------------------------------------------------------------
def test_lint_reports_every_problem_in_one_pass(tmp_path):
    p = tmp_path / "p.toml"
    p.write_text('extends = "build"\n[netwrok]\nmode = "proxy"\n'
                 '[commands]\nallow = ["**", "git push {"]\n'
                 '[filesystem]\nwritable = "oops"\n')
    proc = rf("profile", "lint", str(p))
    assert proc.returncode == 1
    codes = re.findall(r": (RF5\d\d) ", proc.stdout)
    assert set(codes) == {"RF501", "RF502", "RF505", "RF507"}, proc.stdout


# 7 ------------------------------------------------------------------------------
@pytest.mark.parametrize("name", ["observe", "build", "strict", "host-assisted", "host"])
def test_profile_show_prints_toml_that_lints_clean_and_loads_back(tmp_path, name):
    from ringfence.profiles.load import load_profile
    from ringfence.profiles.show import profile_summary

    proc = rf("profile", "show", name, columns=80)
    assert proc.returncode == 0, proc.stderr
    assert "null" not in proc.stdout
    # lists are one item per line: only a single long string may pass 80 columns
    assert all(len(line) <= 80 or re.fullmatch(r'[a-z_]+ = "[^"]*"', line)
               for line in proc.stdout.splitlines())
    saved = tmp_path / "saved.toml"
    saved.write_text(proc.stdout)
    lint = rf("profile", "lint", str(saved))
    assert lint.returncode == 0, lint.stdout
    strip = ("name", "source", "extends", "digest")
    again = {k: v for k, v in profile_summary(load_profile(str(saved))).items() if k not in strip}
    assert again == {k: v for k, v in profile_summary(load_profile(name)).items()
                     if k not in strip}
    table = rf("profile", "show", name, "--format", "table", columns=80)
    assert table.returncode == 0 and "filesystem.writable" in table.stdout


# 8 ------------------------------------------------------------------------------
def _all_commands() -> list[list[str]]:
    from ringfence.cli import _register, app
    import typer.main

    _register()
    out = []

    def walk(cmd, path):
        out.append(path)
        for name, sub in sorted(getattr(cmd, "commands", {}).items()):
            walk(sub, path + [name])

    walk(typer.main.get_command(app), [])
    return out


def test_every_help_fits_80_columns_has_an_example_and_no_internal_words():
    commands = _all_commands()
    assert ["ledger", "prune"] in commands and ["run"] in commands
    for path in commands:
        proc = rf(*path, "--help", columns=80)
        assert proc.returncode == 0, (path, proc.stderr)
        wide = [line for line in proc.stdout.splitlines() if len(line) > 80]
        assert not wide, (path, wide)
        assert "<bool>" not in proc.stdout, path
        assert "SPEC" not in proc.stdout, path
        assert re.search(r"(?i)example", proc.stdout), (path, proc.stdout)
    # the hot-path helps are served without typer
    for path in (["run"], ["hook"]):
        assert all(len(line) <= 80 for line in rf(*path, "--help").stdout.splitlines())


# 9 ------------------------------------------------------------------------------
def test_revoking_a_grant_that_does_not_exist_says_so(tmp_path):
    clean_failure(rf("grants", "revoke", "nosuch", home=tmp_path), 2,
                  "no such grant: 'nosuch'", "ringfence grants list")


def test_no_setup_step_installs_what_nothing_uses():
    for path in ("scripts/setup.sh", "README.md", ".ci/run"):
        f = ROOT / path
        if f.exists():
            assert "socat" not in f.read_text(), path


# 10 -----------------------------------------------------------------------------
def _seed(home: Path, n: int) -> list[str]:
    from ringfence.ledger.store import Ledger

    env = {"RINGFENCE_HOME": str(home / "rf")}
    with Ledger(env=env) as led:
        ids = [led.start_run(kind="sandbox", command=f"echo {i}", state="completed",
                             session="s1" if i % 2 else "s2", exit_code=0)
               for i in range(n)]
    return ids


def test_ledger_list_filters(tmp_path):
    ids = _seed(tmp_path, 4)
    proc = rf("ledger", "list", "--json", "--session", "s1", home=tmp_path)
    assert [r["id"] for r in json.loads(proc.stdout)] == [ids[3], ids[1]]
    proc = rf("ledger", "list", "--json", "--state", "failed", home=tmp_path)
    assert json.loads(proc.stdout) == []
    proc = rf("ledger", "list", "--json", "--since", "1h", "--state", "completed",
              home=tmp_path)
    assert len(json.loads(proc.stdout)) == 4
    assert json.loads(rf("ledger", "list", "--json", "--since", "2999-01-01",
                         home=tmp_path).stdout) == []
    clean_failure(rf("ledger", "list", "--state", "stopped", home=tmp_path), 2,
                  "unknown state 'stopped'")
    clean_failure(rf("ledger", "list", "--since", "yesterday", home=tmp_path), 2,
                  "--since takes a date")


def test_ledger_prune_keeps_pending_approvals_and_what_they_need(tmp_path):
    from ringfence.ledger import pending as approvals
    from ringfence.ledger.store import Ledger

    env = {"RINGFENCE_HOME": str(tmp_path / "rf")}
    with Ledger(env=env) as led:
        parent = led.start_run(kind="sandbox", command="git push", state="failed")
        waiting = led.start_run(kind="host", command="git push", state="waiting_for_approval",
                                parent_id=parent)
        approvals.create(led, run_id=waiting, command="git push", keys=["git push"],
                         verdict_class="capability", reasons=["r"], where="host")
        old = [led.start_run(kind="sandbox", command=f"echo {i}", state="completed")
               for i in range(3)]
        newest = led.start_run(kind="sandbox", command="echo new", state="completed")
    proc = rf("ledger", "prune", "--keep", "1", "--json", home=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["runs"] == 3
    with Ledger(env=env) as led:
        left = {r.id for r in led.list_runs(limit=None)}
        assert left == {parent, waiting, newest}
        assert not set(old) & left
        assert [a.id for a in approvals.pending(led)]
        # Append-only still holds everywhere else: a plain DELETE is refused.
        with pytest.raises(sqlite3.DatabaseError, match="append-only"):
            led.conn.execute("DELETE FROM runs WHERE id = ?", (newest,))
        with pytest.raises(sqlite3.DatabaseError, match="append-only"):
            led.conn.execute("DELETE FROM run_events")
        with pytest.raises(sqlite3.DatabaseError, match="append-only"):
            led.conn.execute("UPDATE runs SET command = 'x'")
    clean_failure(rf("ledger", "prune", home=tmp_path), 2, "needs --before WHEN or --keep N")


def test_prune_is_all_or_nothing(tmp_path):
    from ringfence.ledger import prune as ledger_prune
    from ringfence.ledger.store import Ledger

    env = {"RINGFENCE_HOME": str(tmp_path / "rf")}
    with Ledger(env=env) as led:
        ids = [led.start_run(kind="sandbox", command=f"echo {i}", state="completed")
               for i in range(3)]
        # The last delete fails: nothing at all may be gone, and no permit left behind.
        led.conn.execute(f"""CREATE TEMP TRIGGER boom BEFORE DELETE ON main.runs
            WHEN OLD.id = '{ids[0]}' BEGIN SELECT RAISE(ABORT, 'boom'); END""")
        with pytest.raises(sqlite3.DatabaseError, match="boom"):
            ledger_prune.prune(led, keep=0)
        assert led.conn.execute("SELECT COUNT(*) FROM runs").fetchone()[0] == 3
        assert led.conn.execute("SELECT COUNT(*) FROM run_events").fetchone()[0] == 3
        assert led.conn.execute("SELECT COUNT(*) FROM prune_permit").fetchone()[0] == 0


# 11 -----------------------------------------------------------------------------
def test_shell_completion_is_enabled():
    out = rf("--help", columns=80).stdout
    assert "--install-completion" in out
    assert "ringfence --install-completion" in (ROOT / "README.md").read_text()


# 9 (sandboxed) ------------------------------------------------------------------
needs_bwrap = pytest.mark.skipif(__import__("shutil").which("bwrap") is None,
                                 reason="bubblewrap is not installed")


@needs_bwrap
@pytest.mark.sandbox
@pytest.mark.parametrize("profile", ["build", "strict"])   # with and without the relay
def test_a_missing_program_is_named_in_the_users_words(tmp_path, profile):
    (tmp_path / "ws").mkdir()
    # A PATH of searchable dirs only: as another user, an unreadable PATH entry
    # (root's own bin dirs) makes execvp report EACCES (126), as in a shell.
    proc = rf("run", "-p", profile, "-w", str(tmp_path / "ws"), "--", "nosuchprog-xyz",
              home=tmp_path, PATH="/usr/local/bin:/usr/bin:/bin")
    assert proc.returncode == 127
    assert ("ringfence: nosuchprog-xyz: command not found in the sandbox (exit 127)"
            in proc.stderr.splitlines())
    assert "ringfence-relay" not in proc.stderr


@needs_bwrap
@pytest.mark.sandbox
def test_a_timeout_is_recorded_as_its_own_outcome(tmp_path):
    (tmp_path / "ws").mkdir()
    proc = rf("run", "-p", "strict", "-w", str(tmp_path / "ws"), "--timeout", "0.5", "--",
              "sleep", "30", home=tmp_path)
    assert proc.returncode == 124
    (run,) = json.loads(rf("ledger", "list", "--json", home=tmp_path).stdout)
    assert (run["state"], run["outcome"], run["exit_code"]) == ("aborted", "timeout", 124)
    assert "aborted (timeout)" in rf("ledger", "list", home=tmp_path).stdout
    ok = rf("run", "-p", "strict", "-w", str(tmp_path / "ws"), "--", "true", home=tmp_path)
    assert ok.returncode == 0
    latest = json.loads(rf("ledger", "list", "--json", "--limit", "1", home=tmp_path).stdout)
    assert latest[0]["outcome"] is None


def test_ledger_network_rule_says_default_deny_like_the_403_body():
    from rich.console import Console

    from ringfence.cli.ledger import DEFAULT_DENY, show_view
    from ringfence.ledger.store import RunRecord

    rec = RunRecord(id="run_x", created_at=0.0, kind="sandbox", command="curl x")
    rec.events = [{"seq": 1, "at": 0.0, "state": "failed", "exit_code": 7, "note": None,
                   "network": [{"host": "evil.example", "port": 443, "allowed": False,
                                "rule": None},
                               {"host": "pypi.org", "port": 443, "allowed": True,
                                "rule": "pypi.org"}]}]
    console = Console(width=200, record=True)
    console.print(show_view(rec))
    text = console.export_text()
    assert DEFAULT_DENY in text
    proxy = (ROOT / "compiler" / "proxy_serve.py").read_text()
    assert DEFAULT_DENY in proxy     # the same words as the proxy's 403 body


# 6 ------------------------------------------------------------------------------
@pytest.mark.parametrize("columns", [30, 41, 80])
def test_explain_folds_the_command_with_its_markers(columns):
    from rich.cells import cell_len

    command = ("cd src && git push origin main 2>&1 | tail -5; echo \"$(date)\" && "
               "curl https://example.com/" + "x" * 90 + " && echo 日本語日本語日本語")
    proc = rf("explain", command, columns=columns)
    assert proc.returncode == 0, proc.stderr
    block = proc.stdout.split("command\n", 1)[1].split("\nlegend:", 1)[0].split("\n")
    assert all(cell_len(line) <= columns for line in proc.stdout.splitlines())
    # Pairs of (text, markers): the text lines put back together are the command,
    # and every marker sits under a character of the line above it.
    texts, marks = block[0::2], block[1::2]
    assert "".join(texts) == command
    for text, mark in zip(texts, marks):
        assert set(mark) <= set("-~^ ") and cell_len(mark) <= cell_len(text)
    assert marks[0].startswith("~~~~~~    ----")      # `cd src &&` then `git push`


def test_the_numeric_validator_never_raises_anything_else():
    """Any text: a finite value in range, or a UsageError with the option's name."""
    import math

    from hypothesis import given, settings
    from hypothesis import strategies as st

    from ringfence.fast.numbers import number
    from ringfence.rfcore.errors import UsageError

    @settings(max_examples=300, deadline=None)
    @given(st.one_of(st.text(max_size=30), st.floats().map(repr), st.integers().map(str)),
           st.booleans())
    def check(text, whole):
        try:
            value = number(text, option="--x", whole=whole, low=0, above_low=not whole,
                           high=1000)
        except UsageError as exc:
            assert exc.message.startswith("--x takes ")
            return
        assert math.isfinite(value) and 0 <= value <= 1000
        assert isinstance(value, int) if whole else isinstance(value, float)

    check()
