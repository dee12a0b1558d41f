"""The runner: resolve profile -> classify -> gate -> compile -> execute.

Two stages, so an approvals/ledger layer can wrap them:

* ``prepare(...) -> Prepared``: everything that decides, nothing that runs
  (profile, verdict, gate decision, compiled spec, host facts).
* ``execute_prepared(prepared, ...) -> RunResult``: runs it. Only call this
  for ``decision == "allow"`` (or after an approval).

``run(...)`` does both and maps deny -> 77 and ask -> 75 without running.
Fail closed: no usable bwrap, a bad profile or bad arguments raise a
``RingfenceError`` (exit 125) and the command does NOT run. ringfence never
falls back to running unsandboxed; only the explicit ``host`` profile
(``--sandbox off``) runs on the host, and that is recorded.

Only stdlib + our packages: this is the ``ringfence run`` hot path.
"""

from __future__ import annotations

import os
import shlex
from ringfence.rfcore.records import field, record
from typing import IO, Mapping, Sequence

from ringfence.rfcore.errors import (EXIT_DENIED, EXIT_LIMIT, EXIT_UNSAFE, EXIT_WAITING,
                                     UsageError)


@record
class Prepared:
    argv: tuple[str, ...]           # what runs inside (bash -c STRING for command=)
    text: str                       # the classified string
    workspace: str
    profile: object                 # profiles.model.Profile
    profile_reason: str
    verdict: object                 # classifier.verdict.Verdict
    decision: str                   # allow | ask | deny
    reasons: tuple[str, ...]
    spec: object                    # compiler.spec.SandboxSpec (None unless allowed)
    host: object                    # compiler.host.HostFacts
    env: Mapping[str, str] = field(repr=False, default_factory=dict)
    recovered: tuple = ()           # RF642 notes: dead runs' stages that never settled


@record
class RunResult:
    exit_code: int
    status: str                     # completed|failed|denied|waiting_for_approval|aborted
    profile: str
    decision: str
    reasons: tuple[str, ...] = ()
    verdict: object = None
    spec_digest: str | None = None
    sandboxed: bool = True
    duration: float = 0.0
    stdout_tail: bytes = b""
    stderr_tail: bytes = b""
    stdout: bytes | None = None     # whole output with capture=True
    stderr: bytes | None = None
    network: tuple = ()             # proxy decisions
    degradations: tuple = ()        # RF6xx notes (compile, runtime, recovery)
    changes: dict | None = None     # the exact change record (ringfence/staging/settle.py)
    held: tuple = ()                # changes held for a person: ({path, op, why}, ...)
    stage: str | None = None        # the stage dir keeping the held changes
    outcome: str | None = None      # why an aborted run stopped: "timeout" | "signal"

    def to_json(self) -> dict:
        return {
            "exit_code": self.exit_code, "status": self.status, "profile": self.profile,
            "decision": self.decision, "reasons": list(self.reasons),
            "spec_digest": self.spec_digest, "sandboxed": self.sandboxed,
            "duration": self.duration,
            "degradations": [{"code": n.code, "message": n.message} for n in self.degradations],
            "changes": self.changes, "held": list(self.held),
        }


def _resolve_profile(profile, workspace: str, env: Mapping[str, str]):
    from ringfence.profiles.model import Profile

    if isinstance(profile, Profile):
        return profile, "given"
    if profile is not None and not isinstance(profile, str):
        raise UsageError(f"profile must be a name, a path or a Profile, not {type(profile).__name__}")
    from ringfence.profiles.load import resolve_active

    return resolve_active(profile, env=env, workspace=workspace)


