"""Bad input to run and to the id-taking commands: a precise message and the
documented exit status, never a traceback, and nothing runs."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

CLI = [sys.executable, "-m", "ringfence"]


@pytest.fixture
def env(tmp_path):
    ws = tmp_path / "ws"
    ws.mkdir()
    e = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(tmp_path),
         "RINGFENCE_HOME": str(tmp_path / "state"), "LANG": "C.UTF-8"}
    return ws, e


def rf(env, *args) -> subprocess.CompletedProcess:
    ws, e = env
    # os.fsencode keeps undecodable argv bytes as the raw bytes a shell would pass
    return subprocess.run([*CLI, *args], cwd=ws, env=e, capture_output=True, timeout=60)


@pytest.mark.parametrize("args,message", [
    (("run", "--", ""), b"the program name is empty"),
    (("run", "--sandbox", "off", "--", ""), b"the program name is empty"),
    (("run", "--host", "--", ""), b"the program name is empty"),
    (("run", "-c", "\udcff"), b"not valid UTF-8 (RF008)"),
    (("run", "--", "\udcff"), b"not valid UTF-8 (RF008)"),
])
def test_run_refuses_what_it_cannot_run_faithfully(env, args, message):
    r = rf(env, *args)
    assert r.returncode == 125, r.stderr
    assert message in r.stderr and b"nothing was run" in r.stderr
    assert b"Traceback" not in r.stderr


@pytest.mark.parametrize("args,message", [
    (("ledger", "show", "\udcff"), b"no run"),
    (("approve", "\udcff"), b"no approval"),
    (("deny", "\udcff"), b"no approval"),
])
def test_unknown_undecodable_ids_are_plain_not_found(env, args, message):
    r = rf(env, *args)
    assert r.returncode == 2, r.stderr
    assert message in r.stderr and b"Traceback" not in r.stderr


@pytest.mark.sandbox
def test_a_command_string_starting_with_a_dash_is_a_command_not_a_bash_option(env):
    ws, _ = env
    marker = ws / "ran"
    # bash -c --help would print bash's own usage; the string must be the command
    r = rf(env, "run", "-p", "strict", "-c", f"--touch-nothing; touch {marker}")
    assert b"command not found" in r.stderr and b"invalid option" not in r.stderr
    assert marker.exists()
