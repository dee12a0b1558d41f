"""The bwrap backend: the ONLY place that spells bubblewrap flags.

``render(spec, argv, ...)`` turns the ordered ops into a bwrap argv. Two env
modes:

* ``inline_env=True`` (exports, ``profile compile --format bwrap``): the
  environment is written as ``--clearenv`` + ``--setenv`` so the argv runs
  on its own.
* ``inline_env=False`` (execution): no environment in the argv; the executor
  writes :func:`env_args` (``--clearenv`` + ``--setenv``) into a memfd that
  bwrap reads with ``--args FD``. Passed values stay out of bwrap's command
  line (other processes read /proc/PID/cmdline), and out of bwrap's own
  environment: bwrap runs on the HOST, so a profile's ``LD_PRELOAD`` (or any
  other value) in its environment would run code outside every boundary.
  bwrap applies ``--clearenv``/``--setenv`` to itself while parsing, after the
  dynamic loader has run, so they reach only what it starts inside.

bwrap applies the one seccomp filter (``--seccomp``) to everything in the
sandbox: its init (pid 1), the launcher and the command. No process there
holds a right the command lacks, so taking one over through /proc/PID/mem or
pidfd_getfd gains nothing. With a proxy, the command is wrapped by the
in-sandbox launcher (``compiler/relay.py``): it listens on 127.0.0.1 and hands
the listening socket to the host's proxy over ``handoff_fd``, then execs the
command.
"""

from __future__ import annotations

import os
from typing import Mapping, Sequence

from ringfence.compiler.spec import (Bind, CapDropAll, Chdir, ClearEnv, Dev, DevNullOver,
                           DieWithParent, DisableUserns, NewSession, PassEnv, Proc,
                           Proxy, RoBind, Stage, Rlimit, SandboxSpec, Sanitized, Seccomp,
                           SetEnv, Tmpfs, UnshareAll, Broker)

RELAY = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "relay.py")


def final_env(spec: SandboxSpec, env: Mapping[str, str]) -> dict[str, str]:
    """The exact environment inside the sandbox: SetEnv values, PassEnv from ``env``."""
    out: dict[str, str] = {}
    for op in spec.ops:
        if isinstance(op, SetEnv):
            out[op.name] = op.value
        elif isinstance(op, PassEnv) and op.name in env:
            out[op.name] = env[op.name]
    return out


def env_args(spec: SandboxSpec, env: Mapping[str, str]) -> list[str]:
    """``--clearenv`` and one ``--setenv`` per variable of :func:`final_env`."""
    out = ["--clearenv"]
    for name, value in final_env(spec, env).items():
        out += ["--setenv", name, value]
    return out