def prepare(argv: Sequence[str] | None = None, *, command: str | None = None,
            profile=None, workspace: str | None = None,
            env: Mapping[str, str] | None = None, grants: frozenset = frozenset(),
            verdict=None, cwd: str | None = None, approved: bool = False) -> Prepared:
    """``verdict``: the caller's classification of this same text (the governor has
    one already); used only if its ``command`` is exactly the text we would
    classify, so a stale or foreign verdict can never decide for another command."""
    if (argv is None) == (command is None):
        raise UsageError("give either an argv or a command string (-c), not both or neither",
                         hint="ringfence run -- ARGV...   or   ringfence run -c 'STRING'")
    if argv is not None and (not argv or not all(isinstance(a, str) for a in argv)):
        raise UsageError("empty command", hint="ringfence run -- ARGV...")
    if command is not None and not command.strip():
        raise UsageError("empty command string", hint="ringfence run -c 'STRING'")
    env = dict(os.environ if env is None else env)
    ws = os.path.abspath(workspace or os.getcwd())
    if not os.path.isdir(ws):
        raise UsageError(f"workspace {ws} is not a directory; nothing was run (RF609)",
                         hint="pass --workspace DIR with an existing directory")
    prof, why = _resolve_profile(profile, ws, env)

    from ringfence.classifier import classify
    from ringfence.session.gate import decide

    text = command if command is not None else shlex.join(argv)
    inner = ("bash", "-c", "--", command) if command is not None else tuple(argv)
    if command is not None and len(command) > _CHUNK:
        inner = big_command(command)
    if verdict is None or getattr(verdict, "command", None) != text:
        verdict = classify(text)
    decision = decide(verdict, prof, grants=grants, context="sandbox", cwd=cwd or os.getcwd())
    kind = decision.decision
    if kind == "ask" and approved:
        # A person approved this exact text (`approve`, or a Claude Code consent):
        # an ask (a rule, or code the rules cannot see) no longer holds it; deny does.
        kind = "allow"
    spec = host = None
    recovered: tuple = ()
    if kind == "allow":
        recovered = recover(env)
        spec, host = compile_for(prof, ws, env, cwd=cwd)
    return Prepared(inner, text, ws, prof, why, verdict, kind,
                    tuple(decision.reasons), spec, host, env, recovered)


# The kernel caps ONE argv string at 128 KiB (MAX_ARG_STRLEN), so a longer -c text
# cannot reach bash as one word. It goes in pieces (each at most _CHUNK characters,
# so at most 4 * _CHUNK bytes) that bash joins and evals: the same text, parsed
# and run by the same shell. The helper variables are unset before it runs.
_CHUNK = 24 * 1024
_JOIN = ('rf_c=; for rf_p do rf_c+=$rf_p; done; unset rf_p; set --; '
         'eval "unset rf_c; $rf_c"')


def big_command(command: str) -> tuple[str, ...]:
    parts = [command[i:i + _CHUNK] for i in range(0, len(command), _CHUNK)]
    return ("bash", "-c", _JOIN, "bash", *parts)


def recover(env: Mapping[str, str]) -> tuple:
    """Report the stages of dead runs (SIGKILLed ringfence) that never settled:
    their writes never reached the workspace; remove their proxy runtime dirs."""
    from ringfence.staging.stale import recover as _recover
    from ringfence.rfcore.paths import state_dir

    notes = tuple(_recover(state_dir(env)))
    if notes:
        from ringfence.compiler.execute import warn
    for note in notes:
        warn(note)
    return notes


def compile_for(profile, workspace: str, env: Mapping[str, str], cwd: str | None = None):
    """Probe the host for this profile and compile it. (spec, host facts)."""
    from ringfence.compiler.compile import compile_profile
    from ringfence.compiler.host import probe

    host = probe(env=env)
    _refuse_broad_workspace(profile, workspace, host.home)
    from ringfence.compiler.writable import refuse_private_state_inside

    refuse_private_state_inside(profile, workspace, host.home, env)
    if profile.sandbox and profile.tooling.enabled:
        # The tooling dir is a declared cache dir, not a placeholder: create it so
        # the writable bind has a source.
        from ringfence.profiles.roots import _tooling_dir
        os.makedirs(_tooling_dir(profile, host.home, host.tooling_default), mode=0o700,
                    exist_ok=True)
    host = host.for_profile(profile, workspace)
    return compile_profile(profile, workspace, host,
                           cwd=os.path.realpath(cwd) if cwd else None), host


def _refuse_broad_workspace(profile, workspace: str, home: str) -> None:
    """A run whose writable workspace is / or contains the home directory would make
    dotfiles, ~/.local/bin and autostart entries writable: far more than "the
    project". Refused (RF616); every export refuses the same (compiler.workspace)."""
    from ringfence.compiler.writable import refuse_unusable_workspace

    refuse_unusable_workspace(profile, workspace, home)


