"""Host runs only: what a run changed in its workspace (snapshot before/after, diff).

Sandboxed runs are staged (ringfence/staging/mount.py) and get their exact record from
their own overlay upper dir (ringfence/staging/settle.py), at O(changes). A host run
(``--host``, ``--sandbox off``) writes the workspace directly, so this capped
walk is all there is for it.

A snapshot is (path -> (size, mtime_ns, inode)) for every regular file and
symlink under the root, without following symlinks (a link to / must not make
us walk the host). It is capped at ``cap`` entries; a capped snapshot says so,
and the diff carries ``capped=True`` so the ledger never presents a partial
list as complete.
"""

from __future__ import annotations

import os
import stat
from ringfence.rfcore.records import field, record

DEFAULT_CAP = 20000
Entry = tuple[int, int, int]


@record
class Snapshot:
    root: str
    files: dict[str, Entry] = field(default_factory=dict)
    capped: bool = False
    errors: int = 0          # directories we could not read (counted, not hidden)


@record
class Changes:
    created: tuple[str, ...] = ()
    modified: tuple[str, ...] = ()
    deleted: tuple[str, ...] = ()
    capped: bool = False
    unreadable_dirs: int = 0

    @property
    def empty(self) -> bool:
        return not (self.created or self.modified or self.deleted)

    def to_json(self) -> dict:
        return {"created": list(self.created), "modified": list(self.modified),
                "deleted": list(self.deleted), "capped": self.capped,
                "unreadable_dirs": self.unreadable_dirs}


def snapshot(root: str | os.PathLike, cap: int = DEFAULT_CAP) -> Snapshot:
    """Walk `root` iteratively (no recursion limit, no symlink following)."""
    root = os.fspath(root)
    files: dict[str, Entry] = {}
    errors = 0
    stack = [""]
    while stack:
        rel_dir = stack.pop()
        try:
            with os.scandir(os.path.join(root, rel_dir) if rel_dir else root) as it:
                entries = sorted(it, key=lambda e: e.name)
        except OSError:
            errors += 1
            continue
        for entry in entries:
            rel = os.path.join(rel_dir, entry.name) if rel_dir else entry.name
            try:
                st = entry.stat(follow_symlinks=False)
            except OSError:
                continue
            if stat.S_ISDIR(st.st_mode):
                stack.append(rel)
                continue
            if len(files) >= cap:
                return Snapshot(root, files, capped=True, errors=errors)
            files[rel] = (st.st_size, st.st_mtime_ns, st.st_ino)
    return Snapshot(root, files, capped=False, errors=errors)


def diff(before: Snapshot, after: Snapshot) -> Changes:
    b, a = before.files, after.files
    capped = before.capped or after.capped
    created = sorted(set(a) - set(b))
    deleted = sorted(set(b) - set(a))
    if capped:
        # A path missing from a capped snapshot may simply not have been reached:
        # report only what both walks saw, and flag the result as partial.
        created = [p for p in created if not before.capped]
        deleted = [p for p in deleted if not after.capped]
    modified = sorted(p for p in set(a) & set(b) if a[p] != b[p])
    return Changes(tuple(created), tuple(modified), tuple(deleted), capped,
                   max(before.errors, after.errors))
