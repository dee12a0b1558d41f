"""compile_profile(profile, workspace, host) -> SandboxSpec. PURE: no I/O.

Every fact about the disk comes from ``HostFacts`` (probed by ``host.py``),
so the same profile + facts always give the same spec, and golden tests run
without a kernel. The compiler is mechanism only; policy is the profile.
"""

from __future__ import annotations

import fnmatch
import os
import posixpath

from ringfence.rfcore.lazyre import lazy
from ringfence.profiles.model import Profile
from ringfence.profiles.roots import (  # noqa: F401 - compile's vocabulary too
    DEFAULT_TOOLING, _norm, _tooling_dir, _writable_templates, expand)
from ringfence.rfcore.errors import SandboxError

from .spec import (Bind, Broker, CapDropAll, Chdir, ClearEnv, Dev, DevNullOver, DieWithParent,
                   DisableUserns, NewSession, Note, PassEnv, Proc, Proxy, RoBind,
                   Rlimit, SandboxSpec, Sanitized, Seccomp, SetEnv, Stage, Tmpfs,
                   UnshareAll)
from . import homemask

DEFAULT_PATH = "/usr/local/bin:/usr/bin:/bin"
GLOB_CHARS = lazy(r"[*?\[]")

TOOLING_VARS = (
    ("PIP_CACHE_DIR", "pip"), ("UV_CACHE_DIR", "uv"), ("npm_config_cache", "npm"),
    ("GOPATH", "go"), ("GOCACHE", "go-build"), ("XDG_CACHE_HOME", "xdg"),
)
PROXY_VARS = ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY")
NO_PROXY = "localhost,127.0.0.1,::1"
RLIMIT_MB = {"memory_mb": "as", "file_size_mb": "fsize"}


def looks_like_credential(name: str) -> bool:
    from ringfence.rfcore.credentials import name_looks_like_credential

    return name_looks_like_credential(name)


def wanted_paths(profile: Profile, workspace: str | None, host) -> tuple[list[str], list[str]]:
    """(plain paths, glob patterns) whose facts compile needs. Used by the probe."""
    ctx = _ctx(profile, workspace, host)
    plain: list[str] = []
    patterns: list[str] = []
    plain.append("/run")
    if workspace:
        plain.append(_norm(workspace))
    roots = [p for t in _writable_templates(profile) if (p := expand(t, **ctx))]
    plain.extend(roots)
    plain.extend(host.private_dirs)
    for entry in profile.filesystem.read_deny:
        path = expand(entry, **ctx)
        if path:
            (patterns if GLOB_CHARS.search(path) else plain).append(path)
    extra = tuple(p for e in profile.filesystem.read_allow if (p := expand(e, **ctx)))
    for path in homemask.wanted(host, extra):
        (patterns if GLOB_CHARS.search(path) else plain).append(path)
    plain.extend(getattr(host, "credential_paths", ()))
    return plain, patterns


def _ctx(profile: Profile, workspace: str | None, host) -> dict:
    ws = _norm(os.path.abspath(workspace)) if workspace else None  # abspath: no I/O
    return {"workspace": ws, "tooling": _tooling_dir(profile, host.home,
                                                     getattr(host, "tooling_default", "")),
            "home": host.home}


def _inside(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip("/") + "/")


