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
    if len(data) < 12 or data[:4] != b"DIRC":
        return []
    version = int.from_bytes(data[4:8], "big")
    count = int.from_bytes(data[8:12], "big")
    if version not in (2, 3, 4):
        return []
    out: list[str] = []
    pos, prev = 12, b""
    try:
        for _ in range(count):
            start = pos
            flags = int.from_bytes(data[pos + 60:pos + 62], "big")
            pos += 62
            if version >= 3 and flags & 0x4000:
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
                end = data.index(b"\0", pos)
                name = (prev[:len(prev) - drop] if drop else prev) + data[pos:end]
                pos = end + 1
            else:
                end = data.index(b"\0", pos)
                name = data[pos:end]
                pos = start + ((end - start + 8) // 8) * 8
            out.append(name.decode("utf-8", "surrogateescape"))
            prev = name
    except (IndexError, ValueError):
        return out
    return out
