"""Setting a sandbox up, before anything runs in it: the stage, the seccomp, env and
sanitized-config memfds, the proxy, the cgroup and rlimits, and the bwrap argv.

``Setup.build(...)`` does all of it and returns the object that holds it; the
caller starts bwrap with it (``compiler/supervise.py``) either at once (a cold run,
``compiler/execute.py``) or ahead of time with a launcher waiting for the real
argv (a Session's spare, ``compiler/spare.py``). ``Setup.close(ran)`` undoes
whatever is left: the cgroup (SIGKILLing what is still in it), the fds, the
proxy and its runtime dir, and the stage when nothing ran in it.

Fail closed: anything that stops the sandbox from being set up raises
SandboxError (exit 125) and the command does not run.
"""

from __future__ import annotations

import os
from typing import Mapping, Sequence

from ringfence.rfcore.errors import SandboxError
from ringfence.rfcore.fsops import copy_file, remove_tree

from ringfence.staging import mount as staging
from .backends.bwrap import env_args, render
from .spec import Broker, Note, Rlimit, SandboxSpec, Sanitized, Stage
from .supervise import warn


class Setup:
    """One sandbox, set up and not yet started (see the module doc)."""

    def __init__(self, spec: SandboxSpec, degradations: list[Note]) -> None:
        self.spec, self.degradations = spec, degradations
        self.stage = None
        self.stage_r = self.stage_w = None
        self.fds: list[int] = []
        self.proxy = self.proxy_dir = self.lims = self.broker = None
        self.inherit: list[int] = []
        self.bargv: list[str] = []
        self.status_r = self.status_w = None
        self.pre = None

    @classmethod
    def build(cls, spec: SandboxSpec, argv: Sequence[str], *, host, env: Mapping[str, str],
              degradations: list[Note], shown: int | None, extra_fds: Sequence[int] = (),
              stage_state: str = "running") -> "Setup":
        """``shown``: how many of ``degradations`` were printed already (None: print
        none; a spare's notes are printed when a run uses it).
        ``extra_fds``: more fds bwrap passes to the command (a spare's pipes)."""
        self = cls(spec, degradations)
        try:
            self._build(argv, host, env, shown, extra_fds, stage_state)
        except BaseException:
            self.close(ran=False)
            raise
        return self

    def _build(self, argv, host, env, shown, extra_fds, stage_state) -> None:
        spec, degradations = self.spec, self.degradations
        stage_ops = spec.of(Stage)
        if stage_ops:
            from ringfence.rfcore.paths import state_dir

            staging.check_space(state_dir(env))
            try:
                self.stage = staging.create(state_dir(env), stage_ops[0].path)
            except OSError as exc:
                raise staging.setup_error(f"cannot create a stage dir: {exc}".encode()) from None
            if stage_state != "running":
                self.stage.write_meta(state=stage_state)
            self.stage_r, self.stage_w = os.pipe()
            self.fds.append(self.stage_r)
        seccomp_fd = _seccomp_fd(spec, host.arch, degradations)
        if seccomp_fd is not None:
            self.fds.append(seccomp_fd)
        handoff_fd = None
        if spec.proxy is not None:
            self.proxy, self.proxy_dir = _start_proxy(spec, self.stage, degradations)
            handoff_fd = self.proxy.handoff_fd
            self.fds.append(handoff_fd)     # the sandbox's end; ours is closed after the run
        data_fds = _sanitized_fds(spec)
        self.fds.extend(data_fds.values())
        helper_fd = None
        if spec.of(Broker):
            from .broker import Broker as CredentialBroker
            from .spec import Bind

            roots = [spec.workspace or ""] + [op.src for op in spec.of(Bind)] \
                + [op.path for op in spec.of(Stage)]
            self.broker = CredentialBroker(spec.of(Broker)[0].entries, env, roots)
            helper_fd = _data_fd(self.broker.helper_source(host.python))
            self.fds.append(helper_fd)
            self.inherit.append(self.broker.sandbox_fd)     # closed by broker.stop()
        self.status_r, status_w = os.pipe()
        self.fds.append(self.status_r)   # status_w is closed by supervise, exactly once
        try:
            bargv = render(spec, argv, bwrap=host.bwrap, env=env, seccomp_fd=seccomp_fd,
                           proxy_dir=self.proxy_dir, python=host.python, inline_env=False,
                           status_fd=status_w, handoff_fd=handoff_fd, data_fds=data_fds,
                           helper_fd=helper_fd)
        except BaseException:
            os.close(status_w)
            raise
        self.status_w = status_w
        # The command's environment goes to bwrap through --args (a memfd), never
        # through bwrap's own environment: bwrap runs on the host (compiler/backends/
        # bwrap.py says why). bwrap itself gets the fixed HOST_ENV.
        env_fd = _args_fd(env_args(spec, env))
        self.fds.append(env_fd)
        bargv[1:1] = ["--args", str(env_fd)]
        self.bargv = bargv
        for note in degradations[shown:] if shown is not None else ():
            warn(note)
        from .limits import RunLimits

        lims = self.lims = RunLimits.of(spec)
        _no_cgroup(lims, degradations, quiet=shown is None)
        if self.stage is not None:
            lims.watch_stage(self.stage.upper)
        pre = _rlimit_fn(spec, lims.rlimits())      # no RLIMIT_AS under a memory cgroup
        if self.stage is not None:
            pre = staging.preexec(self.stage, self.stage_w, then=pre)
        self.pre = lims.preexec(then=pre)        # first: nothing of the run escapes it
        self.inherit.extend(extra_fds)

    def pass_fds(self) -> tuple[int, ...]:
        """The fds bwrap inherits (the status pipe's write end among them)."""
        return (tuple(f for f in self.fds if f not in (self.status_r, self.stage_r))
                + (self.status_w,) + tuple(self.inherit))

    def setup_err(self):
        return (self.stage_r, self.stage_w) if self.stage is not None else None

    def close(self, ran: bool) -> tuple:
        """Undo what is left (the module doc); returns ``(network decisions, late
        notes)``. The broker is the caller's to stop (it reads its uses first)."""
        if self.lims is not None:
            self.lims.close()       # SIGKILLs anything left in the run's cgroup, removes it
        for fd in self.fds + [f for f in (self.status_w, self.stage_w) if f is not None]:
            try:
                os.close(fd)
            except OSError:
                pass
        self.fds, self.status_w, self.stage_w = [], None, None
        decisions = tuple(self.proxy.decisions) if self.proxy is not None else ()
        late: tuple[Note, ...] = ()
        if self.proxy is not None:
            self.proxy.stop()
            if self.proxy.failure is not None:
                # The socket was listening but the proxy loop (started on the first
                # connection) failed: its clients were refused, so the command had
                # no network at all. Never silent: stderr and the ledger say so.
                late = (Note("RF607", f"the network proxy failed after the command started "
                                      f"({self.proxy.failure}); its connections were refused, "
                                      "the command had no network"),)
                warn(late[0])
            self.proxy = None
        if self.proxy_dir:
            remove_tree(self.proxy_dir)
            self.proxy_dir = None
        if self.stage is not None and not ran:
            self.stage.remove()      # the command never ran (or we were interrupted)
        return decisions, late


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


def _no_cgroup(lims, degradations: list[Note], quiet: bool = False) -> None:
    note = lims.no_cgroup_note()
    if note is not None:
        degradations.append(note)
        if os.geteuid() == 0 and not quiet:
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

