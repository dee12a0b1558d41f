"""Path facts remembered between runs of one process (a warm ``Session``, the MCP
server), and re-derived whenever what they depend on may have changed.

A profile names about 140 paths (read-denies, the credential table, the home
allowlist, ringfence's private dirs). Their facts (what each resolves to and is)
cost a ``realpath`` each, most of a warm run's host-side time. A fact depends only
on the entries of the directories above the path: creating, removing, renaming or
re-linking an entry changes its directory's mtime and ctime (and ctime cannot be
set back by an unprivileged process). So a fact is reused only when

* the path has no symbolic link on it (``real`` is the path itself): a link's
  target chain may run through directories that are not the path's ancestors;
* every ancestor directory of that path still has the device, inode, mtime and
  ctime it had *before* the fact was derived (the signature is taken first: a change made while
  deriving shows up next time);
* no ancestor changed less than ``RACY_NS`` before that (a change in the same
  clock tick would leave all three values equal).

A credential file created since the last run therefore changes its directory's
signature and is probed, and masked, like on a cold run. A filesystem mounted over
an ancestor since then is seen too: ``lstat`` of the mount point gives the new
root, on another device (its inode number, mtime and ctime alone can all be the
covered directory's: every ext4 root is inode 2, and an image's times are what it
was made with). Nothing is kept across processes.
"""

from __future__ import annotations

import os
import time
from typing import Callable, Iterable

from .secretmasks import RACY_NS

# path -> (its ancestor dirs, their signatures before the fact was derived, the fact)
_KEPT: dict[str, tuple[tuple[str, ...], tuple, object]] = {}
_MAX = 8192             # paths remembered; a process runs a handful of profiles
_UNSEEN = object()


def _ancestors(path: str) -> tuple[str, ...]:
    out = []
    d = os.path.dirname(path)
    while True:
        out.append(d)
        if d == "/" or not d:
            return tuple(out)
        d = os.path.dirname(d)


def _stat(d: str):
    try:
        st = os.lstat(d)
    except OSError:
        return None
    return (st.st_dev, st.st_ino, st.st_mtime_ns, st.st_ctime_ns)


def facts(paths: Iterable[str], derive: Callable) -> dict:
    """``{path: derive(path)}`` for ``paths``, reusing a fact this process derived
    before where it is provably unchanged (see the module doc). Each path is judged
    on its own ancestors: a busy ``/var/tmp`` re-derives only the paths under it."""
    cutoff = time.time_ns() - RACY_NS
    seen: dict[str, object] = {}            # each directory is looked at once per call

    def sig(d: str):
        s = seen.get(d, _UNSEEN)
        if s is _UNSEEN:
            s = seen[d] = _stat(d)
        return s

    out = {}
    for p in paths:
        if p in out:
            continue
        kept = _KEPT.get(p)
        if kept is not None and all(sig(d) == s for d, s in zip(kept[0], kept[1])):
            out[p] = kept[2]
            continue
        norm = os.path.normpath(p)
        dirs = _ancestors(norm)
        before = tuple(sig(d) for d in dirs)     # taken before deriving (module doc)
        fact = out[p] = derive(p)
        if (not fact.is_link and fact.real == norm
                and all(s is None or (s[2] <= cutoff and s[3] <= cutoff) for s in before)):
            if len(_KEPT) >= _MAX:
                _KEPT.clear()
            _KEPT[p] = (dirs, before, fact)
        else:
            _KEPT.pop(p, None)
    return out


def forget() -> None:
    """Drop everything remembered (tests)."""
    _KEPT.clear()
