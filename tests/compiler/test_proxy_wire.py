"""The proxy judges every request on every connection (issue 10 §4): wire parsing
and the fronting rule, against a real ProxyServer and a recording origin."""

from __future__ import annotations

import socket
import ssl

import pytest

from ringfence.compiler.proxy_wire import (Refused, body_framing, client_hello_sni,
                                           looks_like_http, same_host, tls_record_needed)

from .test_net_proxy_run import KeepAliveOrigin
from .test_proxy import Proxy, _read_all, _read_head


def hello(sni: str | None) -> bytes:
    ctx = ssl.create_default_context()
    if sni is None:
        ctx.check_hostname = False
    inc, out = ssl.MemoryBIO(), ssl.MemoryBIO()
    tls = ctx.wrap_bio(inc, out, server_hostname=sni)
    with pytest.raises(ssl.SSLWantReadError):
        tls.do_handshake()
    return out.read()


@pytest.mark.parametrize("sni", ["pypi.org", "xn--bcher-kva.de", None])
def test_client_hello_sni(sni):
    data = hello(sni)
    assert tls_record_needed(data[:3]) == 0 and tls_record_needed(data[:-1]) == 0
    assert tls_record_needed(data) == len(data)
    assert client_hello_sni(data) == sni


def test_client_hello_split_over_two_records():
    data = hello("files.pythonhosted.org")
    body = data[5:]
    split = (b"\x16\x03\x01" + (10).to_bytes(2, "big") + body[:10]
             + b"\x16\x03\x01" + (len(body) - 10).to_bytes(2, "big") + body[10:])
    assert tls_record_needed(split) == len(split)
    assert client_hello_sni(split) == "files.pythonhosted.org"


def test_not_tls_is_refused():
    with pytest.raises(Refused):
        tls_record_needed(b"\x17\x03\x03\x00\x05hello")


@pytest.mark.parametrize("data,expected", [
    (b"GET / HTTP/1.1\r\n", True), (b"\r\nGET / HTTP/1.1\r\n", True), (b"GET / HT", None),
    (b"SSH-2.0-OpenSSH_9.2\r\n", False), (b"EHLO x\r\n", False), (b"\x00\x00\x00\x08", False),
])
def test_looks_like_http(data, expected):
    assert looks_like_http(data) is expected


@pytest.mark.parametrize("headers,expected", [
    ([], 0), ([("Content-Length", "12")], 12), ([("Transfer-Encoding", "chunked")], "chunked"),
])
def test_body_framing(headers, expected):
    assert body_framing(headers) == expected


@pytest.mark.parametrize("headers", [
    [("Content-Length", "3"), ("Transfer-Encoding", "chunked")],      # smuggling
    [("Content-Length", "3"), ("content-length", "4")],
    [("Transfer-Encoding", "gzip, chunked")], [("Content-Length", "-1")],
])
def test_ambiguous_framing_is_refused(headers):
    with pytest.raises(Refused):
        body_framing(headers)


def test_same_host():
    assert same_host("PyPI.org.", None, "pypi.org", 443)
    assert same_host("bücher.de", None, "xn--bcher-kva.de", 443)
    assert not same_host("pypi.org", 8080, "pypi.org", 443)
    assert not same_host("evil.test", None, "pypi.org", 443)


# --- against a real proxy and an origin that keeps connections open -------------

@pytest.fixture
def origin():
    o = KeepAliveOrigin()
    yield o
    o.close()


@pytest.fixture
def proxy(origin):
    p = Proxy([f"localhost:{origin.port}"])
    yield p
    p.close()


def _tunnel(proxy, origin, data: bytes) -> bytes:
    with socket.socket(socket.AF_UNIX) as s:
        s.settimeout(20)
        s.connect(proxy.server.socket_path)
        s.sendall(f"CONNECT localhost:{origin.port} HTTP/1.1\r\n\r\n".encode())
        assert _read_head(s).startswith(b"HTTP/1.1 200")
        s.sendall(data)
        s.shutdown(socket.SHUT_WR)
        return _read_all(s)


def test_chunked_body_then_a_second_request_in_a_tunnel(proxy, origin):
    host = f"localhost:{origin.port}"
    reply = _tunnel(proxy, origin, (
        f"POST /up HTTP/1.1\r\nHost: {host}\r\nTransfer-Encoding: chunked\r\n\r\n"
        "5\r\nhello\r\n0\r\n\r\n"
        f"GET /next HTTP/1.1\r\nHost: {host}\r\n\r\n").encode())
    assert reply.count(b"HTTP/1.1 200") == 2
    assert origin.lines == ["POST /up HTTP/1.1", "GET /next HTTP/1.1"]


def test_a_body_cannot_hide_a_request_from_the_judge(proxy, origin):
    # The Content-Length covers only "abc": what follows is a request of its own.
    host = f"localhost:{origin.port}"
    reply = _tunnel(proxy, origin, (
        f"POST /a HTTP/1.1\r\nHost: {host}\r\nContent-Length: 3\r\n\r\nabc"
        "GET /b HTTP/1.1\r\nHost: evil.test\r\n\r\n").encode())
    assert b"X-Ringfence-Rule: domain-fronting" in reply
    assert b"evil.test" not in bytes(origin.received)
    refused = [d for d in proxy.server.decisions if not d.allowed]
    assert [(d.rule, "'evil.test'" in d.reason) for d in refused] == [("domain-fronting", True)]


@pytest.mark.parametrize("extra", ["Upgrade: websocket\r\nConnection: Upgrade\r\n", ""])
def test_upgrade_or_absolute_url_to_another_host(proxy, origin, extra):
    host = f"localhost:{origin.port}"
    target = "/ws" if extra else "http://evil.test/x"
    reply = _tunnel(proxy, origin, f"GET {target} HTTP/1.1\r\nHost: {host}\r\n{extra}\r\n".encode())
    assert b"403 Forbidden" in reply and origin.received == b""


def test_tls_with_a_foreign_sni_is_closed_and_recorded(proxy, origin):
    reply = _tunnel(proxy, origin, hello("evil.test"))
    assert reply == b"" and origin.received == b""
    last = proxy.server.decisions[-1]
    assert (last.allowed, last.rule) == (False, "domain-fronting")
    assert "TLS ClientHello (SNI)" in last.reason and "evil.test" in last.reason