def compile_profile(profile: Profile, workspace: str | None, host, *,
                    cwd: str | None = None) -> SandboxSpec:
    """Turn a profile into an ordered, typed SandboxSpec. Pure.

    ``cwd``: the caller's real working directory. The command starts there when it
    lies inside the workspace (``repo/sub`` with the workspace at the git root);
    anywhere else it starts at the workspace, as without it."""
    ctx = _ctx(profile, workspace, host)
    ws = ctx["workspace"]
    if not profile.sandbox:
        return SandboxSpec(profile.name, ws, (), (Note(
            "RF612", "sandbox off: the command runs directly on the host with full "
                     "access (explicit --sandbox off / profile 'host'); recorded"),),
            sandboxed=False)
    notes: list[Note] = []
    ops: list = [UnshareAll(), DisableUserns(), DieWithParent(), NewSession(), CapDropAll(),
                 RoBind("/", "/"), Dev("/dev"), Proc("/proc")]
    if profile.filesystem.private_tmp:
        ops.append(Tmpfs("/tmp"))
    run = host.path("/run")
    if run.kind == "dir" and not run.is_link:
        # Host daemons listen under /run (docker.sock, dbus, systemd): hide them all,
        # independently of the seccomp AF_UNIX rule (defence in depth).
        ops.append(Tmpfs("/run"))

    ws_real = None
    if ws is not None:
        fact = host.path(ws)
        if fact.kind != "dir":
            raise SandboxError(f"workspace {ws} is not an existing directory; nothing was run (RF609)",
                               hint="pass --workspace DIR with a directory that exists")
        ws_real = fact.real

    # Writable roots, symlinks resolved. The workspace itself is what the user named;
    # any other writable root that resolves somewhere else through a link would let a
    # profile (or a planted link) widen write access, so it must stay where it says.
    roots: list[str] = []
    for template in _writable_templates(profile):
        path = expand(template, **ctx)
        if path is None:
            notes.append(Note("RF611", f"writable {template!r} skipped: no workspace given"))
            continue
        fact = host.path(path)
        if fact.kind == "missing":
            notes.append(Note("RF611", f"writable {path} does not exist; skipped"))
            continue
        is_ws = ws is not None and path == ws
        if not is_ws and fact.real != path and not (ws_real and _inside(fact.real, ws_real)):
            raise SandboxError(
                f"writable path {path} resolves through a symbolic link to {fact.real}, "
                "outside the workspace; refusing to make it writable (RF603)",
                hint="point the profile at the real directory, or remove the link")
        if (not is_ws and ws_real and _inside(fact.real, ws_real)
                and "{workspace}" in profile.filesystem.writable):
            # Bound on its own it would be written past the stage, unjudged: it is
            # writable through the staged workspace instead.
            notes.append(Note("RF646", f"writable {path} lies inside the workspace: staged "
                              "with it, not bound on its own"))
            continue
        roots.append(fact.real)

    # The home: an empty tmpfs, then the toolchain allowlist read-only and the
    # sanitized configs (compiler/homemask.py), all BEFORE the writable binds, so
    # a workspace or tooling dir under the home stays visible and writable.
    extra = tuple(p for e in profile.filesystem.read_allow if (p := expand(e, **ctx)))
    home_ops, masked_homes, visible = homemask.home_ops(
        host, extra, ws_real, roots, notes, mask=profile.filesystem.mask_home)
    ops.extend(home_ops)
    ops.extend(Bind(r, r) for r in roots)
    visible = visible + roots

    def seen(path: str) -> bool:
        """Whether ``path`` is visible in the sandbox before the masks."""
        return (not any(_inside(path, h) for h in masked_homes)
                or any(_inside(path, v) for v in visible))

    if ws_real is not None and not seen(ws_real):
        ops.append(RoBind(ws_real, ws_real))      # Observe: the workspace, read-only
        visible.append(ws_real)

    # Every write under the workspace is staged in an overlay (ringfence/staging/mount.py):
    # the host sees nothing until ringfence applies the run's upper dir, and a
    # change to a file the host obeys (.git/config, hooks, .envrc, the profile's
    # write_protect entries...) is applied only when judged harmless by content,
    # else held for a person (ringfence/staging/judges.py). No read-only re-binds: git
    # itself must be able to write .git/config (git init, git config).
    if ws_real is not None and ws_real in roots:
        ops.append(Stage(ws_real))

    # Read-denied paths that exist: an empty tmpfs over directories, /dev/null over
    # files. After every bind (writable roots),
    # so no later bind can re-expose what is masked.
    for entry in profile.filesystem.read_deny:
        path = expand(entry, **ctx)
        if path is None:
            continue
        found = host.globs.get(path, ()) if GLOB_CHARS.search(path) else (path,)
        for p in found:
            fact = host.path(p)
            if not seen(fact.real):
                continue            # under the masked home: already invisible
            if fact.kind == "dir":
                ops.append(Tmpfs(fact.real))
            elif fact.kind in ("file", "other"):
                ops.append(DevNullOver(fact.real))
    # The one table of credential locations (rfcore/credentials.py), wherever it is
    # still visible: not under the masked home, or under a root bound back in.
    served = {op.dst for op in ops if isinstance(op, Sanitized)}
    for p in getattr(host, "credential_paths", ()):
        fact = host.path(p)
        if p in served or fact.kind == "missing":
            continue
        for where in dict.fromkeys((p, fact.real)):     # a link's view and its target
            if seen(where):
                op = Tmpfs(where) if fact.kind == "dir" else DevNullOver(where)
                if op not in ops:
                    ops.append(op)
    for link, target in host.unmasked_links:
        notes.append(Note("RF660", f"{link} is named like a secret but links to {target}, "
                          "outside the workspace: not followed and not masked"))

    # ringfence's own state, pattern cache and config decide what runs without
    # asking (grants, the user's profile) and hold earlier runs' output: hidden in
    # every sandbox whatever the profile says, even when they sit inside the
    # workspace. Mechanism, not policy. One that does not exist yet inside the
    # workspace is in the host-obeyed registry: a planted ledger is held, never
    # applied (ringfence/staging/settle.py).
    for d in host.private_dirs:
        fact = host.path(d)
        if fact.kind == "dir":
            ops.append(Tmpfs(fact.real))
        elif fact.kind in ("file", "other"):
            ops.append(DevNullOver(fact.real))
    # The default tooling dir follows RINGFENCE_HOME (<home>/cache/tooling), which the
    # mask above hides whole: bind that one declared writable root back on top, and
    # nothing else of the state dir (the ledger, grants, stages stay hidden).
    for root in roots:
        if not (ws_real and _inside(root, ws_real)) and any(
                _inside(root, host.path(d).real) for d in host.private_dirs
                if host.path(d).kind == "dir"):
            masks = [op for op in ops if isinstance(op, (Tmpfs, DevNullOver))
                     and _inside(op.dst, root)]
            ops.append(Bind(root, root))
            ops.extend(masks)           # read-denied paths inside it stay masked

    env_ops = _env_ops(profile, host, ctx, notes)
    ops.extend(_ca_binds(host, ops, {op.name for op in env_ops if isinstance(op, PassEnv)},
                         notes))

    ops.extend(env_ops)
    if profile.credentials:
        from .broker import HELPER_PATH

        # git asks the broker through the helper; set by variables (no config file
        # to write), counted from 0: nothing of the person's config is replaced.
        ops.append(Broker(tuple((c.name, c.source, tuple(c.domains), c.username)
                                for c in profile.credentials), HELPER_PATH))
        ops += [SetEnv("GIT_CONFIG_COUNT", "1"), SetEnv("GIT_CONFIG_KEY_0", "credential.helper"),
                SetEnv("GIT_CONFIG_VALUE_0", HELPER_PATH)]
    ops.append(Seccomp(deny_unix_sockets=not profile.network.allow_unix_sockets))
    lim = profile.limits
    _check_limits(profile)
    for attr, kind in RLIMIT_MB.items():
        value = getattr(lim, attr)
        if value is not None:
            ops.append(Rlimit(kind, int(value) * 1024 * 1024))
    if lim.pids is not None:
        ops.append(Rlimit("nproc", int(lim.pids)))
    if getattr(lim, "stage_mb", None) is not None and any(isinstance(o, Stage) for o in ops):
        # Not a kernel rlimit: the supervisor watches the stage's growth (limits.py).
        ops.append(Rlimit("stage", int(lim.stage_mb) * 1024 * 1024))
    net = profile.network
    if net.mode == "proxy" and net.allow:
        prefix = host.python_prefix
        masked = ("/tmp", "/run") + tuple(op.dst for op in ops if isinstance(op, Tmpfs))
        if prefix and any(_inside(prefix, m) for m in masked) and \
                not (any(_inside(prefix, h) for h in masked_homes) and seen(prefix)):
            # The relay's interpreter lives under a path the sandbox masks: bind
            # its installation back in, read-only, so the relay can start.
            ops.append(RoBind(prefix, prefix))
        ops.append(Proxy(tuple(net.allow), tuple(net.deny)))
    elif net.mode == "proxy":
        notes.append(Note("RF613", "network mode 'proxy' with an empty allowlist: "
                                   "no proxy is started and the sandbox has no network"))
    start = ws_real or host.home
    if cwd and ws_real and _inside(_norm(cwd), ws_real):
        start = _norm(cwd)
    ops.append(Chdir(start))
    return SandboxSpec(profile.name, ws, tuple(ops), tuple(notes))


