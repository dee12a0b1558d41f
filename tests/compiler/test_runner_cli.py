"""`ringfence run` exit codes and messages: 125 fail closed, 77 denied; never a traceback."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys

import pytest

from ringfence.profiles.model import Profile
from ringfence.rfcore.errors import SandboxError, UsageError
from ringfence.fast.run import main as fast_run
from ringfence.session.runner import run

from .sandbox_util import CLI

needs_bwrap = pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap is not installed")


def cli(box, *args, env=None):
    return subprocess.run([*CLI, "run", *args], cwd=box.ws, env=env or box.env(),
                          capture_output=True, text=True, timeout=60)


@pytest.mark.parametrize("args,message", [
    ([], "give exactly one of -c 'STRING' or an argv"),
    (["--", ], "give exactly one of -c 'STRING' or an argv"),
    (["-c", "true", "--", "true"], "give exactly one of -c 'STRING' or an argv"),
    (["--bogus", "--", "true"], "unknown option '--bogus'"),
    (["--timeout", "-1", "--", "true"], "--timeout takes a number of seconds greater than 0"),
    (["--timeout", "abc", "--", "true"], "--timeout takes a number of seconds greater than 0"),
    (["--sandbox", "off", "-p", "strict", "--", "true"], "conflicts with --profile"),
    (["-p", "no-such-profile", "--", "true"], "no-such-profile"),
    (["-w", "/nonexistent/dir", "--", "true"], "RF609"),
])
def test_bad_arguments_are_125_with_a_message(box, args, message):
    r = cli(box, *args)
    assert r.returncode == 125, r.stderr
    assert message in r.stderr
    assert "Traceback" not in r.stderr
    assert r.stdout == ""


def test_broken_profile_file_is_125_and_nothing_runs(box):
    bad = box.root / "bad.toml"
    bad.write_text("[filesystem\nwritable = 3\n")
    r = cli(box, "-p", str(bad), "--", "touch", str(box.ws / "MARKER"))
    assert r.returncode == 125
    assert str(bad) in r.stderr and "Traceback" not in r.stderr
    assert not (box.ws / "MARKER").exists()


@needs_bwrap
@pytest.mark.sandbox
def test_denied_by_profile_is_77_and_nothing_runs(box):
    r = cli(box, "-p", "strict", "-c", f"git push origin main; touch {box.ws}/MARKER")
    assert r.returncode == 77, r.stderr
    assert "denied by profile 'strict'" in r.stderr and "git push" in r.stderr
    assert "Traceback" not in r.stderr
    assert not (box.ws / "MARKER").exists()


@needs_bwrap
@pytest.mark.sandbox
def test_ask_rule_is_75_and_nothing_runs(box):
    r = cli(box, "-p", "build", "-c", f"git push origin main; touch {box.ws}/MARKER")
    assert r.returncode == 75, r.stderr
    assert "needs approval under profile 'build'" in r.stderr
    assert not (box.ws / "MARKER").exists()


def test_help_has_examples():
    r = subprocess.run([*CLI, "run", "--help"], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0
    assert "ringfence run -p strict -- python3 script.py" in r.stdout
    assert "125 = could not run safely" in r.stdout


def test_fast_path_parser_errors_are_usage_errors():
    with pytest.raises(UsageError, match="--timeout takes a number of seconds greater than 0"):
        fast_run(["--timeout", "0", "--", "true"])


@needs_bwrap
@pytest.mark.sandbox
def test_library_run_captures_and_reports(box):
    res = run(["sh", "-c", "echo out; echo err >&2; exit 5"], profile="strict",
              workspace=str(box.ws), env=box.env(), capture=True)
    assert (res.exit_code, res.status, res.profile, res.decision) == (5, "failed", "strict", "allow")
    assert res.stdout == b"out\n" and res.stderr == b"err\n"
    assert res.stdout_tail == b"out\n" and res.sandboxed is True
    assert len(res.spec_digest) == 64
    res = run(command="echo hi | tr a-z A-Z", profile="strict", workspace=str(box.ws),
              env=box.env(), capture=True, stdin=b"")
    assert (res.exit_code, res.stdout) == (0, b"HI\n")
    res = run(["cat"], profile="strict", workspace=str(box.ws), env=box.env(), capture=True,
              stdin=b"fed through stdin\n")
    assert res.stdout == b"fed through stdin\n"


@needs_bwrap
@pytest.mark.sandbox
def test_sandbox_off_runs_on_the_host_and_says_so(box):
    target = box.outside / "host-write"
    r = cli(box, "--sandbox", "off", "--", "touch", str(target))
    assert r.returncode == 0, r.stderr
    assert target.exists()              # really on the host: outside the workspace
    assert "RF612" in r.stderr


def test_profile_object_is_accepted_and_bad_types_are_usage_errors(box):
    with pytest.raises(UsageError, match="profile must be"):
        run(["true"], profile=42, workspace=str(box.ws), env=box.env())
    with pytest.raises(UsageError, match="either an argv or a command"):
        run(["true"], command="true", profile=Profile("x"), workspace=str(box.ws))


@pytest.mark.parametrize("where", ["home", "root", "slash"])
def test_a_workspace_containing_home_is_refused_at_run_time(box, where):
    ws = {"home": box.home, "root": box.root, "slash": "/"}[where]
    with pytest.raises(SandboxError, match="RF616"):
        run(["touch", str(box.home / "MARKER")], profile="strict", workspace=str(ws),
            env=box.env())
    assert not (box.home / "MARKER").exists()
    # observe does not make it writable, but would show the whole home: refused too
    with pytest.raises(SandboxError, match="RF616"):
        run(["true"], profile="observe", workspace=str(ws), env=box.env(), capture=True)
