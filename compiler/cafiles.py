"""CA bundles named by the run's environment: which variables, and whether each names
a file of PEM certificates only (the one kind of file ever bound back into a sandbox
that would hide it). ``compiler.host.probe`` asks on every run.
"""

from __future__ import annotations

import os
from typing import Mapping

# Variables that name a CA bundle (file) or directory, for TLS clients behind an
# intercepting proxy (curl, OpenSSL, Python ssl/requests, pip, node, git). They are
# not secrets: the built-in profiles pass them (profiles/_base.toml), and a file
# they name that the sandbox would hide is bound back read-only (compile.py).
CA_VARS = ("SSL_CERT_FILE", "SSL_CERT_DIR", "REQUESTS_CA_BUNDLE", "CURL_CA_BUNDLE",
           "NODE_EXTRA_CA_CERTS", "PIP_CERT", "GIT_SSL_CAINFO")
_PEM_OK = frozenset({b"CERTIFICATE", b"TRUSTED CERTIFICATE", b"X509 CRL"})
_CA_MAX = 16 * 1024 * 1024


def ca_files(env: Mapping[str, str]) -> tuple[tuple[str, str, bool], ...]:
    """The CA variables' absolute paths, and whether each is a file of certificates only.

    Only such a file is ever made readable in a sandbox that would hide it: a
    variable naming a private key (or anything but PEM certificates and CRLs) must
    not turn into a way around a read-deny."""
    out, seen, verdicts = [], {}, {}
    for var in CA_VARS:
        value = env.get(var, "")
        if not value.startswith("/"):
            continue
        path = os.path.normpath(value)
        if path not in verdicts:        # the variables usually all name one bundle
            real = os.path.realpath(path)
            if real not in seen:
                seen[real] = _certs_only_now(real)
            verdicts[path] = seen[real]
        out.append((var, path, verdicts[path]))
    return tuple(out)


# The last verdict for each bundle, with the exact bytes it was given for. A file's
# metadata does not prove its content unchanged (a write through a shared writable
# mapping changes neither size, mtime nor ctime; a rewrite in the same timestamp
# tick neither): the file is read on every run, and only the regex scan is reused.
_CERTS: dict[str, tuple[bytes, bool]] = {}
_CERTS_KEEP = 1024 * 1024           # bytes kept per bundle (larger ones: scanned each run)


def _certs_only_now(path: str) -> bool:
    """``_certs_only``, with the scan reused only for byte-identical content (a warm
    Session checks the same bundle on every run)."""
    data = _ca_bytes(path)
    if data is None:
        return False
    kept = _CERTS.get(path)
    if kept is not None and kept[0] == data:
        return kept[1]
    ok = _pem_certs_only(data)
    if len(data) <= _CERTS_KEEP:
        if len(_CERTS) >= 16:
            _CERTS.clear()
        _CERTS[path] = (data, ok)
    return ok


def _ca_bytes(path: str) -> bytes | None:
    """The content of a regular file of at most ``_CA_MAX`` bytes, else None (opened
    without blocking, so a FIFO swapped in is refused, not waited on)."""
    import stat

    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or st.st_size > _CA_MAX:
            return None
        # Its size in one read (one buffer of the right size), then what it grew by.
        chunks = [os.read(fd, st.st_size or 1)]
        total = len(chunks[0])
        while chunks[-1] and total <= _CA_MAX:
            chunks.append(os.read(fd, 65536 if len(chunks) > 1 else 1))
            total += len(chunks[-1])
    except OSError:
        return None
    finally:
        os.close(fd)
    data = chunks[0] if len(chunks) == 2 and not chunks[1] else b"".join(chunks)
    return None if len(data) > _CA_MAX else data


def _certs_only(path: str) -> bool:
    data = _ca_bytes(path)
    return data is not None and _pem_certs_only(data)


def _pem_certs_only(data: bytes) -> bool:
    import re

    labels = re.findall(rb"-----BEGIN ([A-Z0-9 ]+)-----", data)
    return bool(labels) and all(label in _PEM_OK for label in labels)
