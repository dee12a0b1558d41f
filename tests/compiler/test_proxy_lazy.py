"""The proxy listens at start() but starts its asyncio loop only on a first client.

A sandboxed command that never uses the network must not pay for asyncio; one
that does must be served exactly as before; if the loop cannot start, clients
are refused at once (no network, no hang) and the failure is reported.
"""

from __future__ import annotations

import os
import socket
import stat
import subprocess
import sys
import textwrap

from ringfence.compiler.proxy import ProxyServer, make_runtime_dir


def _server(**kw) -> ProxyServer:
    d = make_runtime_dir()
    return ProxyServer(["allowed.test"], [], os.path.join(d, "proxy.sock"),
                       resolver=lambda host, port: [], **kw)


def _ask(path: str, request: bytes) -> bytes:
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as c:
        c.settimeout(20)
        c.connect(path)
        c.sendall(request)
        data = b""
        try:
            while chunk := c.recv(4096):
                data += chunk
        except ConnectionResetError:
            pass
        return data


def test_socket_listens_with_mode_0600_before_any_loop():
    s = _server().start()
    try:
        st = os.stat(s.socket_path)
        assert stat.S_ISSOCK(st.st_mode) and stat.S_IMODE(st.st_mode) == 0o600
        assert s._loop is None                  # nothing started yet
    finally:
        s.stop()
    assert not os.path.exists(s.socket_path)
    os.rmdir(os.path.dirname(s.socket_path))


def test_first_client_is_filtered_like_any_other():
    s = _server().start()
    try:
        reply = _ask(s.socket_path, b"CONNECT evil.test:443 HTTP/1.1\r\nHost: evil.test\r\n\r\n")
    finally:
        s.stop()
    os.rmdir(os.path.dirname(s.socket_path))
    assert reply.startswith(b"HTTP/1.1 403")
    assert [(d.host, d.port, d.allowed) for d in s.decisions] == [("evil.test", 443, False)]
    assert s.failure is None


def test_unused_proxy_never_imports_asyncio():
    code = textwrap.dedent("""
        import os, sys
        from ringfence.compiler.proxy import ProxyServer, make_runtime_dir
        d = make_runtime_dir()
        s = ProxyServer(["allowed.test"], [], os.path.join(d, "p.sock")).start()
        import socket, time
        with socket.socket(socket.AF_UNIX) as probe:   # the relay's start-up probe
            probe.connect(os.path.join(d, "p.sock"))
        time.sleep(0.2)   # let the proxy thread see the probe (not a timing assertion)
        s.stop()
        os.rmdir(d)
        print("asyncio" in sys.modules, os.path.exists(os.path.join(d, "p.sock")))
    """)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout
    assert out.split() == ["False", "False"]


def test_loop_failure_refuses_clients_at_once_and_is_reported(monkeypatch):
    import asyncio

    async def broken(*args, **kwargs):
        raise OSError("simulated loop failure")

    monkeypatch.setattr(asyncio, "start_server", broken)
    s = _server().start()
    try:
        reply = _ask(s.socket_path, b"CONNECT allowed.test:443 HTTP/1.1\r\n\r\n")
    finally:
        s.stop()
    os.rmdir(os.path.dirname(s.socket_path))
    assert reply == b""                          # closed: no tunnel, no hang
    assert s.failure == "OSError: simulated loop failure"
    assert s.decisions == []


def test_relay_probe_does_not_start_the_loop_but_a_client_after_it_is_served():
    s = _server().start()
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as probe:
            probe.connect(s.socket_path)        # what compiler/relay.py does at start-up
        reply = _ask(s.socket_path, b"CONNECT evil.test:443 HTTP/1.1\r\n\r\n")
    finally:
        s.stop()
    os.rmdir(os.path.dirname(s.socket_path))
    assert reply.startswith(b"HTTP/1.1 403")
    assert [(d.host, d.allowed) for d in s.decisions] == [("evil.test", False)]


def test_a_silent_first_client_does_not_block_the_next_one():
    s = _server(head_timeout=30).start()
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as silent:
            silent.connect(s.socket_path)
            reply = _ask(s.socket_path, b"CONNECT evil.test:443 HTTP/1.1\r\n\r\n")
    finally:
        s.stop()
    os.rmdir(os.path.dirname(s.socket_path))
    assert reply.startswith(b"HTTP/1.1 403")


def test_runtime_dir_is_fresh_private_and_under_the_chosen_base(tmp_path, monkeypatch):
    base = tmp_path / "run"
    base.mkdir()
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(base))
    a, b = make_runtime_dir(), make_runtime_dir()
    assert a != b and os.path.dirname(a) == os.path.dirname(b) == str(base)
    for d in (a, b):
        st = os.stat(d)
        assert stat.S_IMODE(st.st_mode) == 0o700 and st.st_uid == os.getuid()
        assert os.path.basename(d).startswith("ringfence-") and len(os.path.basename(d)) == 18
    # An unusable XDG_RUNTIME_DIR falls back to $TMPDIR (tempfile's first choice).
    tmpd = tmp_path / "tmpdir"
    tmpd.mkdir()
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(tmp_path / "missing"))
    monkeypatch.setenv("TMPDIR", str(tmpd))
    c = make_runtime_dir()
    assert os.path.dirname(c) == str(tmpd)
