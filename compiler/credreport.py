"""What `ringfence doctor` says about credentials: every location of the one table
(rfcore/credentials.py) that exists on this host, and how a profile's sandbox
hides it. Read from the compiled spec itself, so the report is what runs."""

from __future__ import annotations

import os
import posixpath

from .spec import DevNullOver, RoBind, Bind, Sanitized, SandboxSpec, Tmpfs


def _inside(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip("/") + "/")


def _state(spec: SandboxSpec, path: str) -> tuple[str, str]:
    """What ``path`` shows inside, and the mount that decides it: the last mount op
    over it (a later mount on a prefix covers everything below, as the kernel
    stacks them)."""
    state, by = "VISIBLE", "/"
    for op in spec.ops:
        dst = getattr(op, "dst", None)
        if dst is None or not _inside(path, dst):
            continue
        if isinstance(op, (Tmpfs, DevNullOver)):
            state, by = "masked", dst
        elif isinstance(op, Sanitized) and dst == path:
            state, by = "served without its secrets", dst
        elif isinstance(op, (RoBind, Bind)):
            state, by = "VISIBLE", dst
    return state, by


def how_hidden(spec: SandboxSpec, path: str, real: str, home: str = "") -> str:
    """"masked", "hidden with the home", "served without its secrets" or "VISIBLE"."""
    state, by = _state(spec, path)
    if state == "VISIBLE" and real != path:
        state, by = _state(spec, real)
    if state == "masked" and home and by == home:
        return "hidden with the home"
    return state


def report(profile_name: str = "build", env=None) -> list[dict]:
    """[{path, what, hidden}] for every table location that exists on this host."""
    from ringfence.profiles.load import load_profile
    from ringfence.rfcore.credentials import locations

    from .compile import compile_profile
    from .host import probe

    env = dict(os.environ if env is None else env)
    host = probe(env=env)
    profile = load_profile(profile_name)
    facts = host.for_profile(profile, None)
    spec = compile_profile(profile, None, facts)
    out = []
    for path, what in locations(host.home, env):
        if not os.path.lexists(path):
            continue
        real = posixpath.normpath(os.path.realpath(path))
        out.append({"path": path, "what": what,
                    "hidden": how_hidden(spec, path, real, host.home)})
    return out
