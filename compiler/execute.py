"""Run a compiled spec: set up bwrap (argv, seccomp fd, env memfd, proxy, stage).

Fail closed: anything that stops the sandbox from being set up raises
SandboxError (exit 125) and the command does not run. A missing protection
(no seccomp generator for this arch, no proxy) is a degradation: a RF6xx
note printed to stderr and returned in the result, never silent.

Running it, once started, is ``compiler/supervise.py`` (output, signals, timeout,
exit status).
"""

from __future__ import annotations

import os
from typing import IO, Mapping, Sequence

from ringfence.rfcore.errors import SandboxError
from ringfence.rfcore.fsops import copy_file, remove_tree

from ringfence.staging import mount as staging
from ringfence.staging.settle import prewarm_soon
from .backends.bwrap import env_args, render
from .host import HOST_ENV
from .spec import Broker, Note, Rlimit, SandboxSpec, Sanitized, Stage
from .supervise import ExecResult, supervise, warn


def _rlimit_fn(spec: SandboxSpec, values: dict | None = None):
    """The child's setrlimit step: the spec's rlimits, with ``values`` in place of the
    spec's where given (None drops one; compiler/limits.py RunLimits.rlimits)."""
    values = values or {}
    limits = [(r.kind, values.get(r.kind, r.value)) for r in spec.of(Rlimit)
              if r.kind != "stage" and values.get(r.kind, r.value) is not None]
    if not limits:
        return None
    import resource

    names = {"as": resource.RLIMIT_AS, "nproc": resource.RLIMIT_NPROC,
             "fsize": resource.RLIMIT_FSIZE}
    pairs = []
    for kind, want in limits:
        # Never above the hard limit we already have: raising it needs a privilege
        # an unprivileged user lacks, and setrlimit in the child would fail after
        # fork (an internal error). Lowering is always allowed.
        hard = resource.getrlimit(names[kind])[1]
        pairs.append((names[kind], want if hard == resource.RLIM_INFINITY else min(want, hard)))

    def apply() -> None:   # in the child, before exec of bwrap; inherited inside
        for kind, value in pairs:
            resource.setrlimit(kind, (value, value))
    return apply


MAX_TIMEOUT = 7 * 86400     # as `run --timeout` and limits.timeout (profiles/ranges.py)


def _checked_timeout(timeout):
    """A timeout the supervisor can wait for: finite, positive, at most a week. An API
    caller's ``inf`` or ``1e400`` would overflow ``time_t`` after bwrap started."""
    if timeout is None:
        return None
    try:
        ok = 0 < float(timeout) <= MAX_TIMEOUT
    except (TypeError, ValueError, OverflowError):
        ok = False
    if not ok:
        raise SandboxError(f"timeout must be more than 0 and at most {MAX_TIMEOUT} seconds, "
                           f"not {str(timeout)[:24]!r}; nothing was run (RF550)",
                           hint="pass a finite number of seconds")
    return float(timeout)


def _no_cgroup(lims, degradations: list[Note]) -> None:
    note = lims.no_cgroup_note()
    if note is not None:
        degradations.append(note)
        if os.geteuid() == 0:
            warn(note)      # root expected a cgroup; unprivileged: recorded only


def _args_fd(args: list[str]) -> int:
    """A memfd holding NUL-separated arguments for bwrap's ``--args FD``."""
    fd = os.memfd_create("ringfence-env", 0)
    data = b"".join(a.encode("utf-8", "surrogateescape") + b"\0" for a in args)
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]
    os.lseek(fd, 0, os.SEEK_SET)
    return fd


def _secret_hits(spec: SandboxSpec, stage, secrets: list[str], since: float) -> tuple:
    """Files this run wrote that hold a brokered secret: in the stage's upper dir
    (workspace-relative, held by settle) and in the other writable roots (absolute;
    they are not staged, so the file is removed from the host)."""
    from .leakscan import scan
    from .spec import Bind

    out: list[str] = []
    if stage is not None:
        up = stage.upper
        out += [os.path.relpath(p, up) for p in scan([up], secrets, 0.0)]
    others = [op.dst for op in spec.of(Bind) if stage is None or op.dst != stage.workspace]
    for path in scan(others, secrets, since):
        try:
            if os.path.isdir(path) and not os.path.islink(path):
                from ringfence.rfcore.fsops import remove_tree
                remove_tree(path)
            else:
                os.unlink(path)
        except OSError:
            pass
        out.append(path)
    return tuple(out)


