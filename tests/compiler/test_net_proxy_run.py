"""Issue 10 §3/§4 through the real `ringfence run`: real tools still reach the
proxy, and every request the proxy forwards was judged.

The origin is a loopback server on the host that records what it received; a
test profile allows exactly ``localhost:PORT``. ``NO_PROXY`` is unset in the
command (it lists localhost), so the tools go through the proxy as they would
for a registry.
"""

from __future__ import annotations

import shutil
import socket
import threading

import pytest

from .sandbox_util import INNER_PY
from .test_proxy import Origin

pytestmark = [
    pytest.mark.sandbox,
    pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap is not installed"),
]


@pytest.fixture
def origin():
    o = Origin()
    yield o
    o.close()


class RawOrigin:
    """A loopback TCP server that records every byte it receives."""

    def __init__(self) -> None:
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(8)
        self.port = self.sock.getsockname()[1]
        self.received = bytearray()
        self.connections = 0
        threading.Thread(target=self._loop, daemon=True).start()

    def _loop(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            self.connections += 1
            threading.Thread(target=self._read, args=(conn,), daemon=True).start()

    def _read(self, conn) -> None:
        with conn:
            conn.settimeout(20)
            try:
                while data := conn.recv(65536):
                    self.received += data
            except OSError:
                pass

    def close(self) -> None:
        self.sock.close()


class KeepAliveOrigin(RawOrigin):
    """Answers every request head it reads and never closes first, as a server that
    ignores ``Connection: close`` would; records every byte and request line."""

    def __init__(self) -> None:
        self.lines: list[str] = []
        super().__init__()

    def _read(self, conn) -> None:
        buf = b""
        with conn:
            conn.settimeout(20)
            try:
                while data := conn.recv(65536):
                    self.received += data
                    buf += data
                    while b"\r\n\r\n" in buf:
                        head, rest = buf.split(b"\r\n\r\n", 1)
                        lower = head.lower()
                        if b"transfer-encoding: chunked" in lower:
                            if b"0\r\n\r\n" not in rest:
                                break
                            rest = rest.split(b"0\r\n\r\n", 1)[1]
                        elif b"content-length:" in lower:
                            n = int(lower.split(b"content-length:")[1].split(b"\r\n")[0])
                            if len(rest) < n:
                                break
                            rest = rest[n:]
                        buf = rest
                        line = head.decode("latin-1").split("\r\n")[0]
                        self.lines.append(line)
                        body = f"hello from {line.split(' ')[1]}".encode()
                        conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n"
                                     % len(body) + body)
            except OSError:
                pass


@pytest.fixture
def keepalive():
    o = KeepAliveOrigin()
    yield o
    o.close()


def _profile(box, port: int):
    path = box.root / "net.toml"
    path.write_text(f'extends = "build"\n[network]\nallow = ["localhost:{port}"]\n')
    return str(path)


def _run(box, port: int, script: str):
    return box.run(_profile(box, port), "-c", "unset NO_PROXY no_proxy\n" + script)


def test_real_tools_reach_the_origin_through_the_proxy(box, origin):
    url = f"http://localhost:{origin.port}"
    script = [f"curl -sS {url}/curl-plain; echo",
              f"curl -sS -p {url}/curl-tunnel; echo",
              f"{INNER_PY} -I -c \"import urllib.request as u; "
              f"print(u.urlopen('{url}/python', timeout=20).read().decode())\""]
    expected = ["/curl-plain", "/curl-tunnel", "/python"]
    if shutil.which("git"):
        script.append(f"git ls-remote {url}/git/repo.git >/dev/null 2>&1; true")
        expected.append("/git/repo.git/info/refs?service=git-upload-pack")
    if shutil.which("npm"):
        script.append(f"npm view rfpkg --registry {url}/npm/ >/dev/null 2>&1; true")
        expected.append("/npm/rfpkg")
    pip = f"{INNER_PY} -I -m pip"
    script.append(f"{pip} download --no-deps --no-cache-dir --disable-pip-version-check "
                  f"--retries 0 --index-url {url}/pip/simple/ -d /tmp/d rfpkg >/dev/null 2>&1; true")
    expected.append("/pip/simple/rfpkg/")
    r = _run(box, origin.port, "\n".join(script))
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines()[:3] == ["hello from /curl-plain", "hello from /curl-tunnel",
                                         "hello from /python"]
    seen = [path for _, path, _ in origin.requests]
    for path in expected:
        assert path in seen, (path, seen, r.stderr)


