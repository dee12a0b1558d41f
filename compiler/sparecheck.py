"""What makes a spare (compiler/spare.py) provably the sandbox a cold start would
build now, and which runs may use one at all.

``key``: the spec's digest, the environment bwrap sets (``env_args``), bwrap, the
interpreter, the arch, and what the sandbox inherits from this process (umask,
ignored and blocked signals, rlimits, nice, CPU affinity: ``inherited``). ``paths``/``sample``: every host path the spec mounts
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

# The launcher's shell variables: an exported variable of the same name (the
# profile's [env] set) would reach the command changed, so a spare is never used for
# an environment that names one (Pool.take). The launcher is `bash -p` (privileged
# mode: no $BASH_ENV/$ENV sourced when the spare is set up, before the run is even
# decided; no functions imported, their env entries passed on verbatim), which
# rewrites an exported SHELLOPTS or BASHOPTS: never for an environment setting those.
VARS = ("_rf_spare_n", "_rf_spare_a", "_rf_spare_x", "SHELLOPTS", "BASHOPTS")


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

    return (spec.digest(), tuple(env_args(spec, env)), host.bwrap, host.python, host.arch,
            inherited())


def inherited() -> tuple:
    """What the sandbox inherits from this process when bwrap is forked, that the spec
    does not say: the umask, the ignored signals and this *thread's* blocked ones
    (the maker thread forks a spare, the run's thread a cold start), every rlimit,
    the nice value, the CPU affinity. A spare forked before the process changed one
    would give the run the old one."""
    import resource

    mask: object = object()         # unknown: never equal, no spare
    try:
        with open("/proc/thread-self/status", encoding="ascii", errors="replace") as fh:
            got = {k: v.strip() for k, _, v in (ln.partition(":") for ln in fh)
                   if k in ("Umask", "SigIgn", "SigBlk")}
        if len(got) == 3:
            mask = tuple(sorted(got.items()))
    except OSError:
        pass
    limits = tuple(resource.getrlimit(getattr(resource, n)) for n in sorted(dir(resource))
                   if n.startswith("RLIMIT_"))
    return (mask, limits, os.getpriority(os.PRIO_PROCESS, 0), tuple(sorted(
        os.sched_getaffinity(0))))


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


def _sets_ours(env_args: tuple) -> bool:
    return any(env_args[i + 1] in VARS for i, arg in enumerate(env_args[:-1])
               if arg == "--setenv")


def stage_space(stage) -> str | None:
    """A cold run checks the stage's free space (RF622) when it starts: so does the
    run that takes a spare, whose space was checked when it was set up."""
    from ringfence.rfcore.errors import SandboxError
    from ringfence.staging import mount

    if stage is None:
        return None
    try:
        mount.check_space(os.path.dirname(os.path.dirname(stage.path)))
    except SandboxError:
        return "its stage's filesystem is below the minimum free space (RF622)"
    return None