def execute_prepared(p: Prepared, *, timeout: float | None = None,
                     stdin: bytes | int | IO | None = None, capture: bool = False,
                     out: IO[bytes] | None = None, err: IO[bytes] | None = None,
                     on_ran=None) -> RunResult:
    from ringfence.compiler.execute import execute

    if p.spec is None:
        recovered = recover(p.env)
        spec, host = compile_for(p.profile, p.workspace, p.env)
        p = Prepared(**{**p.__dict__, "spec": spec, "host": host, "recovered": recovered})
    limit = timeout if timeout is not None else p.profile.limits.timeout
    res = execute(p.spec, p.argv, host=p.host, env=p.env, timeout=limit, stdin=stdin,
                  capture=capture, out=out, err=err, recovered=p.recovered)
    changes, held, kept, late = None, (), None, ()
    res = _file_size_killed(res)
    cut = res.stage is not None and _stage_cut(res.stage, res.stage_min_free)
    if cut:
        late = (cut,)
        from ringfence.rfcore.records import replace

        res = replace(res, stage=None)
    if res.stage is not None:
        # The sandbox is gone: record exactly what it wrote, apply what is harmless,
        # keep what the host would obey (held) in the stage for a person.
        from ringfence.compiler.execute import warn
        from ringfence.rfcore.notes import Note
        from ringfence.staging.settle import settle

        if on_ran is not None:
            try:
                on_ran(res)         # the ledger learns what ran before settling
            except Exception as exc:  # noqa: BLE001 - recording must not lose the run
                warn(Note("RF644", f"could not record the run before settling ({exc})"))
        rel_hits = tuple(h for h in res.secret_hits if not h.startswith("/"))
        try:
            # the stage's apparent size is counted on settle's own walk of it
            settled = settle(res.stage, p.profile, p.env, rel_hits, hold_all=_killed(res),
                             limits=None if res.limit else p.profile.limits)
        except OSError as exc:
            # The sandbox is gone; its writes are still in the upper dir. Keep them
            # (the next run and `doctor` report the stage, RF642), never half-apply
            # silently, and say it in one line.
            from ringfence.rfcore.errors import SettleError

            raise SettleError(
                f"the command ran (exit {res.exit_code}) but its writes could not be "
                f"recorded and applied: {exc.strerror or exc}; they are kept, unapplied, "
                f"in {res.stage.path}",
                hint="free space in the workspace and state dir; 'ringfence doctor' "
                     "lists the stages left behind") from None
        changes, held, kept, late = settled.changes, settled.held, settled.stage, settled.notes
        if settled.limit:
            from ringfence.rfcore.records import replace

            res = replace(res, limit=settled.limit)
        for note in late:
            warn(note)
    if res.secret_hits:
        from ringfence.compiler.execute import warn
        from ringfence.compiler.spec import Note

        note = Note("RF653", "the run wrote a brokered credential into "
                    + ", ".join(res.secret_hits[:5]) + ": held in the stage (workspace) "
                    "or removed (other writable roots)")
        warn(note)
        late = tuple(late) + (note,)
    outcome = "timeout" if res.timed_out else "signal" if res.signal is not None else None
    unsettled = bool(changes and changes.get("settle_error"))   # RF643/RF644: none applied
    if res.limit:
        late = late + (_limit_note(res.limit, p.profile.limits, res.limit_late),)
        status, outcome = "limit", res.limit
    elif cut:
        status, outcome = "limit", "stage_space"
    elif outcome:
        status = "aborted"        # SPEC §5's state; the outcome field says why
    else:   # unsettled: it ran, none of its writes landed (RF643/RF644): never 0
        status = "completed" if res.exit_code == 0 and not unsettled else "failed"
    code = (EXIT_LIMIT if status == "limit" else EXIT_UNSAFE if unsettled and status == "failed"
            else res.exit_code)   # docs/exit-codes.md
    return RunResult(code, status, p.profile.name, p.decision, p.reasons,
                     p.verdict, p.spec.digest(), res.sandboxed, res.duration,
                     res.stdout_tail, res.stderr_tail, res.stdout, res.stderr,
                     res.network_decisions, res.degradations + tuple(late), changes, held,
                     kept, outcome)


def _file_size_killed(res):
    """SIGXFSZ killed the command: a write reached ``file_size_mb`` (a limit hit).
    A stage over ``stage_mb`` apparent bytes, or holding a file cut exactly at the
    limit, is found by settle on its own walk of the stage (``apply.Meter``)."""
    if not res.limit and res.sandboxed and res.exit_code == 128 + 25:
        from ringfence.rfcore.records import replace

        return replace(res, limit="file_size")
    return res


