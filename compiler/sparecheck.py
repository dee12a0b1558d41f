"""What makes a spare (compiler/spare.py) provably the sandbox a cold start would
build now, and which runs may use one at all.

``key``: the spec's digest, the environment bwrap sets (``env_args``), bwrap, the
interpreter and the arch. ``paths``/``sample``: every host path the spec mounts
from or onto, and each of its ancestors, with (st_dev, st_ino, st_mtime_ns,
st_ctime_ns); a mount's own source or target by identity only (the module doc of
``paths`` says why). ``_racy``: a sampled time within RACY_NS of the sample, which
a change in the same clock tick could leave equal (compiler/factcache.py's rule).

Only stdlib + our packages.
"""

from __future__ import annotations

import os
import subprocess

from .factcache import _ancestors, _stat
from .secretmasks import RACY_NS

MAX_ARGV = 4096             # bytes of argv a spare takes (bash's read is bytewise)


def fits(spec, argv, stdin) -> bool:
    """May a run of ``argv`` use (and leave) a spare at all? (the module doc)"""
    from .spec import Broker

    if not spec.sandboxed or spec.of(Broker) or stdin is not subprocess.DEVNULL:
        return False
    if not argv or argv[0] != "bash" or len(argv) < 2 or argv[1] != "-c":
        return False
    try:
        return sum(len(a.encode("utf-8", "surrogateescape")) + 1 for a in argv) <= MAX_ARGV
    except (AttributeError, UnicodeError):
        return False


def key(spec, host, env) -> tuple:
    from .backends.bwrap import env_args

    return (spec.digest(), tuple(env_args(spec, env)), host.bwrap, host.python, host.arch)


def paths(spec) -> tuple[tuple[str, bool], ...]:
    """Every host path the spec mounts from or onto, with all its ancestors, each with
    whether its times count. An ancestor's do (an entry of it replaced, renamed or
    created changes them); a sanitized source's do (its bytes were read ahead). A
    mount's own source or target counts by identity (device, inode) only: what is
    mounted is that inode, whose contents are live in a cold run too; a busy /tmp
    or an edited workspace does not make the spare stale, a replaced one does."""
    from .spec import Bind, Chdir, DevNullOver, RoBind, Sanitized, Stage, Tmpfs

    out: dict[str, bool] = {}

    def add(p: str, times: bool) -> None:
        p = os.path.normpath(p)
        out[p] = out.get(p, False) or times
        for d in _ancestors(p):
            out[d] = True

    for op in spec.ops:
        if isinstance(op, Sanitized):
            add(op.src, True)
            add(op.dst, False)
        elif isinstance(op, (Bind, RoBind)):
            add(op.src, False)
            add(op.dst, False)
        elif isinstance(op, (Tmpfs, DevNullOver)):
            add(op.dst, False)
        elif isinstance(op, Stage):
            add(op.path, False)
        elif isinstance(op, Chdir):
            add(op.path, False)
    out.pop("", None)
    return tuple(sorted(out.items()))


def sample(names) -> tuple:
    out = []
    for p, times in names:
        s = _stat(p)
        out.append(s if times or s is None else s[:2])
    return tuple(out)


def _racy(sig: tuple, at: int) -> int:
    """The latest sampled time within RACY_NS of ``at`` (0: none)."""
    late = [t for s in sig if s is not None and len(s) > 2 for t in (s[2], s[3])
            if t > at - RACY_NS]
    return max(late) if late else 0
