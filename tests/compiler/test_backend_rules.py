"""Every RF6xx rule: its bad example (a shell snippet) reports the code, its good one does not.

The examples run for real with bash in a fresh workspace, `ringfence` on PATH.
"""

from __future__ import annotations

import os
import shutil
import subprocess

import pytest

from ringfence.compiler.execute import _seccomp_fd
from ringfence.compiler.spec import SandboxSpec, Seccomp
from ringfence.rfcore.rules import REGISTRY

from .sandbox_util import CLI, make_box

RF6 = [code for code in REGISTRY if code.startswith("RF6") and REGISTRY[code].status == "active"]
# Codes whose bad example needs a host this is not; exercised directly below.
OTHER_HOST = {"RF606", "RF607", "RF643",    # RF643: tests/ringfence/test_apply.py
              "RF622", "RF623",            # a tiny tmpfs as root: tests/compiler/test_faults.py
              "RF625",                     # a pty as stdin: tests/compiler/test_tty_relay.py
              "RF626",                     # no cgroup: tests/compiler/test_limits_attack.py
              "RF629"}                     # no cgroup: tests/compiler/test_memory_cap.py

pytestmark = [
    pytest.mark.sandbox,
    pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap is not installed"),
]


@pytest.fixture
def box():
    b = make_box()
    bindir = b.root / "bin"
    bindir.mkdir()
    wrapper = bindir / "ringfence"
    wrapper.write_text("#!/bin/sh\nexec " + " ".join(CLI) + ' "$@"\n')
    wrapper.chmod(0o755)
    b.bindir = bindir
    yield b
    shutil.rmtree(b.root, ignore_errors=True)


def run_example(box, script: str, name: str) -> subprocess.CompletedProcess:
    ws = box.root / name
    ws.mkdir()
    env = box.env(PATH=f"{box.bindir}:{os.environ.get('PATH', '/usr/bin:/bin')}")
    return subprocess.run(["bash", "-c", script], cwd=ws, env=env, capture_output=True,
                          text=True, timeout=120)


def test_there_are_backend_rules():
    assert len(RF6) >= 15


@pytest.mark.parametrize("code", RF6)
def test_good_example_does_not_report(box, code):
    r = run_example(box, REGISTRY[code].good, "good")
    assert code not in r.stderr, r.stderr
    assert "Traceback" not in r.stderr


@pytest.mark.parametrize("code", [c for c in RF6 if c not in OTHER_HOST])
def test_bad_example_reports(box, code):
    r = run_example(box, REGISTRY[code].bad, "bad")
    assert code in r.stderr, r.stdout + r.stderr
    assert "Traceback" not in r.stderr


def test_seccomp_unavailable_is_a_degradation_not_silence():
    notes: list = []
    spec = SandboxSpec("t", None, (Seccomp(deny_unix_sockets=True),))
    assert _seccomp_fd(spec, "riscv64", notes) is None
    assert [n.code for n in notes] == ["RF606"]
    fd = _seccomp_fd(spec, "x86_64", notes)
    try:
        assert fd is not None and os.read(fd, 8) and len(notes) == 1
    finally:
        os.close(fd)


def test_proxy_that_cannot_start_fails_closed(box, monkeypatch):
    # RF607's example needs root (XDG_RUNTIME_DIR=/proc passes the access check
    # only for root); the failure it stands for, directly: no socket pair.
    import socket as socket_mod

    from ringfence.compiler import host as host_mod
    from ringfence.compiler.compile import compile_profile
    from ringfence.compiler.execute import execute
    from ringfence.profiles.load import load_profile
    from ringfence.rfcore.errors import SandboxError

    def no_pair(*args, **kwargs):
        raise OSError(24, "Too many open files")

    profile = load_profile("build")
    facts = host_mod.probe().for_profile(profile, str(box.ws))
    spec = compile_profile(profile, str(box.ws), facts)
    monkeypatch.setattr(socket_mod, "socketpair", no_pair)
    with pytest.raises(SandboxError, match="RF607") as err:
        execute(spec, ["sh", "-c", "echo RAN"], host=facts, env=box.env(), capture=True)
    assert "Too many open files" in err.value.message
