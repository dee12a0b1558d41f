"""The in-sandbox relay + seccomp launcher, in a real ``bwrap --unshare-net`` sandbox.

Every test asserts on the host side too: what the loopback origin server saw.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

import ringfence.compiler.relay as relay_mod
from ringfence.compiler import seccomp
from ringfence.compiler.proxy import ProxyServer, make_runtime_dir
from tests.compiler.test_proxy import Origin

PY = "/usr/bin/python3"
RELAY = str(Path(relay_mod.__file__).resolve())
PORT = 3128          # inside the sandbox's own network namespace: always free

pytestmark = [
    pytest.mark.sandbox,
    pytest.mark.skipif(not shutil.which("bwrap") or not os.path.exists(PY)
                       or seccomp.host_arch() is None,
                       reason="needs bwrap, /usr/bin/python3 and a supported architecture"),
]


@pytest.fixture
def origin():
    o = Origin()
    yield o
    o.close()


@pytest.fixture
def proxy(origin):
    rundir = make_runtime_dir()
    p = ProxyServer([f"localhost:{origin.port}"], []).start()
    p.rundir = rundir
    yield p
    p.stop()
    os.close(p.handoff_fd)    # the caller owns the sandbox's end
    if os.path.exists(os.path.join(rundir, "relay.py")):
        os.unlink(os.path.join(rundir, "relay.py"))
    os.rmdir(rundir)          # nothing else may be left behind


def sandbox(proxy, argv, *, seccomp_program: bytes | None = None, relay_args=None, env=None,
            handoff_fd=None):
    """bwrap wired the way the backend does it: /run is a fresh tmpfs (hides host
    sockets), the runtime dir is bound read-only at /run/ringfence, one filter
    (``--seccomp``) for everything in the sandbox."""
    rundir = proxy.rundir
    fd = proxy.handoff_fd if handoff_fd is None else handoff_fd
    cmd = ["bwrap", "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp",
           "--unshare-all", "--die-with-parent", "--new-session",
           "--tmpfs", "/run", "--ro-bind", rundir, "/run/ringfence", "--remount-ro", "/run",
           "--clearenv", "--setenv", "PATH", "/usr/bin:/bin"]
    for k, v in (env or {}).items():
        cmd += ["--setenv", k, v]
    if relay_args is None:
        relay_args = ["--listen", f"127.0.0.1:{PORT}", "--handoff-fd", str(fd)]
    with tempfile.TemporaryFile() as f:
        fds = (fd,)
        if seccomp_program is not None:
            f.write(seccomp_program)
            f.flush()
            f.seek(0)
            cmd += ["--seccomp", str(f.fileno())]
            fds += (f.fileno(),)
        # The relay script goes into the runtime dir that is bound in: the checkout
        # itself may sit under /tmp, which is private inside the sandbox.
        relay_copy = os.path.join(rundir, "relay.py")
        if not os.path.exists(relay_copy):
            shutil.copyfile(RELAY, relay_copy)
        cmd += [PY, "-I", "-S", "/run/ringfence/relay.py", *relay_args, "--", *argv]
        return subprocess.run(cmd, pass_fds=fds, capture_output=True, text=True, timeout=60)


PROXY_ENV = {k: f"http://127.0.0.1:{PORT}" for k in ("HTTP_PROXY", "HTTPS_PROXY", "http_proxy",
                                                      "https_proxy")}


def test_python_through_proxy_reaches_allowed_origin(origin, proxy):
    code = (f"import urllib.request as u; "
            f"print(u.urlopen('http://localhost:{origin.port}/py', timeout=20).read().decode())")
    r = sandbox(proxy, [PY, "-c", code], env=PROXY_ENV)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "hello from /py"
    assert [q[1] for q in origin.requests] == ["/py"]
    assert [(d.host, d.allowed) for d in proxy.decisions] == [("localhost", True)]


@pytest.mark.skipif(not shutil.which("curl"), reason="needs curl")
def test_curl_plain_and_connect(origin, proxy):
    url = f"http://localhost:{origin.port}"
    r = sandbox(proxy, ["sh", "-c", f"curl -sS {url}/plain && echo && curl -sS -p {url}/tunnel"],
                env=PROXY_ENV)
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines() == ["hello from /plain", "hello from /tunnel"]
    assert [q[1] for q in origin.requests] == ["/plain", "/tunnel"]


@pytest.mark.skipif(not shutil.which("curl"), reason="needs curl")
def test_refused_name_gets_403_naming_the_rule(origin, proxy):
    r = sandbox(proxy, ["curl", "-sS", "http://exfil.evil.test/x"], env=PROXY_ENV)
    assert "retrying will not help" in r.stdout
    assert "rule: default deny" in r.stdout
    assert origin.requests == []
    assert [(d.host, d.allowed) for d in proxy.decisions] == [("exfil.evil.test", False)]


def test_direct_connect_to_host_loopback_fails(origin, proxy):
    code = (f"import socket\ntry:\n socket.create_connection(('127.0.0.1', {origin.port}), 5)\n"
            f" print('CONNECTED')\nexcept OSError as e:\n print('refused', e.errno)")
    r = sandbox(proxy, [PY, "-c", code], env=PROXY_ENV)
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith("refused")
    assert origin.requests == []                 # the host listener received nothing


def test_filter_blocks_af_unix_but_the_network_still_works(origin, proxy):
    code = ("import os, socket, urllib.request as u\n"
            "try:\n socket.socket(socket.AF_UNIX); print('unix ok')\n"
            "except PermissionError: print('unix EPERM')\n"
            f"print(u.urlopen('http://localhost:{origin.port}/after-filter', timeout=20).read().decode())\n"
            # the command holds neither the listener nor the hand-off channel
            "print(sorted(os.listdir('/proc/self/fd')))\n")
    prog = seccomp.build_filter(seccomp.host_arch(), deny_unix_sockets=True)
    r = sandbox(proxy, [PY, "-c", code], seccomp_program=prog, env=PROXY_ENV)
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines() == ["unix EPERM", "hello from /after-filter",
                                     "['0', '1', '2', '3']"]      # 3: the listdir itself


def test_exit_status_passes_through(proxy):
    r = sandbox(proxy, ["sh", "-c", "exit 7"])
    assert r.returncode == 7


def test_proxy_that_does_not_take_the_listener_fails_closed(proxy):
    import socket

    ours, theirs = socket.socketpair()
    ours.close()                                  # nobody acknowledges
    try:
        r = sandbox(proxy, ["sh", "-c", "echo RAN"], handoff_fd=theirs.fileno())
    finally:
        theirs.close()
    assert r.returncode == 125
    assert "RAN" not in r.stdout
    assert "cannot hand the listener to the proxy" in r.stderr or \
        "the proxy did not take the listener" in r.stderr
    assert "the command was not run" in r.stderr


def test_missing_handoff_fd_fails_closed(proxy):
    r = sandbox(proxy, ["sh", "-c", "echo RAN"],
                relay_args=["--listen", f"127.0.0.1:{PORT}", "--handoff-fd", "87"])
    assert (r.returncode, r.stdout) == (125, "")
    assert "no proxy hand-off channel on fd 87" in r.stderr


def test_missing_command_is_127(proxy):
    r = sandbox(proxy, ["definitely-not-a-program-xyz"], relay_args=[])
    assert r.returncode == 127
    assert "definitely-not-a-program-xyz" in r.stderr


@pytest.mark.parametrize("args,message", [
    (["true"], "unknown argument 'true'"),
    ([], "missing '--'"),
    (["--"], "no command given"),
    (["--listen", "0.0.0.0:80", "--handoff-fd", "3", "--", "true"], "must be 127.0.0.1:PORT"),
    (["--listen", "127.0.0.1:80", "--", "true"], "go together"),
    (["--listen", "127.0.0.1:80", "--handoff-fd", "x", "--", "true"], "file descriptor number"),
    (["--bogus", "--", "true"], "unknown argument '--bogus'"),
])
def test_bad_arguments_fail_closed(args, message):
    r = subprocess.run([sys.executable, "-I", "-S", RELAY, *args], capture_output=True, text=True,
                       timeout=30)
    assert r.returncode == 125
    assert message in r.stderr



def test_no_process_beside_the_command_holds_a_socket(tmp_path):
    # Through the real `ringfence run -p build`: the sandbox holds bwrap's init and
    # the command, nothing else (no relay copying bytes), and no process there has
    # a socket open (the listener lives in the host's proxy).
    code = ("import os\n"
            "me = str(os.getpid())\n"
            "def link(p, f):\n"
            "    try:\n        return os.readlink(f'/proc/{p}/fd/{f}')\n"
            "    except OSError:\n        return ''\n"
            "for p in sorted(x for x in os.listdir('/proc') if x.isdigit()):\n"
            "    socks = [f for f in os.listdir(f'/proc/{p}/fd') if link(p, f).startswith('socket:')]\n"
            "    print('me' if p == me else p, len(socks))\n")
    ws = tmp_path / "ws"
    ws.mkdir()
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(tmp_path),
           "RINGFENCE_HOME": str(tmp_path / "state")}
    r = subprocess.run([sys.executable, "-m", "ringfence", "run", "-p", "build", "-w", str(ws),
                        "--", PY, "-c", code], cwd=ws, env=env, capture_output=True, text=True,
                       timeout=60)
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines() == ["1 0", "me 0"]
