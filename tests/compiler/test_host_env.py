"""A profile's environment reaches only the command inside the sandbox (issue 10 §1).

The attack: a workspace `.ringfence.toml` with `[env] set = { LD_PRELOAD = ... }`
used to lint clean as "tightening", and ringfence then started bwrap ON THE HOST
with that environment, so the library's constructor ran outside every boundary.
Two defences, each tested on the host side with a real shared object built here:

* an overlay that sets a variable which changes what runs is a loosening (RF513);
* whatever a profile sets or passes never reaches a process ringfence starts on the
  host: bwrap gets ``HOST_ENV``, the command's environment goes in via ``--args FD``.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import time

import pytest

from .sandbox_util import CLI

pytestmark = [
    pytest.mark.sandbox,
    pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap is not installed"),
]

EVIL_C = r"""
#include <fcntl.h>
#include <unistd.h>
__attribute__((constructor)) static void rf_evil(void) {
    int fd = open("%s", O_WRONLY | O_CREAT | O_APPEND, 0644);
    if (fd >= 0) { write(fd, "ran\n", 4); close(fd); }
}
"""


def build_evil(box) -> tuple[str, str]:
    """(path of evil.so in the workspace, marker path in a host dir the sandbox cannot write)."""
    gcc = shutil.which("gcc") or shutil.which("cc")
    if gcc is None:
        pytest.skip("no C compiler (gcc/cc) to build the LD_PRELOAD library")
    marker = box.outside / "preload-ran"
    src = box.root / "evil.c"
    src.write_text(EVIL_C % marker)
    so = box.ws / "evil.so"
    subprocess.run([gcc, "-shared", "-fPIC", "-o", str(so), str(src)], check=True,
                   capture_output=True)
    # Self-check: the library really writes the marker when preloaded on the host.
    subprocess.run(["true"], env={"LD_PRELOAD": str(so), "PATH": "/usr/bin:/bin"}, check=True)
    assert marker.read_text() == "ran\n"
    marker.unlink()
    return str(so), str(marker)


def test_overlay_ld_preload_is_refused_and_never_runs_on_host(box):
    so, marker = build_evil(box)
    (box.ws / ".ringfence.toml").write_text(f'[env]\nset = {{ LD_PRELOAD = "{so}" }}\n')
    lint = subprocess.run([*CLI, "profile", "lint", str(box.ws / ".ringfence.toml")],
                          cwd=box.ws, env=box.env(), capture_output=True, text=True)
    assert lint.returncode == 1, lint.stdout + lint.stderr
    assert "RF513" in lint.stdout + lint.stderr
    assert "set the variable 'LD_PRELOAD', which changes what runs" in lint.stdout + lint.stderr
    r = subprocess.run([*CLI, "run", "-w", str(box.ws), "--", "true"], cwd=box.ws,
                       env=box.env(), capture_output=True, text=True, timeout=60)
    assert r.returncode == 125, r.stderr
    assert "RF513" in r.stderr and "[env.set.LD_PRELOAD]" in r.stderr
    assert not os.path.exists(marker)


@pytest.mark.parametrize("base", ["observe", "build"])
def test_profile_env_reaches_the_command_but_never_bwrap(box, base):
    """A user's own profile (outside the workspace: no overlay rule) sets LD_PRELOAD:
    it is inside the sandbox (where the library cannot write the host dir), never in
    the bwrap process that runs on the host."""
    so, marker = build_evil(box)
    prof = box.root / "mine.toml"
    prof.write_text(f'extends = "{base}"\n[env]\nset = {{ LD_PRELOAD = "{so}", '
                    'RF_PROFILE_VALUE = "rf-set-9d1c" }\n')
    r = box.run(str(prof), "-c", "echo \"$LD_PRELOAD|$RF_PROFILE_VALUE\"")
    assert r.returncode == 0, r.stderr
    assert r.stdout == f"{so}|rf-set-9d1c\n"
    assert not os.path.exists(marker)


def _pids_named(token: bytes) -> list[int]:
    out = []
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                with open(f"/proc/{name}/cmdline", "rb") as fh:
                    if token in fh.read():
                        out.append(int(name))
            except OSError:
                pass
    return out


def _prog(pid: int) -> bytes:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as fh:
            return os.path.basename(fh.read().split(b"\0")[0])
    except OSError:
        return b""


def _environ(pid: int) -> bytes:
    with open(f"/proc/{pid}/environ", "rb") as fh:
        return fh.read()


def test_bwrap_process_environ_lacks_profile_values(box):
    prof = box.root / "mine.toml"
    prof.write_text('extends = "observe"\n[env]\nset = { RF_PROFILE_VALUE = "rf-set-77ab" }\n')
    token = "13.371"     # a unique sleep argument names the processes of this run
    proc = subprocess.Popen([*CLI, "run", "-p", str(prof), "-w", str(box.ws), "--",
                             "sleep", token], cwd=box.ws, env=box.env(AWS_PROFILE_MARK="x"),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        end = time.monotonic() + 20
        while True:
            pids = _pids_named(b"\0" + token.encode() + b"\0")
            bwraps = [p for p in pids if _prog(p) == b"bwrap"]
            sleeps = [p for p in pids if _prog(p) == b"sleep"]
            if bwraps and sleeps:
                break
            assert time.monotonic() < end, "the sandboxed sleep never started"
            time.sleep(0.05)
        # The command itself has the profile's value (the check can see it) ...
        assert any(b"RF_PROFILE_VALUE=rf-set-77ab" in _environ(p) for p in sleeps)
        # ... bwrap (host side, and its forks) has neither it nor the caller's env.
        for p in bwraps:
            env = _environ(p)
            assert b"rf-set-77ab" not in env
            assert b"AWS_PROFILE_MARK" not in env
            assert env.split(b"\0")[0].startswith(b"PATH=")
            assert b"--setenv" not in open(f"/proc/{p}/cmdline", "rb").read()
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.communicate(timeout=30)
