"""Issue 10 §2/§3: borrowing pid 1's rights, Unix sockets by path, socket families.

Every test attacks through the real `ringfence run` and asserts on the HOST
side (the listener received nothing). Run as root and as the unprivileged user.
"""

from __future__ import annotations

import platform
import shutil
import socket
import subprocess
from pathlib import Path

import pytest

from .sandbox_util import INNER_PY, UnixSpy

pytestmark = [
    pytest.mark.sandbox,
    pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap is not installed"),
]

SANDBOXED = ("observe", "build", "strict", "host-assisted")
ATTACK_C = Path(__file__).with_name("pid1_takeover.c")


def _host_socket_dir(box) -> Path:
    # Outside /run and /tmp, where a desktop keeps agent sockets
    # (~/.1password/agent.sock, ~/.docker/run/docker.sock); not on any mask list.
    d = box.home / ".local" / "agent-run"
    d.mkdir(parents=True)
    d.chmod(0o755)
    return d


@pytest.mark.parametrize("profile", SANDBOXED)
def test_taking_over_pid1_does_not_reach_a_host_unix_socket(box, profile):
    if platform.machine() != "x86_64":
        pytest.skip("the injected code is x86-64 machine code")
    gcc = shutil.which("gcc") or shutil.which("cc")
    if gcc is None:
        pytest.skip("needs a C compiler (gcc) to build the attack program")
    exe = box.root / "pid1_takeover"
    subprocess.run([gcc, "-O0", "-o", str(exe), str(ATTACK_C)], check=True,
                   capture_output=True)
    path = str(_host_socket_dir(box) / "agent.sock")
    spy = UnixSpy(path)
    try:
        r = box.run(profile, "--", str(exe), path)
    finally:
        spy.close()
    out = dict(line.split(" ", 1) for line in r.stdout.splitlines() if " " in line)
    assert spy.accepted == [], r.stdout      # the host listener received nothing
    assert out.get("pidfd_getfd") == "Operation not permitted", r.stdout + r.stderr
    assert out.get("process_vm_writev") == "Operation not permitted"
    # pid 1 may stay writable (bwrap's init is dumpable, "mem_open ok"), but it
    # runs under the command's own filter: whatever code it is made to run, it
    # holds nothing more, so the injected socket()+connect() failed.


@pytest.mark.parametrize("profile", SANDBOXED)
def test_host_unix_sockets_are_unreachable_by_path(box, profile):
    d = _host_socket_dir(box)
    stream = UnixSpy(str(d / "stream.sock"))
    dgram = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    dgram.bind(str(d / "dgram.sock"))
    (d / "dgram.sock").chmod(0o777)
    dgram.settimeout(0.5)
    code = (
        "import socket\n"
        "def attempt(name, f):\n"
        "    try:\n        f(); print(name, 'ok')\n"
        "    except OSError as e:\n        print(name, e.errno)\n"
        "def stream():\n"
        "    s = socket.socket(socket.AF_UNIX); s.connect(%r); s.sendall(b'PWNED')\n"
        "def pair():\n"
        "    a, b = socket.socketpair(socket.AF_UNIX, socket.SOCK_DGRAM)\n"
        "    a.sendto(b'PWNED', %r)\n"
        "attempt('stream', stream)\nattempt('dgram-pair', pair)\n"
    ) % (str(d / "stream.sock"), str(d / "dgram.sock"))
    try:
        r = box.run(profile, "--", INNER_PY, "-I", "-c", code)
        try:
            got = dgram.recv(100)
        except (TimeoutError, socket.timeout):
            got = b""
    finally:
        stream.close()
        dgram.close()
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines() == ["stream 1", "dgram-pair 1"]     # EPERM, both
    assert stream.accepted == [] and got == b""


PROBE_FAMILIES = (
    "import errno, socket\n"
    "for name, fam, typ in (('vsock', 40, 1), ('packet', 17, 3), ('alg', 38, 5),\n"
    "                       ('inet', 2, 1), ('inet6', 10, 1), ('netlink', 16, 3)):\n"
    "    try:\n"
    "        s = socket.socket(fam, typ, 0); s.close(); print(name, 'ok')\n"
    "    except OSError as e:\n"
    "        print(name, errno.errorcode[e.errno])\n"
    "try:\n"
    "    s = socket.socket(40, 1); s.bind((0xFFFFFFFF, 5000)); s.listen(); print('vsock-listen ok')\n"
    "except OSError as e:\n"
    "    print('vsock-listen', errno.errorcode[e.errno])\n"
)


@pytest.mark.parametrize("profile", SANDBOXED)
def test_socket_families_are_an_allowlist(box, profile):
    r = box.run(profile, "--", INNER_PY, "-I", "-c", PROBE_FAMILIES)
    assert r.returncode == 0, r.stderr
    got = dict(line.split() for line in r.stdout.splitlines())
    assert got == {"vsock": "EAFNOSUPPORT", "packet": "EAFNOSUPPORT", "alg": "EAFNOSUPPORT",
                   "inet": "ok", "inet6": "ok", "netlink": "ok",
                   "vsock-listen": "EAFNOSUPPORT"}


@pytest.mark.parametrize("profile", ("build", "strict"))
def test_resolver_and_interfaces_still_work(box, profile):
    # glibc's resolver (files), getaddrinfo with AI_ADDRCONFIG (a netlink probe),
    # and getifaddrs (netlink) through node, python and getent.
    script = [f"getent hosts localhost | head -1",
              f"{INNER_PY} -I -c \"import socket; print(sorted({{a[4][0] for a in "
              "socket.getaddrinfo('localhost', 80, flags=socket.AI_ADDRCONFIG)}))\""]
    if shutil.which("node"):
        script.append("node -e \"console.log(Object.keys(require('os').networkInterfaces()))\"")
    r = box.run(profile, "-c", " && ".join(script))
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert lines[0].split()[0] in ("127.0.0.1", "::1")
    assert "127.0.0.1" in lines[1] or "::1" in lines[1]
    if shutil.which("node"):
        assert lines[2] == "[ 'lo' ]"
