"""The domain-filtering proxy's added latency for one allowed request.

A loopback HTTP server answers small GETs. The same request is timed directly
(TCP to 127.0.0.1) and through ringfence's real ``ringfence.compiler.proxy.ProxyServer``
(absolute-form HTTP over its private Unix socket, as the in-sandbox relay forwards
it, with ``localhost:PORT`` explicitly allowed), interleaved, in one run. Each
request opens a new connection, as a package manager's first request would.

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


class _Quiet(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.0"

    def do_GET(self):  # noqa: N802 (http.server API)
        body = b"ok\n"
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
    if args.json:
        print(json.dumps(r, indent=2))
    else:
        print(f"direct   median {r['direct_median_s'] * 1e3:.3f} ms\n"
              f"proxied  median {r['proxied_median_s'] * 1e3:.3f} ms\n"
              f"added    {r['added_s'] * 1e3:.3f} ms ({r['ratio']:.2f}x), "
              f"{r['decisions_allowed']} allow decisions recorded")
    return 0


if __name__ == "__main__":
    sys.exit(main())
