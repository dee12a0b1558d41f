"""A keyed digest for ringfence's caches: a forged cache is ignored, never obeyed.

The secret-mask cache says which workspace files Strict hides. It lives in
ringfence's private cache dir, but a cache dir can be moved (``XDG_CACHE_HOME``)
or written by another tool; a forged one that forgets a ``.env`` would let the
next Strict run print it. So each cache file starts with a keyed BLAKE2b digest
of what follows (a MAC); the 32-byte key is created on first use in ringfence's
private *state* dir (mode 0600). A file whose digest does not match is treated as
no cache at all: everything is listed again, and the cache is rewritten.

``_blake2`` is CPython's builtin module (no OpenSSL load: this is on the
``ringfence run`` path).
"""

from __future__ import annotations

import os

TAG = 32


def _mac(key: bytes, data: bytes) -> bytes:
    try:
        from _blake2 import blake2b
    except ImportError:            # pragma: no cover - other interpreters
        from hashlib import blake2b
    return blake2b(data, key=key, digest_size=TAG).digest()


def load_key(path: str) -> bytes | None:
    """The key in ``path``, created (0600, never through a link) when missing; None
    when it cannot be read or made."""
    for _ in range(2):
        try:
            fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
        except FileNotFoundError:
            try:
                os.makedirs(os.path.dirname(path), mode=0o700, exist_ok=True)
                fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW
                             | os.O_CLOEXEC, 0o600)
            except FileExistsError:
                continue               # another run made it: read theirs
            except OSError:
                return None
            key = os.urandom(32)
            try:
                os.write(fd, key)
            finally:
                os.close(fd)
            return key
        except OSError:
            return None
        try:
            key = os.read(fd, 64)
        finally:
            os.close(fd)
        return key if len(key) == 32 else None
    return None


def seal(key: bytes, data: bytes) -> bytes:
    return _mac(key, data) + data


def unseal(key: bytes | None, blob: bytes) -> bytes | None:
    """The data, or None when there is no key or the digest does not match."""
    if key is None or len(blob) < TAG:
        return None
    from _operator import _compare_digest      # hmac.compare_digest, without hashlib

    data = blob[TAG:]
    return data if _compare_digest(blob[:TAG], _mac(key, data)) else None