def _talk(box, port: int, body: str):
    """Run Python in the sandbox that talks to the proxy on 127.0.0.1:3128 by hand."""
    (box.ws / "client.py").write_text(_client(port, body))
    return _run(box, port, f"{INNER_PY} -I client.py")


def _client(port: int, body: str) -> str:
    return (f"import socket, ssl\nPORT = {port}\n"
            "s = socket.create_connection(('127.0.0.1', 3128), timeout=20)\n"
            "def read_all():\n"
            "    out = b''\n"
            "    try:\n"
            "        while chunk := s.recv(65536):\n"
            "            out += chunk\n"
            "    except OSError:\n"
            "        pass\n"
            "    return out\n" + body)


def test_plain_http_after_connect_to_another_host_is_refused(box, keepalive):
    origin = keepalive
    body = ("s.sendall(f'CONNECT localhost:{PORT} HTTP/1.1\\r\\n\\r\\n'.encode())\n"
            "s.sendall(b'GET /fronted HTTP/1.1\\r\\nHost: other.example\\r\\n\\r\\n')\n"
            "print(read_all().decode())\n")
    r = _talk(box, origin.port, body)
    assert r.returncode == 0, r.stderr
    assert "HTTP/1.1 403" in r.stdout and "rule: domain-fronting" in r.stdout
    assert "X-Ringfence-Rule: domain-fronting" in r.stdout
    assert bytes(origin.received) == b""         # upstream never saw it


def test_pipelined_requests_are_each_judged(box, keepalive):
    origin = keepalive
    body = ("s.sendall(f'CONNECT localhost:{PORT} HTTP/1.1\\r\\n\\r\\n'.encode())\n"
            "s.sendall(f'GET /first HTTP/1.1\\r\\nHost: localhost:{PORT}\\r\\n\\r\\n'\n"
            "          'GET /second HTTP/1.1\\r\\nHost: other.example\\r\\n\\r\\n'.encode())\n"
            "print(read_all().decode())\n"
            "s = socket.create_connection(('127.0.0.1', 3128), timeout=20)\n"
            "s.sendall(f'GET http://localhost:{PORT}/plain-first HTTP/1.1\\r\\n'\n"
            "          f'Host: localhost:{PORT}\\r\\n\\r\\n'\n"
            "          'GET http://other.example/plain-second HTTP/1.1\\r\\n'\n"
            "          'Host: other.example\\r\\n\\r\\n'.encode())\n"
            "print(read_all().decode())\n")
    r = _talk(box, origin.port, body)
    assert r.returncode == 0, r.stderr
    assert "hello from /first" in r.stdout and "rule: domain-fronting" in r.stdout
    assert "hello from /plain-first" in r.stdout
    # each allowed request reached upstream; not one byte of either unvetted one did
    assert origin.lines == ["GET /first HTTP/1.1", "GET /plain-first HTTP/1.1"]
    assert b"other.example" not in bytes(origin.received)


TLS_HELLO = ("ctx = ssl.create_default_context()\n"
             "inc, out = ssl.MemoryBIO(), ssl.MemoryBIO()\n"
             "tls = ctx.wrap_bio(inc, out, server_hostname=SNI)\n"
             "try:\n    tls.do_handshake()\nexcept ssl.SSLWantReadError:\n    pass\n"
             "hello = out.read()\n"
             "s.sendall(f'CONNECT localhost:{PORT} HTTP/1.1\\r\\n\\r\\n'.encode())\n"
             "head = s.recv(1000)\n"
             "s.sendall(hello)\n"
             "print(head.split(b'\\r\\n')[0].decode(), len(hello), len(read_all()))\n")


@pytest.mark.parametrize("sni,forwarded", [("other.example", False), ("localhost", True)])
def test_tls_sni_must_name_the_connect_target(box, sni, forwarded):
    raw = RawOrigin()
    try:
        body = f"SNI = {sni!r}\ns.settimeout(3)\n" + TLS_HELLO
        r = _talk(box, raw.port, body)
    finally:
        raw.close()
    assert r.returncode == 0, r.stderr
    status, hello_len, _ = r.stdout.split("\n")[0].rsplit(" ", 2)
    assert status == "HTTP/1.1 200 Connection established"
    if forwarded:
        assert len(raw.received) == int(hello_len)       # the ClientHello, untouched
    else:
        assert bytes(raw.received) == b""               # upstream never saw it
