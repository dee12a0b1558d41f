"""The paths a git index tracks, read from the file itself. Stdlib only, no git run.

Used by profile lint (RF520) to tell when a file that a profile masks by path
(``.env``) also sits in git, where ``git show :.env`` reads it past the mask.
Running git on the host in an untrusted workspace would obey its config
(``core.fsmonitor`` runs a program), so the index is parsed here instead.

Format: Documentation/gitformat-index.txt in git.git: a 12-byte header
(``DIRC``, version 2/3/4, entry count), then entries of 62 fixed bytes, a
2-byte extended-flags word when version >= 3 and the extended bit is set, and
the path: NUL-padded to a multiple of 8 in versions 2 and 3, prefix-compressed
(a varint of bytes to drop from the previous path, then a NUL-terminated
suffix) in version 4.
"""

from __future__ import annotations

import os

MAX_INDEX = 256 * 1024 * 1024


def git_dir(workspace: str) -> str | None:
    """The repository directory of ``workspace``: ``.git`` or the one a gitfile names."""
    dot = os.path.join(workspace, ".git")
    if os.path.isdir(dot):
        return dot
    try:
        with open(dot, encoding="utf-8", errors="replace") as f:
            line = f.readline().strip()
    except OSError:
        return None
    if line.startswith("gitdir:"):
        target = line[7:].strip()
        return os.path.normpath(os.path.join(workspace, target))
    return None


def tracked_paths(workspace: str) -> list[str]:
    """Paths in the workspace's git index (empty when there is none or it is unreadable)."""
    gd = git_dir(workspace)
    if gd is None:
        return []
    try:
        with open(os.path.join(gd, "index"), "rb") as f:
            data = f.read(MAX_INDEX)
    except OSError:
        return []
    return parse_index(data)


def parse_index(data: bytes) -> list[str]:
    got = parse_entries(data)
    return [name for name, _, _ in got[0]] if got else []


ASSUME_VALID = 0x8000       # flags: "assume unchanged" (git update-index --assume-unchanged)
EXTENDED = 0x4000           # flags (v3+): an extended-flags word follows
SKIP_WORKTREE = 0x4000      # extended flags: git update-index --skip-worktree


_SMALL = 256 << 10          # an index up to this size is hashed without OpenSSL


def _digest(name: str, data: bytes) -> bytes:
    """The sha1 or sha256 of ``data``: CPython's own implementation for a small
    index (a settle need not load OpenSSL for it: about 2.5 ms; it hashes about
    4 ms a MB), hashlib's beyond (0.6 ms a MB)."""
    if len(data) <= _SMALL:
        try:
            if name == "sha1":
                from _sha1 import sha1 as h
            else:
                try:
                    from _sha2 import sha256 as h        # Python 3.12+
                except ImportError:
                    from _sha256 import sha256 as h      # Python 3.11
            return h(data).digest()
        except ImportError:
            pass
    import hashlib

    return hashlib.new(name, data).digest()


_SUMMED: tuple = ()          # (data, answer) of the last index asked about


def _sha256_sum(data: bytes) -> bool:
    """The index ends with a SHA-256 checksum of the rest (a SHA-256 repository).
    Remembered for the last index (settle's readers ask up to four times)."""
    last = _SUMMED
    if last and last[0] == data:
        return last[1]
    got = len(data) > 32 and _digest("sha256", data[:-32]) == data[-32:]
    if len(data) <= _KEEP:
        globals()["_SUMMED"] = (data, got)
    return got


def parse_entries(data: bytes) -> tuple[list[tuple[str, bool, bool]], list[bytes]] | None:
    """([(path, assume-unchanged, skip-worktree)], [extension signatures]), or None
    when the index cannot be read. SHA-1 and SHA-256 repositories (20- or 32-byte
    object names) are told apart by the trailing checksum, else by which parse fits."""
    if len(data) < 12 or data[:4] != b"DIRC":
        return None
    order = (32, 20) if _sha256_sum(data) else (20, 32)
    for oid in order:
        got = _entries(data, oid)
        if got is not None:
            return got
    return None


def stat_data(data: bytes) -> dict[str, tuple[bytes, bytes]] | None:
    """{path: (the entry's 40 bytes of stat data, its object id)}, or None."""
    if len(data) < 12 or data[:4] != b"DIRC":
        return None
    order = (32, 20) if _sha256_sum(data) else (20, 32)
    for oid in order:
        details: list = []
        if _entries(data, oid, details=details) is not None:
            return {name: (data[s:s + 40], data[s + 40:s + 40 + oid]) for name, s in details}
    return None