def _redact(data: bytes | None, secrets: list[str]) -> bytes | None:
    from .leakscan import redactions

    for form in redactions(secrets):
        if data:
            data = data.replace(form, b"[brokered credential]")
    return data


def _data_fd(data: bytes) -> int:
    fd = os.memfd_create("ringfence-helper", 0)
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]
    os.lseek(fd, 0, os.SEEK_SET)
    return fd


def _sanitized_fds(spec: SandboxSpec) -> dict[str, int]:
    """A memfd per Sanitized op, holding the file's bytes with its secrets removed
    (read here, on the host; bwrap copies them into the sandbox: no file on disk)."""
    ops = spec.of(Sanitized)
    if not ops:
        return {}
    from .sanitize import sanitized

    out: dict[str, int] = {}
    for op in ops:
        fd = os.memfd_create("ringfence-config", 0)
        data = memoryview(sanitized(op.kind, op.src))
        while data:
            data = data[os.write(fd, data):]
        os.lseek(fd, 0, os.SEEK_SET)
        out[op.dst] = fd
    return out


def _seccomp_fd(spec: SandboxSpec, arch: str, degradations: list[Note]) -> int | None:
    """A memfd holding the filter, which bwrap applies to every process in the sandbox."""
    opts = spec.seccomp
    if opts is None:
        return None
    try:
        from .seccomp import build_filter
        program = build_filter(arch, deny_unix_sockets=opts.deny_unix_sockets)
    except (ImportError, ValueError) as exc:
        degradations.append(Note("RF606", f"no seccomp filter for this host ({exc}); "
                                 "the command runs without syscall filtering"))
        return None
    fd = os.memfd_create("ringfence-seccomp", 0)
    os.write(fd, program)
    os.lseek(fd, 0, os.SEEK_SET)
    return fd