def _ca_binds(host, ops: list, passed: set[str], notes: list[Note]) -> list:
    """Make the CA bundles that passed variables name readable (issue 10 §8).

    Behind a TLS-intercepting proxy the tools in the sandbox need the person's CA
    bundle, which may sit under a path the sandbox hides (a private /tmp, a
    read-denied dir). Only the single file is bound back read-only, never the
    directory around it, and only when it holds nothing but PEM certificates
    (host.ca_files); a value set by the profile (env.set) never binds anything.
    """
    masks = [op.dst for op in ops if isinstance(op, (Tmpfs, DevNullOver))]
    out: list = []
    for var, path, certs_only in getattr(host, "ca_files", ()):
        if var not in passed:
            continue
        fact = host.path(path)
        if fact.kind == "missing" or not any(_inside(fact.real, m) for m in masks):
            continue
        if fact.kind == "file" and certs_only:
            if RoBind(fact.real, fact.real) not in out:
                out.append(RoBind(fact.real, fact.real))
            continue
        what = "a directory" if fact.kind == "dir" else "not a file of PEM certificates only"
        notes.append(Note("RF621", f"{var}={path} is hidden in this sandbox and {what}; "
                                   "it stays hidden, so TLS clients that need it may fail "
                                   "(point it at a certificate file outside the hidden paths)"))
    return out


