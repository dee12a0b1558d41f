"""The per-command hot paths import only the stdlib, tree-sitter and our packages.

SPEC §1: ``hook``, ``check --json 'CMD'`` (and ``--jsonl``) and ``run`` are paid
once per agent command, so typer, rich, lark (the pattern compiler; compiled
patterns are cached), click and bashlex (GPL, test-only) must never load there.
Each fast path runs in a fresh interpreter through the real entry point, and an
atexit hook dumps ``sys.modules`` when it exits.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile

import pytest

from tests.conftest import NO_BWRAP, ROOT, have_bwrap

# mcp, mcp_types, anyio, pydantic: the MCP server's SDK (issue 24) loads only in
# `ringfence mcp`, never on a per-command path.
FORBIDDEN = {"typer", "rich", "lark", "bashlex", "click", "mcp", "mcp_types", "anyio",
             "pydantic"}

PROBE = """\
import atexit, json, os, sys
def _dump():
    with open(os.environ["RF_MODULES_OUT"], "w") as f:
        json.dump(sorted(sys.modules), f)
atexit.register(_dump)
sys.argv = ["ringfence", *json.loads(os.environ["RF_ARGV"])]
from ringfence.__main__ import main
main()
"""


def loaded_modules(tmp_path, argv: list[str], stdin: bytes = b"") -> tuple[int, set[str], str]:
    out = tmp_path / "modules.json"
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    env = dict(os.environ, RF_MODULES_OUT=str(out), RF_ARGV=json.dumps(argv),
               RINGFENCE_HOME=str(home), XDG_STATE_HOME=str(home), HOME=str(home))
    env.pop("RINGFENCE_DEBUG", None)
    proc = subprocess.run([sys.executable, "-c", PROBE], input=stdin, capture_output=True,
                          cwd=tmp_path, env=env, timeout=120)
    assert out.exists(), f"the fast path exited without running atexit: {proc.stderr!r}"
    return proc.returncode, set(json.loads(out.read_text())), proc.stderr.decode()


def forbidden(modules: set[str]) -> set[str]:
    return {m for m in modules if m.split(".")[0] in FORBIDDEN
            or m == "ringfence.mcp" or m.startswith("ringfence.mcp.")}


def needs_engine(test):
    """Marks tests that use the real classifier (they fail, never skip, without it)."""
    return test


@needs_engine
def test_check_json_loads_no_cli_framework(tmp_path):
    rc, mods, err = loaded_modules(tmp_path, ["check", "--json", "ls | head"])
    assert rc == 0, err
    assert "ringfence.classifier.engine" in mods and "tree_sitter" in mods   # it really classified
    assert forbidden(mods) == set()


@needs_engine
def test_check_jsonl_loads_no_cli_framework(tmp_path):
    rc, mods, err = loaded_modules(tmp_path, ["check", "--jsonl"],
                                   stdin=b'"ls | head"\n"cat <<EOF\\nx\\nEOF"\n"git push"\n')
    assert rc == 0, err
    assert "ringfence.classifier.engine" in mods
    assert forbidden(mods) == set()


@needs_engine
def test_check_json_with_profile_loads_no_cli_framework_nor_lark(tmp_path):
    rc, mods, err = loaded_modules(tmp_path, ["check", "--json", "--profile", "build",
                                              "git push 2>&1 | tail -3"])
    assert rc == 0, err
    assert "ringfence.session.gate" in mods and "ringfence.profiles.load" in mods
    assert forbidden(mods) == set()


def test_bad_check_usage_loads_no_cli_framework(tmp_path):
    rc, mods, _ = loaded_modules(tmp_path, ["check", "--json"])
    assert rc == 2
    assert forbidden(mods) == set()


@needs_engine
def test_hook_loads_no_cli_framework(tmp_path):
    event = {"session_id": "s", "hook_event_name": "PreToolUse", "tool_name": "Bash",
             "tool_input": {"command": "ls | head"}, "cwd": str(tmp_path)}
    rc, mods, err = loaded_modules(tmp_path, ["hook", "claude-code"],
                                   stdin=json.dumps(event).encode())
    assert rc == 0, err
    assert forbidden(mods) == set()


@needs_engine
def test_headless_hook_defer_loads_no_cli_framework(tmp_path):
    # --headless (issue 20 §8): an asked command becomes a pending approval (a run, an
    # approval, the ask) and is answered defer, on the same hot path.
    event = {"session_id": "s", "hook_event_name": "PreToolUse", "tool_name": "Bash",
             "tool_use_id": "t", "tool_input": {"command": "git push origin main"},
             "cwd": str(tmp_path)}
    rc, mods, err = loaded_modules(tmp_path, ["hook", "claude-code", "--headless"],
                                   stdin=json.dumps(event).encode())
    assert rc == 0, err
    assert "ringfence.ledger.hook_defer" in mods and "ringfence.ledger.pending" in mods
    assert forbidden(mods) == set()


@pytest.mark.sandbox
@pytest.mark.skipif(not have_bwrap(), reason=NO_BWRAP)
def test_run_loads_no_cli_framework(tmp_path):
    # The workspace lives under /var/tmp: the sandbox's /tmp is private, so a
    # workspace under the host's /tmp would not exist inside it.
    with tempfile.TemporaryDirectory(dir="/var/tmp", prefix="rf-imports-") as work:
        rc, mods, err = loaded_modules(tmp_path, ["run", "-p", "observe", "-w", work,
                                                  "--", "true"])
    assert rc == 0, err
    assert forbidden(mods) == set()


def test_cli_entry_point_is_the_dispatcher():
    # The console script must go through ringfence.__main__ (the dispatcher), or
    # every hot path would pay for typer.
    text = (ROOT / "pyproject.toml").read_text()
    assert 'ringfence = "ringfence.__main__:main"' in text


@pytest.mark.parametrize("args", [["check", "ls | head"], ["explain", "ls | head"],
                                  ["check", "--profile", "strict", "git push"]])
def test_human_check_and_explain_never_load_typer(args):
    # They render with rich, but typer (with pydantic) costs several times Python's
    # start-up: the dispatcher serves them without it.
    code = ("import sys, ringfence.__main__ as m\n"
            "try:\n    m.main(sys.argv[1:])\nexcept SystemExit:\n    pass\n"
            "bad = sorted(x for x in sys.modules if x.split('.')[0] in "
            "('typer', 'click', 'pydantic', 'lark', 'bashlex'))\n"
            "print('LOADED', bad, file=sys.stderr)")
    r = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True,
                       timeout=60)
    assert r.returncode == 0, r.stderr
    assert "LOADED []" in r.stderr
    # and it really rendered the view for people
    assert ("verdict:" in r.stdout) if args[0] == "check" else ("legend:" in r.stdout)


# Modules a sandboxed run that writes nothing never needs: shutil (with bz2, lzma),
# hashlib (OpenSSL), the settle planner and the host-obeyed registry. Each was on
# the path once and cost the per-command start-up several milliseconds.
NOT_ON_QUIET_RUN = {"shutil", "hashlib", "lzma", "bz2", "glob", "ringfence.staging.apply",
                    "ringfence.staging.judges"}


@pytest.mark.sandbox
@pytest.mark.skipif(not have_bwrap(), reason=NO_BWRAP)
@pytest.mark.parametrize("profile", ["strict", "observe", "build"])
def test_a_run_that_writes_nothing_stays_light(tmp_path, profile):
    with tempfile.TemporaryDirectory(dir="/var/tmp", prefix="rf-imports-") as work:
        rc, mods, err = loaded_modules(tmp_path, ["run", "-p", profile, "-w", work,
                                                  "--", "true"])
    assert rc == 0, err
    assert "ringfence.compiler.execute" in mods          # it really ran in the sandbox
    assert mods & NOT_ON_QUIET_RUN == set()


PREWARM_PROBE = """\
import json, os, sys, threading
import ringfence.staging.settle as settle
seen = []
real = settle.prewarm
def prewarm():
    seen.append(threading.current_thread().name)
    real()
