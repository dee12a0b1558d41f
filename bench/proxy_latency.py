"""The domain-filtering proxy's added latency for allowed requests.

A loopback HTTP server answers GETs. Two cases, each timed directly (TCP to
127.0.0.1) and through ringfence's real ``ringfence.compiler.proxy.ProxyServer``
with ``localhost:PORT`` explicitly allowed, interleaved, in one run:

* ``new connection``: a small GET on a fresh connection each time, as a package
  manager's first request would (absolute-form HTTP over the proxy's Unix socket).
* ``keep-alive 65 KB``: sequential GETs of a 65 KB page on one kept-alive
  connection, as an index crawl does, through a CONNECT tunnel on a TCP
  listener handed to the proxy exactly as the in-sandbox launcher hands it
  (``--handoff-fd``); every request in the tunnel is parsed and judged. This is
  the case where Nagle's algorithm on a relaying socket used to add ~25 ms.

Usage: python bench/proxy_latency.py [--requests N] [--json]
"""

from __future__ import annotations

import argparse
import http.server
import json
import os
import socket
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


PAGE = b"x" * (65 * 1024 - 3) + b"ok\n"


class _Quiet(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.0"

    def do_GET(self):  # noqa: N802 (http.server API)
        body = PAGE if self.path == "/page" else b"ok\n"
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


def _exchange(sock: socket.socket, request: bytes) -> bytes:
    sock.sendall(request)
    chunks = []
    while True:
        data = sock.recv(65536)
        if not data:
            break
        chunks.append(data)
    return b"".join(chunks)


class _KeepAlive(_Quiet):
    protocol_version = "HTTP/1.1"


def _get(sock: socket.socket, request: bytes, buf: bytearray) -> bytes:
    """One keep-alive GET: send, then read exactly one Content-Length response."""
    sock.sendall(request)
    while b"\r\n\r\n" not in buf:
        buf += sock.recv(65536)
    head, _, rest = bytes(buf).partition(b"\r\n\r\n")
    length = int(head.lower().split(b"content-length:")[1].split(b"\r\n")[0])
    while len(rest) < length:
        rest += sock.recv(65536)
    buf[:] = rest[length:]
    return rest[:length]


def measure_keepalive(requests: int = 100) -> dict:
    from ringfence.compiler.proxy import ProxyServer

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _KeepAlive)
    port = server.server_address[1]
    threading.Thread(target=server.serve_forever, daemon=True).start()
    proxy = ProxyServer([f"localhost:{port}"], []).start()
    # What compiler/relay.py does inside the sandbox: listen, hand the listener over.
    listener = socket.create_server(("127.0.0.1", 0))
    chan = socket.socket(fileno=os.dup(proxy.handoff_fd))
    socket.send_fds(chan, [b"L"], [listener.fileno()])
    if chan.recv(1) != b"k":
        raise RuntimeError("the proxy did not take the listener")
    chan.close()
    relay_port = listener.getsockname()[1]
    listener.close()
    request = f"GET /page HTTP/1.1\r\nHost: localhost:{port}\r\n\r\n".encode()
    direct, proxied = [], []
    try:
        with socket.create_connection(("127.0.0.1", port)) as d, \
                socket.create_connection(("127.0.0.1", relay_port)) as p:
            p.sendall(f"CONNECT localhost:{port} HTTP/1.1\r\n\r\n".encode())
            pbuf, dbuf = bytearray(), bytearray()
            while b"\r\n\r\n" not in pbuf:
                pbuf += p.recv(4096)
            if not pbuf.startswith(b"HTTP/1.1 200"):
                raise RuntimeError(f"CONNECT refused: {bytes(pbuf[:80])!r}")
            pbuf[:] = bytes(pbuf).partition(b"\r\n\r\n")[2]
            for i in range(requests + 5):
                t0 = time.perf_counter()
                a = _get(d, request, dbuf)
                t1 = time.perf_counter()
                b = _get(p, request, pbuf)
                t2 = time.perf_counter()
                if a != PAGE or b != PAGE:
                    raise RuntimeError("unexpected page")
                if i >= 5:
                    direct.append(t1 - t0)
                    proxied.append(t2 - t1)
    finally:
        proxy.stop()
        os.close(proxy.handoff_fd)
        server.shutdown()
    d, p = statistics.median(direct), statistics.median(proxied)
    return {"requests": requests, "direct_median_s": d, "proxied_median_s": p,
            "added_s": p - d, "ratio": p / d}


def measure(requests: int = 300) -> dict:
    from ringfence.compiler.proxy import ProxyServer

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Quiet)
    port = server.server_address[1]
    threading.Thread(target=server.serve_forever, daemon=True).start()
    rundir = tempfile.mkdtemp(prefix="rf-proxy-bench-")
    os.chmod(rundir, 0o700)
    proxy = ProxyServer([f"localhost:{port}"], [], os.path.join(rundir, "proxy.sock")).start()
    direct_req = f"GET /x HTTP/1.0\r\nHost: localhost:{port}\r\n\r\n".encode()
    proxied_req = (f"GET http://localhost:{port}/x HTTP/1.1\r\nHost: localhost:{port}\r\n"
                   "Connection: close\r\n\r\n").encode()
    direct, proxied = [], []
    try:
        for i in range(requests + 10):
            t0 = time.perf_counter()
            with socket.create_connection(("127.0.0.1", port)) as s:
                a = _exchange(s, direct_req)
            t1 = time.perf_counter()
            with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
                s.connect(proxy.socket_path)
                b = _exchange(s, proxied_req)
            t2 = time.perf_counter()
            if not (a.endswith(b"ok\n") and b.endswith(b"ok\n")):
                raise RuntimeError(f"unexpected answer: direct={a[:80]!r} proxied={b[:80]!r}")
            if i >= 10:                      # warm-up
                direct.append(t1 - t0)
                proxied.append(t2 - t1)
        allowed = sum(1 for d in proxy.decisions if d.allowed)
    finally:
        proxy.stop()
        server.shutdown()
        try:
            os.rmdir(rundir)
        except OSError:
            pass
    d, p = statistics.median(direct), statistics.median(proxied)
    return {"requests": requests, "direct_median_s": d, "proxied_median_s": p,
            "added_s": p - d, "ratio": p / d, "decisions_allowed": allowed}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--requests", type=int, default=300)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    r = measure(args.requests)
    k = measure_keepalive(max(20, args.requests // 3))
    if args.json:
        print(json.dumps({"new_connection": r, "keepalive_65k": k}, indent=2))
    else:
        print(f"new connection, small GET ({r['requests']} requests)\n"
              f"  direct   median {r['direct_median_s'] * 1e3:.3f} ms\n"
              f"  proxied  median {r['proxied_median_s'] * 1e3:.3f} ms\n"
              f"  added    {r['added_s'] * 1e3:.3f} ms ({r['ratio']:.2f}x), "
              f"{r['decisions_allowed']} allow decisions recorded\n"
              f"keep-alive GET of 65 KB, CONNECT tunnel ({k['requests']} requests)\n"
              f"  direct   median {k['direct_median_s'] * 1e3:.3f} ms\n"
              f"  proxied  median {k['proxied_median_s'] * 1e3:.3f} ms\n"
              f"  added    {k['added_s'] * 1e3:.3f} ms ({k['ratio']:.2f}x)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
