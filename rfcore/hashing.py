"""sha256 without loading OpenSSL.

``import hashlib`` loads ``_hashlib`` (libcrypto): ~2.5 ms of every ``run`` and
``hook`` start-up, for a handful of short digests (spec, profile, seccomp
program). CPython's built-in ``_sha256`` gives byte-identical digests
(tests/test_hashing.py checks against hashlib); hashlib is the fallback where
the built-in module is missing.
"""

from __future__ import annotations

try:
    from _sha256 import sha256
except ImportError:  # pragma: no cover - a CPython built without it
    from hashlib import sha256

__all__ = ["sha256"]