def execute(spec: SandboxSpec, argv: Sequence[str], *, host, env: Mapping[str, str],
            timeout: float | None = None, stdin: bytes | int | IO | None = None,
            capture: bool = False, out: IO[bytes] | None = None,
            err: IO[bytes] | None = None, recovered: Sequence[Note] = ()) -> ExecResult:
    """Run ``argv`` under ``spec``. Streams output unless ``capture``.

    ``recovered``: notes from processing dead runs' journals (already shown),
    kept in the result so the ledger records them.
    """
    if not argv:
        raise SandboxError("no command given", hint="ringfence run -- ARGV... or -c 'STRING'")
    timeout = _checked_timeout(timeout)
    degradations: list[Note] = list(recovered) + list(spec.notes)
    for note in spec.notes:
        warn(note)
    if not spec.sandboxed:
        return supervise(list(argv), dict(env), None, spec, timeout, stdin, capture, out,
                         err, degradations, cwd=spec.workspace, sandboxed=False)
    if not host.bwrap:
        raise SandboxError("bubblewrap (bwrap) was not found on PATH; refusing to run the "
                           "command unsandboxed (RF601)",
                           hint="apt-get install bubblewrap (or dnf install bubblewrap), "
                                "then check with 'ringfence doctor'")
    stage = None
    stage_r = stage_w = None
    stage_ops = spec.of(Stage)
    if stage_ops:
        from ringfence.rfcore.paths import state_dir

        staging.check_space(state_dir(env))
        try:
            stage = staging.create(state_dir(env), stage_ops[0].path)
        except OSError as exc:
            raise staging.setup_error(f"cannot create a stage dir: {exc}".encode()) from None
        stage_r, stage_w = os.pipe()
    fds: list[int] = [f for f in (stage_r,) if f is not None]
    proxy = None
    proxy_dir = None
    lims = None
    broker = None
    sinks: list = [None, None]          # the redacting output sinks of a brokered run
    inherit: list[int] = []
    ran = False
    import time as _time
    started = _time.time()
    try:
        seccomp_fd = _seccomp_fd(spec, host.arch, degradations)
        if seccomp_fd is not None:
            fds.append(seccomp_fd)
        proxy_dir = handoff_fd = None
        if spec.proxy is not None:
            proxy, proxy_dir = _start_proxy(spec, stage, degradations)
            handoff_fd = proxy.handoff_fd
            fds.append(handoff_fd)      # the sandbox's end; ours is closed after the run
        data_fds = _sanitized_fds(spec)
        fds.extend(data_fds.values())
        helper_fd = None
        if spec.of(Broker):
            from .broker import Broker as CredentialBroker

            from .spec import Bind

            roots = [spec.workspace or ""] + [op.src for op in spec.of(Bind)] \
                + [op.path for op in spec.of(Stage)]
            broker = CredentialBroker(spec.of(Broker)[0].entries, env, roots)
            helper_fd = _data_fd(broker.helper_source(host.python))
            fds.append(helper_fd)
            inherit.append(broker.sandbox_fd)     # closed by broker.stop(), not here
        status_r, status_w = os.pipe()
        fds.append(status_r)        # status_w is closed by supervise, exactly once
        try:
            bargv = render(spec, argv, bwrap=host.bwrap, env=env, seccomp_fd=seccomp_fd,
                           proxy_dir=proxy_dir, python=host.python, inline_env=False,
                           status_fd=status_w, handoff_fd=handoff_fd, data_fds=data_fds,
                           helper_fd=helper_fd)
        except BaseException:
            os.close(status_w)
            raise
        # The command's environment goes to bwrap through --args (a memfd), never
        # through bwrap's own environment: bwrap runs on the host (compiler/backends/
        # bwrap.py says why). bwrap itself gets the fixed HOST_ENV.
        env_fd = _args_fd(env_args(spec, env))
        fds.append(env_fd)
        bargv[1:1] = ["--args", str(env_fd)]
        for note in degradations[len(recovered) + len(spec.notes):]:
            warn(note)
        from .limits import RunLimits

        lims = RunLimits.of(spec)
        _no_cgroup(lims, degradations)
        if stage is not None:
            lims.watch_stage(stage.upper)
        pre = _rlimit_fn(spec, lims.rlimits())      # no RLIMIT_AS under a memory cgroup
        if stage is not None:
            pre = staging.preexec(stage, stage_w, then=pre)
        pre = lims.preexec(then=pre)        # first: nothing of the run escapes it
        if broker is not None and not capture:
            # The command may print what it got: the caller (a terminal, an agent's
            # context) sees the value redacted, as the ledger keeps it.
            import sys as _sys

            from .leakscan import Redactor

            out = sinks[0] = Redactor(out if out is not None else _sys.stdout.buffer,
                                      broker.secrets())
            err = sinks[1] = Redactor(err if err is not None else _sys.stderr.buffer,
                                      broker.secrets())
        warm = prewarm_soon() if stage is not None else None
        result = supervise(bargv, dict(HOST_ENV), status_r, spec, timeout, stdin,
                           capture, out, err, degradations,
                           pass_fds=tuple(f for f in fds if f not in (status_r, stage_r))
                           + (status_w,) + tuple(inherit),
                           close_after_start=status_w, preexec=pre,
                           setup_err=(stage_r, stage_w) if stage is not None else None,
                           watch=lims.watch if lims.active else None)
        ran = True
        if warm is not None:
            warm.cancel()           # a command that ended first: settling loads them
    finally:
        for sink in sinks:
            if sink is not None:
                sink.drain()
        if lims is not None:
            lims.close()        # SIGKILLs anything left in the run's cgroup, removes it
        for fd in fds:
            try:
                os.close(fd)
            except OSError:
                pass
        decisions = tuple(proxy.decisions) if proxy is not None else ()
        hits: tuple[str, ...] = ()
        if broker is not None:
            broker.stop()           # the run is over: no credential is handed out again
            decisions += tuple(broker.uses)
            if ran and any(u["given"] for u in broker.uses):
                hits = _secret_hits(spec, stage, broker.secrets(), started)
                # The ledger keeps output tails for good: never a brokered value.
                result = _with(result, **{k: _redact(getattr(result, k), broker.secrets())
                                          for k in ("stdout_tail", "stderr_tail",
                                                    "stdout", "stderr")})
        late: tuple[Note, ...] = ()
        if proxy is not None:
            proxy.stop()
            if proxy.failure is not None:
                # The socket was listening but the proxy loop (started on the first
                # connection) failed: its clients were refused, so the command had
                # no network at all. Never silent: stderr and the ledger say so.
                late = (Note("RF607", f"the network proxy failed after the command started "
                                      f"({proxy.failure}); its connections were refused, "
                                      "the command had no network"),)
                warn(late[0])
        if proxy_dir:
            remove_tree(proxy_dir)
        if stage is not None and not ran:
            stage.remove()      # the command never ran (or we were interrupted)
    return _with(result, network_decisions=decisions, stage=stage,
                 stage_min_free=lims.stage_min_free if lims is not None else None,
                 degradations=result.degradations + lims.after(result) + late,
                 secret_hits=hits)