def _staged_files(upper: str):
    """(relative path, size) of every non-directory in the upper dir; iterative, so a
    tree of any depth is fine (os.walk recurses)."""
    stack = [("", upper)]
    while stack:
        rel, path = stack.pop()
        try:
            entries = list(os.scandir(path))
        except OSError:
            continue
        for e in entries:
            r = f"{rel}/{e.name}" if rel else e.name
            try:
                if e.is_dir(follow_symlinks=False):
                    stack.append((r, e.path))
                else:
                    yield r, e.stat(follow_symlinks=False).st_size
            except OSError:
                continue


def _killed(res) -> str | None:
    """Why the run was killed before it ended on its own (its writes may be cut), or
    None. Such a run's writes are held, never applied (RF627)."""
    if res.limit:
        return f"its {res.limit} limit was hit"
    if res.timed_out:
        return "it timed out"
    if res.signal is not None:
        return f"ringfence received signal {res.signal}"
    return None


def _limit_note(kind: str, limits, ended: bool = False):
    from ringfence.compiler.execute import warn
    from ringfence.compiler.spec import Note

    value = {"pids": limits.pids, "memory": f"{limits.memory_mb} MiB",
             "stage": f"{getattr(limits, 'stage_mb', None)} MiB",
             "file_size": f"{limits.file_size_mb} MiB"}.get(kind, "?")
    if kind == "file_size":
        note = Note("RF628", f"a write reached the file-size limit ({value}, "
                             "limits.file_size_mb): the file is cut; the run ends as a limit")
    else:
        note = Note("RF624", f"the run hit its {kind} limit ({value}); " + ("seen as it ended "
                    "(an OOM kill, a process's peak)" if ended else "the whole sandbox was killed"))
    warn(note)
    return note


def _stage_cut(stage, min_free=None):
    """The stage filled its filesystem: a write was cut (ENOSPC). Nothing of the run is
    applied (a truncated file must never replace a good one). The stage is removed to
    give the space back, so the run's record can be written at all (a full state dir
    cannot take the ledger row); the note names what was discarded. A `limit` (RF623)."""
    from ringfence.staging import mount as staging
    from ringfence.compiler.execute import warn
    from ringfence.compiler.spec import Note

    low = min_free is not None and min_free < staging.FULL_MARGIN
    if not (low or staging.exhausted(stage)):
        return None
    where = os.path.dirname(os.path.dirname(stage.path))
    written = [rel for rel, _ in _staged_files(stage.upper)]
    stage.remove()
    shown = ", ".join(sorted(written)[:10]) + (f" and {len(written) - 10} more"
                                                if len(written) > 10 else "")
    note = Note("RF623", f"the stage ran out of space ({where} is full): a write was cut, "
                         "so none of the run's writes were applied to the workspace "
                         f"(discarded: {shown or 'nothing'})")
    warn(note)
    return note


def run(argv: Sequence[str] | None = None, *, command: str | None = None, profile="build",
        workspace: str | None = None, timeout: float | None = None,
        env: Mapping[str, str] | None = None, stdin: bytes | int | IO | None = None,
        capture: bool = False, grants: frozenset = frozenset(),
        out: IO[bytes] | None = None, err: IO[bytes] | None = None,
        verdict=None, cwd: str | None = None, approved: bool = False,
        on_ran=None) -> RunResult:
    """Run ``argv`` (or a bash ``command`` string) under ``profile``.

    ``profile``: a built-in name, a TOML path, a Profile, or None for the
    active profile (SPEC §3 precedence).
    """
    p = prepare(argv, command=command, profile=profile, workspace=workspace, env=env,
                grants=grants, verdict=verdict, cwd=cwd, approved=approved)
    if p.decision == "deny":
        return RunResult(EXIT_DENIED, "denied", p.profile.name, "deny", p.reasons, p.verdict)
    if p.decision == "ask":
        # Issue 5's approvals layer hooks in here: it calls prepare(), records a
        # pending approval for an "ask", and execute_prepared() once approved.
        return RunResult(EXIT_WAITING, "waiting_for_approval", p.profile.name, "ask",
                         p.reasons, p.verdict)
    return execute_prepared(p, timeout=timeout, stdin=stdin, capture=capture, out=out, err=err,
                            on_ran=on_ran)


def describe_refusal(result: RunResult) -> str:
    """The message the CLI prints for a 77/75 result."""
    reasons = "; ".join(result.reasons) or "no reason given"
    if result.status == "denied":
        return f"denied by profile '{result.profile}': {reasons}"
    return (f"needs approval under profile '{result.profile}': {reasons} "
            "(nothing was run; approvals: see 'ringfence approvals list')")