def _env_ops(profile: Profile, host, ctx: dict, notes: list[Note]) -> list:
    env = profile.env
    names = host.env_names
    ops: list = [ClearEnv(), SetEnv("HOME", host.home), SetEnv("TMPDIR", "/tmp")]
    ops.append(PassEnv("PATH") if "PATH" in names else SetEnv("PATH", DEFAULT_PATH))
    fixed = {"HOME", "TMPDIR", "PATH"}
    secret_env = set(getattr(host, "secret_env", ()))
    passed: list[str] = []
    for pattern in env.pass_:
        matches = fnmatch.filter(names, pattern) if GLOB_CHARS.search(pattern) else \
            ([pattern] if pattern in names else [])
        for name in matches:
            if name in fixed or name in passed:
                continue
            if looks_like_credential(name) and name not in env.allow_credentials:
                # Opt-in only: a glob like "*" must never carry a token inside.
                notes.append(Note("RF610", f"environment variable {name} looks like a "
                                  "credential and was not passed (list it in "
                                  "env.allow_credentials to pass it)"))
                continue
            if name in secret_env and name not in env.allow_credentials:
                # The name says nothing, the value is a token (LS_COLORS=ghp_...).
                notes.append(Note("RF610", f"environment variable {name} holds a value "
                                  "shaped like a credential and was not passed (list it "
                                  "in env.allow_credentials to pass it)"))
                continue
            passed.append(name)
    ops.extend(PassEnv(n) for n in passed)
    for name, value in env.set:
        ops.append(SetEnv(name, value))
    if profile.tooling.enabled:
        tooling = ctx["tooling"]
        ops.extend(SetEnv(var, f"{tooling}/{sub}") for var, sub in TOOLING_VARS)
    if profile.network.mode == "proxy" and profile.network.allow:
        url = "http://" + Proxy((), ()).listen
        for var in PROXY_VARS:
            ops.extend((SetEnv(var, url), SetEnv(var.lower(), url)))
        ops.extend((SetEnv("NO_PROXY", NO_PROXY), SetEnv("no_proxy", NO_PROXY)))
    return ops


def _check_limits(profile) -> None:
    """A ``Profile`` built in code skips the file schema: hold its limits to the same
    documented ranges (RF550), so none overflows a system call after bwrap started."""
    from ringfence.profiles.ranges import LIMIT_RANGES, out_of_range
    from ringfence.rfcore.errors import ProfileError

    for name in LIMIT_RANGES:
        value = getattr(profile.limits, name, None)
        bad = None if value is None else out_of_range(name, value)
        if bad is not None:
            raise ProfileError(f"limits.{name} {bad[1]} (RF550)", file=profile.source,
                               key=f"limits.{name}")