def smudge(data: bytes, names: set[str]) -> bytes:
    """``data`` with the size in the stat data of ``names`` set to 0 and the
    checksum recomputed (kept as zeros under index.skipHash)."""
    for oid in ((32, 20) if _sha256_sum(data) else (20, 32)):
        details: list = []
        if _entries(data, oid, details=details) is None:
            continue
        out = bytearray(data)
        for name, start in details:
            if name in names:
                out[start + 36:start + 40] = b"\0\0\0\0"
        body = bytes(out[:-oid])
        trailer = data[-oid:]
        if any(trailer):
            trailer = _digest("sha256" if oid == 32 else "sha1", body)
        return body + trailer
    return data


# The last index parsed: settling one run reads the same index up to three times
# (its flags, its stale entries, its caches). Kept only for an index of at most
# _KEEP bytes; one tuple, replaced whole (a warm Session settles in several threads).
_KEEP = 8 << 20
_LAST: tuple = ()


def _entries(data: bytes, oid: int, want_end: bool = False, details: list | None = None):
    last = _LAST
    if last and last[1] == oid and last[0] == data:
        got = last[2]
    else:
        got = _parse(data, oid)
        if len(data) <= _KEEP:
            globals()["_LAST"] = (data, oid, got)
    if got is None:
        return None
    out, exts, end, starts = got
    if details is not None:
        details.extend(zip((name for name, _, _ in out), starts))
    if want_end:
        return end
    return (list(out), list(exts)) if exts is not None else None


def _parse(data: bytes, oid: int):
    """(entries, extension signatures or None when they do not end at the
    checksum, where the entries end, each entry's offset), or None."""
    version = int.from_bytes(data[4:8], "big")
    count = int.from_bytes(data[8:12], "big")
    if version not in (2, 3, 4):
        return None
    fixed = 40 + oid + 2
    out: list[tuple[str, bool, bool]] = []
    starts: list[int] = []
    pos, prev = 12, b""
    try:
        for _ in range(count):
            start = pos
            flags = int.from_bytes(data[pos + fixed - 2:pos + fixed], "big")
            ext = 0
            pos += fixed
            if version >= 3 and flags & EXTENDED:
                ext = int.from_bytes(data[pos:pos + 2], "big")
                pos += 2
            if version == 4:
                drop, shift = 0, 0
                while True:                   # git's offset varint (not LEB128)
                    byte = data[pos]
                    pos += 1
                    drop = (drop << 7) | (byte & 0x7F) if shift else byte & 0x7F
                    if not byte & 0x80:
                        break
                    drop += 1
                    shift = 1
                if drop > len(prev):
                    return None
                end = data.index(b"\0", pos)
                name = (prev[:len(prev) - drop] if drop else prev) + data[pos:end]
                pos = end + 1
            else:
                end = data.index(b"\0", pos)
                name = data[pos:end]
                pos = start + ((end - start + 8) // 8) * 8
            if not name or pos > len(data) - oid:
                return None
            out.append((name.decode("utf-8", "surrogateescape"),
                        bool(flags & ASSUME_VALID), bool(ext & SKIP_WORKTREE)))
            starts.append(start)
            prev = name
        end_of_entries = pos
        exts: list[bytes] | None = []
        while pos + 8 <= len(data) - oid:
            sig = data[pos:pos + 4]
            size = int.from_bytes(data[pos + 4:pos + 8], "big")
            exts.append(sig)
            pos += 8 + size
        if pos != len(data) - oid:
            exts = None
        return (tuple(out), tuple(exts) if exts is not None else None, end_of_entries,
                tuple(starts))
    except (IndexError, ValueError):
        return None


# Caches git rebuilds when they are absent, which a writer can forge to make git
# show or commit something else than the entries say: the cache-tree (``git
# commit`` writes its tree ids as they are), the untracked cache (hides new
# files from ``git status``), the fsmonitor token; and the offset tables that
# describe the extensions (end-of-index-entry, index-entry-offsets).
CACHE_EXTENSIONS = (b"TREE", b"UNTR", b"FSMN", b"EOIE", b"IEOT")


def strip_caches(data: bytes) -> bytes | None:
    """The index without its cache extensions (the checksum recomputed), the same
    bytes when it has none, or None when it cannot be parsed."""
    if len(data) < 12 or data[:4] != b"DIRC":
        return None
    for oid in ((32, 20) if _sha256_sum(data) else (20, 32)):
        end = _entries_end(data, oid)
        if end is None:
            continue
        out, pos, dropped = [data[:end]], end, False
        while pos + 8 <= len(data) - oid:
            size = int.from_bytes(data[pos + 4:pos + 8], "big")
            if data[pos:pos + 4] in CACHE_EXTENSIONS:
                dropped = True
            else:
                out.append(data[pos:pos + 8 + size])
            pos += 8 + size
        if not dropped:
            return data
        body = b"".join(out)
        trailer = data[-oid:]
        if any(trailer):                 # index.skipHash writes zeros: keep them
            trailer = _digest("sha256" if oid == 32 else "sha1", body)
        return body + trailer
    return None


def _entries_end(data: bytes, oid: int) -> int | None:
    got = _entries(data, oid, want_end=True)
    return got if isinstance(got, int) else None