def render(spec: SandboxSpec, argv: Sequence[str], *, bwrap: str = "bwrap",
           env: Mapping[str, str] | None = None, seccomp_fd: int | None = None,
           proxy_dir: str | None = None, python: str = "python3",
           inline_env: bool = True, status_fd: int | None = None,
           handoff_fd: int | None = None,
           data_fds: Mapping[str, int] | None = None,
           helper_fd: int | None = None) -> list[str]:
    """bwrap argv for ``spec`` running ``argv``.

    ``seccomp_fd``: an inherited fd holding the BPF program (None: no filter).
    ``proxy_dir``: the host directory holding the proxy's Unix socket.
    ``status_fd``: bwrap ``--json-status-fd`` (lets the executor tell a setup
    failure from the command's own exit status).
    ``handoff_fd``: with a proxy, the inherited end of the proxy's hand-off
    socket pair (``ProxyServer.handoff_fd``).
    ``data_fds``: destination -> memfd with the sanitized bytes of each Sanitized op
    (execution); without one the file is masked (exports: no fd to hand over).
    ``helper_fd``: a memfd with the credential broker's helper (execution; the
    broker's socket itself is simply inherited). Without it nothing is brokered.
    """
    if not spec.sandboxed:
        raise ValueError("the host profile has no bwrap rendering")
    env = {} if env is None else env
    proxy = spec.proxy
    out: list[str] = [bwrap]
    sizes = tmpfs_sizes(spec)
    for op in spec.ops:
        if isinstance(op, UnshareAll):
            # --unshare-user explicitly: as root, --unshare-all only *tries* it, and
            # --disable-userns needs a user namespace of our own.
            out += ["--unshare-all", "--unshare-user"]
        elif isinstance(op, DisableUserns):
            out.append("--disable-userns")
        elif isinstance(op, DieWithParent):
            out.append("--die-with-parent")
        elif isinstance(op, NewSession):
            out.append("--new-session")
        elif isinstance(op, CapDropAll):
            out += ["--cap-drop", "ALL"]
        elif isinstance(op, RoBind):
            out += ["--ro-bind-try" if op.may_be_missing else "--ro-bind", op.src, op.dst]
        elif isinstance(op, Bind):
            out += ["--bind-try" if op.may_be_missing else "--bind", op.src, op.dst]
        elif isinstance(op, Tmpfs):
            out += ["--size", str(sizes.get(op.dst, sizes[""])), "--tmpfs", op.dst]
        elif isinstance(op, DevNullOver):
            out += ["--ro-bind", "/dev/null", op.dst]
        elif isinstance(op, Sanitized):
            fd = (data_fds or {}).get(op.dst)
            out += (["--perms", "0444", "--ro-bind-data", str(fd), op.dst] if fd is not None
                    else ["--ro-bind", "/dev/null", op.dst])
        elif isinstance(op, Proc):
            out += ["--proc", op.dst]
        elif isinstance(op, Dev):
            # bwrap's /dev is an unsized tmpfs the sandbox can write (and /dev/shm a
            # dir on it): a sized tmpfs on /dev/shm, then /dev itself read-only.
            shm = op.dst.rstrip("/") + "/shm"
            out += ["--dev", op.dst, "--size", str(sizes[shm]), "--tmpfs", shm,
                    "--remount-ro", op.dst]
        elif isinstance(op, ClearEnv):
            if inline_env:
                out.append("--clearenv")
        elif isinstance(op, (SetEnv, PassEnv)):
            pass            # rendered below, after every op is known
        elif isinstance(op, Chdir):
            out += ["--chdir", op.path]
        elif isinstance(op, Seccomp):
            if seccomp_fd is not None:
                out += ["--seccomp", str(seccomp_fd)]
        elif isinstance(op, Proxy):
            if proxy_dir is None:
                raise ValueError("a proxy spec needs proxy_dir")
            out += ["--ro-bind", proxy_dir, op.socket_dir]
        elif isinstance(op, Broker):
            if helper_fd is not None:
                out += ["--perms", "0555", "--ro-bind-data", str(helper_fd), op.helper]
        elif isinstance(op, (Rlimit, Stage)):
            pass            # applied by the executor (setrlimit; the overlay mount)
        else:  # pragma: no cover - a new op type must be rendered explicitly
            raise AssertionError(f"unrendered op {op!r}")
    if inline_env:
        for name, value in final_env(spec, env).items():
            out += ["--setenv", name, value]
    if status_fd is not None:
        out += ["--json-status-fd", str(status_fd)]
    out.append("--")
    if proxy is not None:
        # The relay script is copied into the proxy's runtime dir (bound at
        # proxy.socket_dir) by the executor: the checkout itself may be under a
        # path the sandbox masks, such as /tmp.
        if handoff_fd is None:
            raise ValueError("a proxy spec needs handoff_fd")
        out += [python, "-I", "-S", f"{proxy.socket_dir}/relay.py", "--listen", proxy.listen,
                "--handoff-fd", str(handoff_fd), "--"]
    out += list(argv)
    return out


DEFAULT_TMPFS_MB = 1024     # a spec with no memory or stage limit (an API caller's)


def tmpfs_sizes(spec) -> dict[str, int]:
    """Bytes each tmpfs of the sandbox may hold (bwrap ``--size``): without a cgroup a
    tmpfs is host RAM nothing else caps (issue 23 review). The budget B is the run's
    memory limit (else its stage cap, else DEFAULT_TMPFS_MB): ``/tmp`` B/2,
    ``/dev/shm`` B/4, and the last quarter shared by every other tmpfs (the masked
    home, ``/run``, masked dirs; key ``""``), at least 1 MiB each: together at most
    B plus 1 MiB per mount. docs/sandbox.md states it."""
    by = {r.kind: r.value for r in spec.of(Rlimit)}
    budget = by.get("as") or by.get("stage") or DEFAULT_TMPFS_MB << 20
    floor = 1 << 20
    others = sum(1 for op in spec.of(Tmpfs) if op.dst != "/tmp") or 1
    return {"/tmp": max(floor, budget // 2), "/dev/shm": max(floor, budget // 4),
            "": max(floor, budget // 4 // others)}
