"""TLS behind an intercepting proxy works in Build (issue 10 §8), on loopback only.

A local HTTPS server (127.0.0.2, a certificate from a CA generated here with the
openssl CLI) stands in for a corporate TLS-intercepting proxy: its certificate is
trusted only through the CA bundle variables. The CA file sits under the host's
/tmp, which every sandbox hides behind its private /tmp, as on CI machines.

* with the variables passed, curl, Python's urllib, `pip download` and
  `pip install` succeed inside Build (through ringfence's proxy: 127.0.0.2:PORT is
  allowed explicitly); without them they fail with an unknown issuer;
* only the one certificate file is made readable, never its directory, and a
  "CA" file that holds a private key under a read-denied dir stays hidden (RF621);
* a value set by the profile (env.set) never makes a file readable.
"""

from __future__ import annotations

import hashlib
import io
import os
import shutil
import ssl
import subprocess
import tempfile
import threading
import zipfile
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from .sandbox_util import INNER_PY, make_box

pytestmark = [
    pytest.mark.sandbox,
    pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap is not installed"),
    pytest.mark.skipif(shutil.which("openssl") is None,
                       reason="the openssl CLI is needed to generate the test CA"),
]

HOST = "127.0.0.2"          # loopback, and not in the sandbox's NO_PROXY
CA_VARS = ("SSL_CERT_FILE", "REQUESTS_CA_BUNDLE", "CURL_CA_BUNDLE", "PIP_CERT",
           "NODE_EXTRA_CA_CERTS", "GIT_SSL_CAINFO")


def _openssl(*args: str, cwd: Path) -> None:
    subprocess.run(["openssl", *args], cwd=cwd, check=True, capture_output=True)


def make_pki(d: Path) -> tuple[Path, Path, Path]:
    """(ca.pem, server.pem, server.key) for a server at HOST."""
    _openssl("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", "ca.key",
             "-out", "ca.pem", "-days", "2", "-subj", "/CN=ringfence test CA",
             "-addext", "basicConstraints=critical,CA:TRUE",
             "-addext", "keyUsage=critical,keyCertSign,cRLSign", cwd=d)
    _openssl("req", "-newkey", "rsa:2048", "-nodes", "-keyout", "server.key",
             "-out", "server.csr", "-subj", f"/CN={HOST}", cwd=d)
    (d / "ext").write_text(f"subjectAltName=IP:{HOST}\nbasicConstraints=CA:FALSE\n"
                           "extendedKeyUsage=serverAuth\n")
    _openssl("x509", "-req", "-in", "server.csr", "-CA", "ca.pem", "-CAkey", "ca.key",
             "-CAcreateserial", "-out", "server.pem", "-days", "2", "-extfile", "ext",
             cwd=d)
    return d / "ca.pem", d / "server.pem", d / "server.key"


def make_wheel() -> bytes:
    buf = io.BytesIO()
    info = "rfdemo-1.0.dist-info"
    files = {"rfdemo/__init__.py": "VALUE = 42\n",
             f"{info}/METADATA": "Metadata-Version: 2.1\nName: rfdemo\nVersion: 1.0\n",
             f"{info}/WHEEL": "Wheel-Version: 1.0\nGenerator: ringfence-test\n"
                              "Root-Is-Purelib: true\nTag: py3-none-any\n"}
    with zipfile.ZipFile(buf, "w") as z:
        for name, text in files.items():
            z.writestr(name, text)
        z.writestr(f"{info}/RECORD", "".join(f"{n},,\n" for n in files) + f"{info}/RECORD,,\n")
    return buf.getvalue()


class TlsServer:
    def __init__(self, cert: Path, key: Path) -> None:
        wheel = make_wheel()
        name = "rfdemo-1.0-py3-none-any.whl"
        index = (f'<html><body><a href="/files/{name}#sha256='
                 f'{hashlib.sha256(wheel).hexdigest()}">{name}</a></body></html>').encode()
        pages = {"/": (b"hello over tls\n", "text/plain"),
                 "/simple/rfdemo/": (index, "text/html"),
                 f"/files/{name}": (wheel, "application/octet-stream")}

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self):   # noqa: N802 - http.server's name
                body, ctype = pages.get(self.path, (b"not found\n", "text/plain"))
                self.send_response(200 if self.path in pages else 404)
                self.send_header("Content-Type", ctype)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args):
                pass

        self.httpd = ThreadingHTTPServer((HOST, 0), Handler)
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ctx.load_cert_chain(cert, key)
        self.httpd.socket = ctx.wrap_socket(self.httpd.socket, server_side=True)
        self.port = self.httpd.server_address[1]
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def tls():
    box = make_box()
    hidden = Path(tempfile.mkdtemp(prefix=f"rf-ca-{os.getuid()}-", dir="/tmp"))
    try:
        ca, cert, key = make_pki(hidden)
        server = TlsServer(cert, key)
    except BaseException:
        shutil.rmtree(hidden, ignore_errors=True)
        shutil.rmtree(box.root, ignore_errors=True)
        raise
    profile = box.root / "tls.toml"
    profile.write_text(f'extends = "build"\n[network]\nallow = ["{HOST}:{server.port}"]\n')
    try:
        yield box, ca, server, str(profile)
    finally:
        server.close()
        shutil.rmtree(hidden, ignore_errors=True)
        shutil.rmtree(box.root, ignore_errors=True)


