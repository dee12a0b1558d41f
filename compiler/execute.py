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

from ringfence.staging.settle import prewarm_soon
from .host import HOST_ENV
from .spec import Broker, Note, SandboxSpec
from .startup import Setup, _relay_artifact, _seccomp_fd  # noqa: F401 - tests import them
from .supervise import ExecResult, supervise, warn


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


def execute(spec: SandboxSpec, argv: Sequence[str], *, host, env: Mapping[str, str],
            timeout: float | None = None, stdin: bytes | int | IO | None = None,
            capture: bool = False, out: IO[bytes] | None = None,
            err: IO[bytes] | None = None, recovered: Sequence[Note] = ()) -> ExecResult:
    """Run ``argv`` under ``spec``. Streams output unless ``capture``.

    ``recovered``: notes from processing dead runs' journals (already shown),
    kept in the result so the ledger records them. Under a Session's spare pool
    (``compiler/spare.py``) the sandbox may be one set up ahead of time, used only
    when it is provably the one this call would set up now.
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
    import sys

    # Only a Session imports the spare module (compiler/spare.py): `ringfence run`
    # never pays for it.
    spares = sys.modules.get("ringfence.compiler.spare")
    pool = spares.current() if spares is not None else None
    fit = pool is not None and spares.fits(spec, argv, stdin)
    warm = pool.take(spec, argv, host, env) if fit else None
    shown = len(recovered) + len(spec.notes)
    try:
        if warm is not None:
            try:
                return _execute(spec, argv, host, env, timeout, stdin, capture, out, err,
                                list(degradations), shown, warm)
            except spares.SpareGone:
                pool.used, pool.why_not = False, "its sandbox died as it was handed the run"
        return _execute(spec, argv, host, env, timeout, stdin, capture, out, err,
                        degradations, shown, None)
    finally:
        if fit:
            pool.want(spec, host, env)      # the next run's sandbox, made after this one


def _execute(spec, argv, host, env, timeout, stdin, capture, out, err, degradations,
             shown, warm) -> ExecResult:
    import sys
    import time as _time

    started = _time.time()
    sinks: list = [None, None]          # the redacting output sinks of a brokered run
    ran = False
    s = loading = None
    try:
        if warm is not None:
            s = warm.setup
            degradations.extend(warm.notes)
            for note in warm.notes:     # printed as a cold start prints them (startup.py)
                if note.code != "RF626" or os.geteuid() == 0:
                    warn(note)
        else:
            s = Setup.build(spec, argv, host=host, env=env, degradations=degradations,
                            shown=shown)
        broker = s.broker
        if broker is not None and not capture:
            # The command may print what it got: the caller (a terminal, an agent's
            # context) sees the value redacted, as the ledger keeps it.
            from .leakscan import Redactor

            out = sinks[0] = Redactor(out if out is not None else sys.stdout.buffer,
                                      broker.secrets())
            err = sinks[1] = Redactor(err if err is not None else sys.stderr.buffer,
                                      broker.secrets())
        # A spare's bwrap is running already: it closed these when it started.
        pass_fds = s.pass_fds() if warm is None else ()
        status_w, setup_err = s.status_w, s.setup_err() if warm is None else None
        s.status_w = s.stage_w = None       # supervise closes them, exactly once
        # A fresh `ringfence run` loads settle's modules while the command writes; a
        # Session (the only importer of compiler/spare.py) has them after its first.
        loading = (prewarm_soon(s.stage.upper) if s.stage is not None
                   and "ringfence.compiler.spare" not in sys.modules else None)
        result = supervise(s.bargv, dict(HOST_ENV), s.status_r, spec, timeout, stdin,
                           capture, out, err, degradations, pass_fds=pass_fds,
                           close_after_start=status_w, preexec=s.pre, setup_err=setup_err,
                           watch=s.lims.watch if s.lims.active else None,
                           started=warm)
        ran = True
    finally:
        if loading is not None:
            loading.done()          # stopped, and any load under way finished
        for sink in sinks:
            if sink is not None:
                sink.drain()
        if warm is not None and not ran:
            warm.kill()     # taken, maybe never handed its argv: bwrap too, and reaped
            decisions, late = (), ()
        else:
            decisions, late = s.close(ran) if s is not None else ((), ())
        if warm is not None:
            warm.done()
        hits: tuple[str, ...] = ()
        broker = s.broker if s is not None else None
        if broker is not None:
            broker.stop()           # the run is over: no credential is handed out again
            decisions += tuple(broker.uses)
            if ran and any(u["given"] for u in broker.uses):
                hits = _secret_hits(spec, s.stage, broker.secrets(), started)
                # The ledger keeps output tails for good: never a brokered value.
                result = _with(result, **{k: _redact(getattr(result, k), broker.secrets())
                                          for k in ("stdout_tail", "stderr_tail",
                                                    "stdout", "stderr")})
    return _with(result, network_decisions=decisions, stage=s.stage,
                 stage_min_free=s.lims.stage_min_free if s.lims is not None else None,
                 degradations=result.degradations + s.lims.after(result) + late,
                 secret_hits=hits, spare=warm is not None)


def _with(result: ExecResult, **changes) -> ExecResult:
    from ringfence.rfcore.records import replace
    return replace(result, **changes)
