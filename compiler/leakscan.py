"""After a brokered run: does anything the run wrote still hold a brokered value?

``compiler/execute.py`` calls ``scan`` on settle when the broker handed out a
credential; a hit in the stage is held (RF653), a hit in another writable root is
removed. A value is looked for raw and in the encodings a command reaches for
without trying (``needles``): hex (both cases), reversed, base64 standard and
URL-safe at each of the 3 alignments (the token anywhere inside a longer
encoded text). Compressed content is inflated and searched too: gzip files and
zlib streams (git's loose objects under ``.git/objects``, any file that starts
with a zlib header), up to ``INFLATE_CAP`` bytes each. A file is read through its
data regions only (SEEK_DATA/SEEK_HOLE: a sparse file cannot hide the token past
a cap with a hole), up to ``SCAN_CAP`` bytes of data; a file with more data than
that, written while the broker was active, counts as a hit (held: it cannot be
cleared). What this cannot see (an arbitrary re-encoding, encryption, a pack
file) is said in docs/sandbox.md: the broker's domain scoping is the real guard.
Stdlib only.
"""

from __future__ import annotations

import base64
import errno
import os
import zlib

SCAN_CAP = 256 * 1024 * 1024        # bytes of data read from one file
INFLATE_CAP = 64 * 1024 * 1024      # bytes inflated from one compressed file
_CHUNK = 8 * 1024 * 1024


def _b64_forms(raw: bytes) -> list[bytes]:
    """The part of base64(x + raw) that depends on ``raw`` only, for each of the 3
    alignments of ``raw`` inside a longer encoded text; standard and URL-safe."""
    out = []
    for k in range(3):
        enc = base64.b64encode(b"\0" * k + raw)
        start = 4 if k else 0                   # the group holding the pad bytes
        end = 4 * ((k + len(raw)) // 3)         # only complete groups of raw bytes
        part = enc[start:end]
        if len(part) >= 8:
            out.append(part)
            out.append(part.translate(bytes.maketrans(b"+/", b"-_")))
    return out


def needles(secrets) -> list[bytes]:
    out: list[bytes] = []
    for s in secrets:
        raw = s.encode()
        out += [raw, raw[::-1], raw.hex().encode(), raw.hex().upper().encode()]
        out += _b64_forms(raw)
    return list(dict.fromkeys(n for n in out if n))


def redactions(secrets) -> list[bytes]:
    """What the ledger tails never keep: the value and its base64 forms."""
    out = []
    for s in secrets:
        raw = s.encode()
        out += [raw, base64.b64encode(raw).rstrip(b"=")] + _b64_forms(raw)
    return sorted(dict.fromkeys(out), key=len, reverse=True)


def _data(fd: int, size: int):
    """(offset, bytes) chunks of the file's data regions; raises _TooBig past SCAN_CAP."""
    pos, total = 0, 0
    while pos < size:
        try:
            start = os.lseek(fd, pos, os.SEEK_DATA)
            end = os.lseek(fd, start, os.SEEK_HOLE)
        except OSError as exc:
            if exc.errno == errno.ENXIO or pos:     # no data after pos
                return
            start, end = 0, size                    # no SEEK_DATA here: read it all
        while start < end:
            n = min(_CHUNK, end - start)
            total += n
            if total > SCAN_CAP:
                raise _TooBig
            os.lseek(fd, start, os.SEEK_SET)
            chunk = os.read(fd, n)
            if not chunk:
                return
            yield chunk
            start += len(chunk)
        pos = end


class _TooBig(Exception):
    pass


def _inflate(data: bytes, gz: bool) -> bytes:
    d = zlib.decompressobj(31 if gz else 15)
    try:
        return d.decompress(data, INFLATE_CAP)
    except zlib.error:
        return b""


def _compressed(head: bytes, path: str) -> str:
    if head[:2] == b"\x1f\x8b":
        return "gzip"
    if len(head) >= 2 and head[0] == 0x78 and (head[0] * 256 + head[1]) % 31 == 0:
        return "zlib"
    return ""


def file_holds(path: str, ndl: list[bytes]) -> bool:
    """Whether the regular file at ``path`` holds a needle (or is too big to clear)."""
    keep = max(len(n) for n in ndl) - 1
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    try:
        size = os.fstat(fd).st_size
        prev = b""
        head = b""
        kind = ""
        comp = bytearray()
        for chunk in _data(fd, size):
            if not head:
                head = chunk[:4]
                kind = _compressed(head, path)
            window = prev + chunk
            if any(n in window for n in ndl):
                return True
            prev = window[-keep:] if keep else b""
            if kind and len(comp) < INFLATE_CAP:
                comp += chunk[:INFLATE_CAP - len(comp)]
        if kind:
            plain = _inflate(bytes(comp), kind == "gzip")
            if any(n in plain for n in ndl):
                return True
        return False
    except _TooBig:
        return True
    finally:
        os.close(fd)


def scan(roots, secrets, since: float) -> list[str]:
    """Paths under ``roots`` changed since ``since`` (by ctime, which a command cannot
    set back) whose content, symbolic-link target or name holds a secret (in any of
    the ``needles`` forms); no link is followed."""
    if not secrets:
        return []
    ndl = needles(secrets)
    hits = []

    def has(data: bytes) -> bool:
        return any(n in data for n in ndl)

    for root in roots:
        for dirpath, dirnames, filenames in os.walk(root, followlinks=False):
            for name in filenames + dirnames:
                path = os.path.join(dirpath, name)
                try:
                    st = os.lstat(path)
                    if st.st_ctime < since - 2:
                        continue
                    kind = st.st_mode & 0o170000
                    if has(os.fsencode(name)):
                        hits.append(path)
                    elif kind == 0o120000:
                        if has(os.fsencode(os.readlink(path))):
                            hits.append(path)
                    elif kind == 0o100000 and file_holds(path, ndl):
                        hits.append(path)
                except OSError:
                    continue
    return hits


class Redactor:
    """A sink for the command's live output that writes every brokered value (and
    its base64 forms) as ``[brokered credential]``. Only a tail that could be the
    start of a value is held back (until the next chunk or ``drain``), so a prompt
    is not delayed otherwise."""

    MARK = b"[brokered credential]"

    def __init__(self, sink, secrets) -> None:
        self._sink = sink
        self._forms = redactions(secrets)
        self._pending = b""

    def fileno(self) -> int:
        return self._sink.fileno()

    def _hold(self, data: bytes) -> int:
        best = 0
        for form in self._forms:
            for n in range(min(len(form) - 1, len(data)), best, -1):
                if data.endswith(form[:n]):
                    best = n
                    break
        return best

    def write(self, data: bytes) -> int:
        buf = self._pending + bytes(data)
        for form in self._forms:
            buf = buf.replace(form, self.MARK)
        hold = self._hold(buf)
        self._pending = buf[len(buf) - hold:] if hold else b""
        out = buf[:len(buf) - hold]
        if out:
            self._sink.write(out)
        return len(data)

    def flush(self) -> None:
        self._sink.flush()

    def drain(self) -> None:
        if self._pending:
            try:
                self._sink.write(self._pending)
                self._sink.flush()
            except (BrokenPipeError, ValueError, OSError):
                pass
            self._pending = b""