def with_ca(box, ca: Path, **extra):
    env = {v: str(ca) for v in CA_VARS}
    env["SSL_CERT_DIR"] = "/etc/ssl/certs"
    env.update(extra)
    return box.env(**env)


def test_curl_python_and_pip_work_with_the_ca_passed(tls):
    box, ca, server, profile = tls
    url = f"https://{HOST}:{server.port}"
    script = (
        f"set -e; test -r {ca}; ! ls {ca.parent}/ca.key 2>/dev/null; "
        f"curl -fsS {url}/; "
        f"{INNER_PY} -c \"import urllib.request; "
        f"print(urllib.request.urlopen('{url}/').read().decode().strip() + ' (python)')\"; "
        f"{INNER_PY} -m pip download -q --no-deps --index-url {url}/simple/ -d dl rfdemo; "
        "ls dl; "
        f"{INNER_PY} -m pip install -q --no-deps --no-compile --index-url {url}/simple/ "
        "--target site rfdemo; "
        f"PYTHONPATH=site {INNER_PY} -c 'import rfdemo; print(rfdemo.VALUE)'; "
        "echo version-check=$PIP_DISABLE_PIP_VERSION_CHECK")
    r = box.run(profile, "-c", script, env=with_ca(box, ca))
    assert r.returncode == 0, r.stdout + r.stderr
    assert r.stdout.splitlines() == ["hello over tls", "hello over tls (python)",
                                     "rfdemo-1.0-py3-none-any.whl", "42", "version-check=1"]
    assert "RF621" not in r.stderr


def test_a_hidden_ca_directory_stays_hidden_and_says_so(tls):
    box, ca, server, profile = tls
    r = box.run(profile, "-c", f"ls {ca.parent}",
                env=with_ca(box, ca, SSL_CERT_DIR=str(ca.parent)))
    assert r.returncode == 0, r.stderr
    assert r.stdout == "ca.pem\n"   # the file SSL_CERT_FILE names; not ca.key beside it
    assert f"RF621: SSL_CERT_DIR={ca.parent} is hidden in this sandbox and a directory" \
        in r.stderr


def test_without_the_ca_tls_fails_with_an_unknown_issuer(tls):
    box, ca, server, profile = tls
    url = f"https://{HOST}:{server.port}"
    r = box.run(profile, "-c", f"curl -sS {url}/; echo curl=$?; "
                f"{INNER_PY} -c \"import urllib.request; urllib.request.urlopen('{url}/')\" "
                "2>&1 | grep -o CERTIFICATE_VERIFY_FAILED | head -1")
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines() == ["curl=60", "CERTIFICATE_VERIFY_FAILED"]


def test_a_ca_variable_never_unmasks_a_secret(tls):
    box, ca, server, profile = tls
    # A "CA bundle" in a read-denied dir that also holds a private key stays hidden.
    mixed = box.home / ".aws" / "bundle.pem"
    mixed.write_text(ca.read_text() + "-----BEGIN PRIVATE KEY-----\nc2VjcmV0\n"
                     "-----END PRIVATE KEY-----\n")
    r = box.run(profile, "-c", f"cat {mixed} 2>&1; ls ~/.aws; true",
                env=box.env(SSL_CERT_FILE=str(mixed)))
    assert r.returncode == 0, r.stderr
    assert "PRIVATE KEY" not in r.stdout and "credentials" not in r.stdout
    assert "RF621" in r.stderr
    # A certificate-only file there is bound alone: its neighbours stay hidden.
    good = box.home / ".aws" / "ca.pem"
    shutil.copyfile(ca, good)
    r = box.run(profile, "-c", f"head -1 {good}; cat ~/.aws/credentials 2>&1 | "
                "grep -c key= ; true", env=box.env(SSL_CERT_FILE=str(good)))
    assert r.stdout.splitlines() == ["-----BEGIN CERTIFICATE-----", "0"], r.stdout + r.stderr
    # A profile's own env.set binds nothing.
    prof = box.root / "set.toml"
    prof.write_text(f'extends = "build"\n[env]\nset = {{ SSL_CERT_FILE = "{good}" }}\n')
    r = box.run(str(prof), "-c", f"cat {good} | wc -c", env=box.env())
    assert r.stdout.strip() == "0", r.stdout + r.stderr


def _uv() -> str | None:
    import sys

    beside = Path(sys.executable).parent / "uv"      # a venv install (pip install uv)
    found = str(beside) if beside.is_file() else shutil.which("uv")
    return os.path.realpath(found) if found else None


@pytest.mark.skipif(_uv() is None, reason="uv is not installed (pip install uv)")
def test_uv_pip_install_works_with_the_ca_passed(tls):
    box, ca, server, profile = tls
    uv, url = _uv(), f"https://{HOST}:{server.port}"
    script = ("{uv} pip install -q --no-cache --no-deps --python {py} --target {t} "
              "--index-url {url}/simple/ rfdemo && "
              "PYTHONPATH={t} {py} -c 'import rfdemo; print(rfdemo.VALUE)'")
    r = box.run(profile, "-c", script.format(uv=uv, py=INNER_PY, t="site", url=url),
                env=with_ca(box, ca))
    assert r.returncode == 0, r.stdout + r.stderr
    assert r.stdout == "42\n"
    bare = box.run(profile, "-c", script.format(uv=uv, py=INNER_PY, t="site2", url=url)
                   + "; echo uv=$?", env=box.env())
    assert bare.stdout == "uv=2\n", bare.stdout + bare.stderr
    assert "invalid peer certificate" in bare.stderr or "UnknownIssuer" in bare.stderr
