"""A private git repository over HTTPS on loopback, for the credential broker tests.

``git http-backend`` (git's own smart-HTTP CGI) behind a small threaded server that
demands HTTP Basic auth with one token, on a certificate from a CA generated with
the openssl CLI (tests/compiler/test_ca_bundles.make_pki). Records every
Authorization header it saw, so a test can tell "sent the token" from "sent
nothing".
"""

from __future__ import annotations

import base64
import os
import shutil
import ssl
import subprocess
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

HOST = "127.0.0.2"
BACKEND = "/usr/lib/git-core/git-http-backend"


def git_backend() -> str | None:
    exec_path = subprocess.run(["git", "--exec-path"], capture_output=True, text=True)
    path = os.path.join(exec_path.stdout.strip(), "git-http-backend")
    return path if os.access(path, os.X_OK) else None


def make_repo(root: Path, content: str) -> Path:
    """A bare repository ``root/private.git`` with one commit holding README."""
    work = root / "src"
    work.mkdir()
    env = {"PATH": os.environ["PATH"], "HOME": str(root), "GIT_CONFIG_NOSYSTEM": "1"}
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@t", "-C", str(work)]
    subprocess.run(["git", "init", "-q", "-b", "main", str(work)], check=True, env=env)
    (work / "README").write_text(content)
    subprocess.run([*git, "add", "README"], check=True, env=env)
    subprocess.run([*git, "commit", "-qm", "init"], check=True, env=env)
    bare = root / "private.git"
    subprocess.run(["git", "clone", "-q", "--bare", str(work), str(bare)], check=True, env=env)
    shutil.rmtree(work)
    return bare


class GitServer:
    def __init__(self, root: Path, cert: Path, key: Path, token: str) -> None:
        backend = git_backend()
        want = "Basic " + base64.b64encode(f"x-access-token:{token}".encode()).decode()
        seen: list[str] = []
        self.seen = seen

        class Handler(BaseHTTPRequestHandler):
            def _serve(self):
                auth = self.headers.get("Authorization", "")
                seen.append(auth)
                if auth != want:
                    self.send_response(401)
                    self.send_header("WWW-Authenticate", 'Basic realm="private"')
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                    return
                path, _, query = self.path.partition("?")
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length) if length else b""
                env = {"PATH": os.environ["PATH"], "GIT_PROJECT_ROOT": str(root),
                       "GIT_HTTP_EXPORT_ALL": "1", "PATH_INFO": path, "QUERY_STRING": query,
                       "REQUEST_METHOD": self.command, "REMOTE_USER": "t",
                       "REMOTE_ADDR": "127.0.0.1",
                       "CONTENT_TYPE": self.headers.get("Content-Type", ""),
                       "CONTENT_LENGTH": str(len(body)), "GIT_CONFIG_NOSYSTEM": "1",
                       "HOME": str(root)}
                out = subprocess.run([backend], input=body, env=env, capture_output=True).stdout
                head, _, payload = out.partition(b"\r\n\r\n")
                status = 200
                headers = []
                for line in head.split(b"\r\n"):
                    name, _, value = line.decode().partition(":")
                    if name.lower() == "status":
                        status = int(value.strip().split()[0])
                    elif name:
                        headers.append((name, value.strip()))
                self.send_response(status)
                for name, value in headers:
                    self.send_header(name, value)
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            do_GET = do_POST = _serve

            def log_message(self, *args):
                pass

        self.httpd = ThreadingHTTPServer((HOST, 0), Handler)
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ctx.load_cert_chain(cert, key)
        self.httpd.socket = ctx.wrap_socket(self.httpd.socket, server_side=True)
        self.port = self.httpd.server_address[1]
        self.url = f"https://{HOST}:{self.port}/private.git"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
