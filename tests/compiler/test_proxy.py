"""The domain-filtering proxy, against real loopback HTTP servers."""

from __future__ import annotations

import os
import socket
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from ringfence.compiler.proxy import ProxyServer, address_is_public, default_resolver, make_runtime_dir
from ringfence.rfcore.errors import SandboxError


class Origin:
    """A loopback HTTP server that records every request it receives."""

    def __init__(self) -> None:
        self.requests: list[tuple[str, str, dict]] = []
        origin = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self):
                origin.requests.append((self.command, self.path, dict(self.headers)))
                body = f"hello from {self.path}".encode()
                self.send_response(200)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            do_POST = do_GET

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.server.server_address[1]
        threading.Thread(target=self.server.serve_forever, args=(0.05,), daemon=True).start()

    def close(self):
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def origin():
    o = Origin()
    yield o
    o.close()


class Proxy:
    def __init__(self, allow, deny=(), **kw):
        self.lookups: list[str] = []

        def resolver(host, port):
            self.lookups.append(host)
            if host.endswith(".svc.test"):
                return ["127.0.0.1"]
            return default_resolver(host, port)

        self.dir = make_runtime_dir()
        self.server = ProxyServer(allow, deny, os.path.join(self.dir, "proxy.sock"),
                                  resolver=resolver, **kw).start()

    def request(self, raw: bytes, then: bytes | None = None) -> tuple[bytes, bytes]:
        """Send ``raw``; on a 200 CONNECT send ``then`` through the tunnel."""
        with socket.socket(socket.AF_UNIX) as s:
            s.settimeout(20)
            s.connect(self.server.socket_path)
            s.sendall(raw)
            buf = _read_head(s)
            if then is not None and buf.startswith(b"HTTP/1.1 200"):
                s.sendall(then)
            head, sep, rest = (buf + _read_all(s)).partition(b"\r\n\r\n")
            return head + sep, rest

    def close(self):
        self.server.stop()
        assert not os.path.exists(self.server.socket_path)
        os.rmdir(self.dir)


def _read_head(s):
    buf = b""
    while b"\r\n\r\n" not in buf:
        chunk = s.recv(4096)
        if not chunk:
            return buf
        buf += chunk
    return buf


def _read_all(s):
    out = b""
    while chunk := s.recv(65536):
        out += chunk
    return out


@pytest.fixture
def make_proxy():
    made = []

    def make(*a, **kw):
        made.append(Proxy(*a, **kw))
        return made[-1]
    yield make
    for p in made:
        p.close()


def test_connect_to_explicitly_allowed_localhost(origin, make_proxy):
    p = make_proxy([f"localhost:{origin.port}"])
    head, rest = p.request(f"CONNECT localhost:{origin.port} HTTP/1.1\r\n\r\n".encode(),
                           f"GET /via-tunnel HTTP/1.1\r\nHost: localhost:{origin.port}\r\n"
                           "Connection: close\r\n\r\n".encode())
    assert head == b"HTTP/1.1 200 Connection established\r\n\r\n"
    assert rest.endswith(b"hello from /via-tunnel")
    assert [r[1] for r in origin.requests] == ["/via-tunnel"]
    [d] = p.server.decisions
    assert (d.host, d.port, d.allowed, d.rule) == ("localhost", origin.port, True,
                                                   f"localhost:{origin.port}")
    assert "connected to 127.0.0.1" in d.reason or "connected to ::1" in d.reason


def test_plain_http_forwarding_rewrites_host_and_closes(origin, make_proxy):
    p = make_proxy([f"localhost:{origin.port}"])
    head, rest = p.request(
        f"GET http://localhost:{origin.port}/plain?q=1 HTTP/1.1\r\nHost: evil.example\r\n"
        f"Proxy-Connection: keep-alive\r\nX-Test: 1\r\n\r\n".encode())
    assert head.startswith(b"HTTP/1.0 200") or head.startswith(b"HTTP/1.1 200")
    assert rest == b"hello from /plain?q=1"
    [(method, path, headers)] = origin.requests
    assert (method, path) == ("GET", "/plain?q=1")
    assert headers["Host"] == f"localhost:{origin.port}"
    assert headers["Connection"] == "close" and headers["X-Test"] == "1"
    assert "Proxy-Connection" not in headers


def test_not_allowed_name_is_refused_and_never_resolved(origin, make_proxy):
    p = make_proxy([f"localhost:{origin.port}"])
    head, body = p.request(b"CONNECT secret-data.evil.test:443 HTTP/1.1\r\n\r\n", b"x")
    assert head.startswith(b"HTTP/1.1 403 Forbidden")
    assert b"X-Ringfence-Rule: default-deny" in head
    assert b"retrying will not help" in body
    assert b"default deny (not in the allowlist)" in body
    head, _ = p.request(b"GET http://other.evil.test/x HTTP/1.1\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 403")
    assert p.lookups == []                      # DNS was never asked
    assert origin.requests == []
    assert [(d.host, d.allowed, d.rule) for d in p.server.decisions] == [
        ("secret-data.evil.test", False, None), ("other.evil.test", False, None)]


def test_deny_beats_allow_before_resolution(origin, make_proxy):
    p = make_proxy([f"localhost:{origin.port}"], ["localhost"])
    head, body = p.request(f"CONNECT localhost:{origin.port} HTTP/1.1\r\n\r\n".encode(), b"x")
    assert head.startswith(b"HTTP/1.1 403")
    assert b"rule: localhost\n" in body
    assert p.lookups == [] and origin.requests == []
    [d] = p.server.decisions
    assert (d.allowed, d.rule) == (False, "localhost")