def _with(result: ExecResult, **changes) -> ExecResult:
    from ringfence.rfcore.records import replace
    return replace(result, **changes)


def _relay_artifact(source: str) -> str:
    """The relay's cached bytecode when it is exactly current, else its source.

    The interpreter recognises bytecode by its magic number whatever the file is
    called, so the staged file keeps its name either way; running bytecode saves
    compiling the relay inside every networked sandbox. "Exactly current" is the
    check the import system itself makes: same magic, unhashed, and the source's
    mtime and size recorded in the header.
    """
    from importlib._bootstrap_external import MAGIC_NUMBER, cache_from_source

    try:
        cached = cache_from_source(source)
        st = os.stat(source)
        with open(cached, "rb") as f:
            head = f.read(16)
    except (OSError, NotImplementedError, ValueError):
        return source
    expect = (MAGIC_NUMBER + (0).to_bytes(4, "little")
              + (int(st.st_mtime) & 0xFFFFFFFF).to_bytes(4, "little")
              + (st.st_size & 0xFFFFFFFF).to_bytes(4, "little"))
    return cached if head == expect else source


def _start_proxy(spec, stage, degradations):
    try:
        from .proxy import ProxyServer, make_runtime_dir
    except ImportError as exc:
        raise SandboxError(f"the network proxy is not available ({exc}); refusing to run "
                           "a proxy profile without it (RF607)",
                           hint="use a profile with network mode 'none' (e.g. strict)") from None
    try:
        rdir = make_runtime_dir()
    except OSError as exc:
        raise SandboxError(f"cannot make a private runtime dir for the network relay: {exc}; "
                           "refusing to run without the network policy the profile "
                           "states (RF607)",
                           hint="set XDG_RUNTIME_DIR to a writable directory") from None
    if stage is not None:       # so a SIGKILLed run's socket dir is removed later
        stage.write_meta(runtime_dir=rdir)
    from .backends.bwrap import RELAY

    try:
        copy_file(_relay_artifact(RELAY), os.path.join(rdir, "relay.py"))
    except OSError as exc:
        raise SandboxError(f"cannot stage the network relay in {rdir}: {exc.strerror}; "
                           "refusing to run without the network policy the profile "
                           "states (RF607)") from None
    # The relay hands its 127.0.0.1 listener over the server's socket pair: no
    # Unix socket path that a sandboxed process would have to open.
    server = ProxyServer(spec.proxy.allow, spec.proxy.deny)
    try:
        server.start()
    except OSError as exc:
        raise SandboxError(f"cannot start the network proxy: {exc}; refusing to run without "
                           "the network policy the profile states (RF607)") from None
    except SandboxError as exc:
        raise SandboxError(f"{exc.message}; refusing to run without the network policy "
                           "the profile states (RF607)",
                           hint="set XDG_RUNTIME_DIR to a short writable directory, or run "
                                "'ringfence doctor'") from None
    return server, rdir