settle.prewarm = prewarm
def _dump():
    with open(os.environ["RF_SEEN_OUT"], "w") as f:
        json.dump({"prewarm": seen, "modules": sorted(sys.modules)}, f)
import atexit
atexit.register(_dump)
sys.argv = ["ringfence", *json.loads(os.environ["RF_ARGV"])]
from ringfence.__main__ import main
main()
"""


@pytest.mark.sandbox
@pytest.mark.skipif(not have_bwrap(), reason=NO_BWRAP)
def test_a_fresh_run_that_writes_loads_settle_while_its_command_runs(tmp_path):
    """A plain `ringfence run` whose command writes loads what settling needs in the
    watcher thread, while the command still runs (staging/settle.py prewarm_soon):
    settle then does not pay that load after the command ended. It was lost once
    without a failing test: the run path imported compiler/spare.py, the module that
    marks a Session, and the watcher never started."""
    out = tmp_path / "seen.json"
    home = tmp_path / "home"
    home.mkdir()
    with tempfile.TemporaryDirectory(dir="/var/tmp", prefix="rf-imports-") as work:
        argv = ["run", "-p", "build", "-w", work, "--", "sh", "-c",
                "echo x > written; sleep 1"]
        env = dict(os.environ, RF_SEEN_OUT=str(out), RF_ARGV=json.dumps(argv),
                   RINGFENCE_HOME=str(home), XDG_STATE_HOME=str(home), HOME=str(home))
        env.pop("RINGFENCE_DEBUG", None)
        proc = subprocess.run([sys.executable, "-c", PREWARM_PROBE], capture_output=True,
                              cwd=tmp_path, env=env, timeout=120)
        assert proc.returncode == 0, proc.stderr.decode()
        assert open(os.path.join(work, "written")).read() == "x\n"   # settled, applied
    seen = json.loads(out.read_text())
    assert seen["prewarm"] == ["ringfence-prewarm"]
    assert "ringfence.compiler.spare" not in seen["modules"]     # only a Session loads it


# Off the hook's path (issue 13: cold start within 5x `python -c pass`). Each was
# on it once and was taken off: the schema table and the TOML line scanner (a
# built-in's cache entry carries its line map and its validity), the domain
# parser (built-ins' patterns are checked when the cache is written), the
# `sqlite3` package and `datetime` (the ledger opens `_sqlite3`), the lint and
# backend rule tables (the registry loads one family per looked-up code), shlex
# (only a --wrap rewrite quotes), tomllib (built-ins come from the cache), the
# run-event change sets, the --wrap helpers, the workspace-overlay rules (no
# profile file in the workspace), pathlib (with urllib.parse and ipaddress: paths
# are strings on this path) and threading (the parser is kept per thread id).
HOOK_OFF_PATH = {"pathlib", "urllib.parse", "ipaddress", "threading",
                 "ringfence.profiles.schema", "ringfence.profiles._lines",
                 "ringfence.profiles.domains", "sqlite3", "datetime",
                 "ringfence.rfcore.rules.lint", "ringfence.rfcore.rules.backend", "shlex",
                 "tomllib", "dataclasses", "inspect", "ringfence.ledger.changeset",
                 "ringfence.hooks.wrap", "ringfence.profiles.overlay"}


@needs_engine
def test_hook_with_grants_keeps_heavy_modules_off_its_path(tmp_path):
    from ringfence.ledger import grants
    from ringfence.ledger.store import Ledger

    with Ledger(env={"RINGFENCE_HOME": str(tmp_path / "home")}) as led:
        grants.add_grants(led, ["git status", "tool1", "tool2"], "session", "claude-s")
    out = tmp_path / "modules.json"
    event = {"session_id": "s", "hook_event_name": "PreToolUse", "tool_name": "Bash",
             "tool_use_id": "toolu_1", "tool_input": {"command": "git status 2>&1 | head -20"},
             "cwd": str(tmp_path)}
    env = dict(os.environ, RF_MODULES_OUT=str(out), RINGFENCE_HOME=str(tmp_path / "home"),
               HOME=str(tmp_path / "h"), XDG_CONFIG_HOME=str(tmp_path / "cfg"),
               RF_ARGV=json.dumps(["hook", "claude-code", "--profile", "build"]))
    for name in ("RINGFENCE_DEBUG", "RINGFENCE_SESSION", "RINGFENCE_PROFILE"):
        env.pop(name, None)
    proc = subprocess.run([sys.executable, "-c", PROBE], input=json.dumps(event).encode(),
                          capture_output=True, cwd=tmp_path, env=env, timeout=120)
    assert proc.returncode == 0, proc.stderr
    # It really decided, from the grant in the ledger, and recorded the decision.
    answer = json.loads(proc.stdout)["hookSpecificOutput"]
    assert answer["permissionDecision"] == "allow", answer
    assert "granted" in answer["permissionDecisionReason"]
    with Ledger(env={"RINGFENCE_HOME": str(tmp_path / "home")}) as led:
        assert led.conn.execute("SELECT decision FROM hook_events").fetchall()[0][0] == "allow"
    mods = set(json.loads(out.read_text()))
    assert "_sqlite3" in mods and "ringfence.classifier.engine" in mods
    assert mods & HOOK_OFF_PATH == set()
    assert forbidden(mods) == set()