def test_wildcard_does_not_open_private_addresses(origin, make_proxy):
    p = make_proxy(["**.svc.test:*"])
    head, body = p.request(f"CONNECT api.svc.test:{origin.port} HTTP/1.1\r\n\r\n".encode(), b"x")
    assert head.startswith(b"HTTP/1.1 403")
    assert b"non-public addresses (127.0.0.1)" in body and b"rule: **.svc.test:*" in body
    assert p.lookups == ["api.svc.test"]
    assert origin.requests == []                # the loopback listener received nothing
    # the same host listed exactly is allowed through
    p2 = make_proxy([f"api.svc.test:{origin.port}"])
    head, rest = p2.request(f"GET http://api.svc.test:{origin.port}/ok HTTP/1.1\r\n\r\n".encode())
    assert rest == b"hello from /ok"


def test_port_must_match(origin, make_proxy):
    p = make_proxy([f"localhost:{origin.port}"])
    head, _ = p.request(f"CONNECT localhost:{origin.port + 1 if origin.port < 65535 else 1} "
                        f"HTTP/1.1\r\n\r\n".encode(), b"x")
    assert head.startswith(b"HTTP/1.1 403") and p.lookups == []
    head, _ = p.request(b"CONNECT localhost:22 HTTP/1.1\r\n\r\n", b"x")   # unported would be 80/443
    assert head.startswith(b"HTTP/1.1 403")


@pytest.mark.parametrize("raw,status", [
    (b"\x00\x01garbage\r\n\r\n", b"400"),
    (b"GET /origin-form HTTP/1.1\r\nHost: x\r\n\r\n", b"400"),
    (b"GET https://localhost/ HTTP/1.1\r\n\r\n", b"400"),
    (b"CONNECT localhost HTTP/1.1\r\n\r\n", b"400"),
    (b"CONNECT localhost:99999 HTTP/1.1\r\n\r\n", b"400"),
    (b"CONNECT user@localhost:80 HTTP/1.1\r\n\r\n", b"400"),
    (b"GET http://localhost/ HTTP/1.1\r\nbad header\r\n\r\n", b"400"),
    (b"GET http://localhost/ HTTP/1.1\r\nX-A: a\nHost: evil\r\n\r\n", b"400"),
    (b"GET http://localhost/ HTTP/1.1\r\n" + b"X-A: b\r\n" * 101 + b"\r\n", b"431"),
    (b"GET http://localhost/ HTTP/1.1\r\nX-Big: " + b"a" * 20000 + b"\r\n\r\n", b"431"),
])
def test_garbage_gets_precise_errors(make_proxy, raw, status):
    p = make_proxy(["localhost"])
    head, _ = p.request(raw)
    assert head.split(b" ")[1] == status
    assert p.lookups == []


def test_slow_headers_are_cut_off(make_proxy):
    p = make_proxy(["localhost"], head_timeout=0.3)
    head, _ = p.request(b"GET http://localhost/ HTTP/1.1\r\nX-Slow: ")
    assert head.startswith(b"HTTP/1.1 408")


def test_runtime_dir_must_be_private(tmp_path):
    d = tmp_path / "open"
    d.mkdir(mode=0o755)
    os.chmod(d, 0o755)
    with pytest.raises(SandboxError, match="mode 0700"):
        ProxyServer(["localhost"], [], str(d / "p.sock")).start()
    assert not (d / "p.sock").exists()


def test_bad_pattern_is_a_sandbox_error(tmp_path):
    with pytest.raises(SandboxError, match="bare wildcard"):
        ProxyServer(["*"], [], str(tmp_path / "p.sock"))


@pytest.mark.parametrize("addr,public", [
    ("127.0.0.1", False), ("10.1.2.3", False), ("192.168.1.1", False), ("172.16.0.1", False),
    ("169.254.169.254", False), ("fd00:ec2::254", False), ("::1", False), ("0.0.0.0", False),
    ("::", False), ("::ffff:127.0.0.1", False), ("100.64.0.1", False), ("224.0.0.1", False),
    ("fe80::1%eth0", False), ("8.8.8.8", True), ("2606:4700:4700::1111", True),
    ("::ffff:8.8.8.8", True),
])
def test_address_classes(addr, public):
    assert address_is_public(addr) is public


def test_idle_tunnel_is_closed(origin, make_proxy):
    """A keep-alive tunnel where neither side sends anything is closed by the proxy
    (without the idle timeout the read below would block until the socket timeout)."""
    import time
    p = make_proxy([f"localhost:{origin.port}"], idle_timeout=0.2)
    with socket.socket(socket.AF_UNIX) as s:
        s.settimeout(20)
        s.connect(p.server.socket_path)
        s.sendall(f"CONNECT localhost:{origin.port} HTTP/1.1\r\n\r\n".encode())
        assert _read_head(s).startswith(b"HTTP/1.1 200")
        s.sendall(f"GET /a HTTP/1.1\r\nHost: localhost:{origin.port}\r\n\r\n".encode())
        time.sleep(0.5)       # both directions idle longer than the timeout
        # the tunnel was closed for idleness: the server's answer, then EOF
        data = _read_all(s)
    assert data.endswith(b"hello from /a")
    assert [r[1] for r in origin.requests] == ["/a"]
