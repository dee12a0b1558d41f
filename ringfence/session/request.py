"""The records the governor's states hand each other: a request, its outcome, the
stages it drives (injectable, so the flow is testable alone) and the output streams.

Only stdlib + our packages: this sits on the ``ringfence run`` hot path.
"""

from __future__ import annotations

import shlex
import sys
from ringfence.rfcore.records import field, record
from ringfence.session.recent import recent
from typing import Any, BinaryIO, Callable


@record
class Request:
    profile: Any                         # profiles.model.Profile
    command: str | None = None           # a bash -c string ...
    argv: tuple[str, ...] | None = None  # ... or an argv
    workspace: str = "."
    cwd: str | None = None
    host: bool = False
    session: str = ""
    timeout: float | None = None
    # False: no person at a terminal (`run --no-stdin`, the hook's --wrap): the
    # command reads /dev/null, never the terminal ringfence happens to have.
    interactive: bool = True

    @property
    def stdin(self):
        import subprocess

        return None if self.interactive else subprocess.DEVNULL
    consent: str | None = None           # a Claude Code hook consent token (one use)

    @property
    def text(self) -> str:
        """The command as classified: argv is shell-quoted so bash reads it back exactly."""
        return self.command if self.command is not None else shlex.join(self.argv or ())


@record(frozen=False)
class Outcome:
    run_id: str
    state: str
    exit_code: int
    approval_id: str | None = None
    reasons: tuple[str, ...] = ()
    escalated_run_id: str | None = None

    def to_json(self) -> dict:
        return {"run_id": self.run_id, "state": self.state, "exit_code": self.exit_code,
                "approval_id": self.approval_id, "reasons": list(self.reasons),
                "escalated_run_id": self.escalated_run_id}


@record(frozen=False)
class Deps:
    """The stages the governor drives; injectable so the flow is testable alone."""

    classify: Callable[[str], Any]
    decide: Callable[..., Any]
    run_sandbox: Callable[..., Any]
    load_profile: Callable[..., Any]


def default_deps() -> Deps:
    from ringfence.classifier import classify
    from ringfence.profiles.load import load_profile
    from ringfence.session.gate import decide
    from ringfence.session.runner import run

    # Classify once per run: the runner re-checks the gate on the verdict the
    # governor already computed for the very same text (it re-classifies if the
    # text differs). The classifier is a pure function of the text, and a verdict
    # is frozen: a long-lived process (a Session, the MCP server) also reuses the
    # verdicts of the last texts it classified (session/recent.py; agents repeat
    # commands).
    verdicts: dict[str, Any] = {}

    def classify_once(text: str):
        verdict = verdicts.get(text)
        if verdict is None:
            verdict = verdicts[text] = recent(text, classify)
        return verdict

    def run_sandbox(argv=None, *, command=None, **kwargs):
        text = command if command is not None else shlex.join(argv or ())
        return run(argv, command=command, verdict=verdicts.get(text), **kwargs)

    run_sandbox.accepts_on_ran = True      # the real runner records before settling
    return Deps(classify_once, decide, run_sandbox, load_profile)


@record(frozen=False)
class Streams:
    out: BinaryIO = field(default_factory=lambda: sys.stdout.buffer)
    err: BinaryIO = field(default_factory=lambda: sys.stderr.buffer)

    def say(self, text: str) -> None:
        try:
            self.err.write((text.rstrip("\n") + "\n").encode("utf-8", "replace"))
            self.err.flush()
        except (OSError, ValueError):      # nobody reads it: what it says is recorded
            pass


def safe(text: str) -> str:
    """Neutralise control characters before untrusted text reaches a terminal."""
    return "".join(c if c.isprintable() or c == " " else f"\\x{ord(c):02x}" for c in text)


SHOWN_CHARS = 1000      # of a command, in messages and `approvals list` (issue 23)


def shorten(text: str, limit: int = SHOWN_CHARS, where: str = "ledger show RUN_ID") -> str:
    """A command as a person can read it: its start, and how much is left out (the
    ledger and ``--json`` keep it whole; the approval binds to all of it)."""
    if len(text) <= limit:
        return text
    return (f"{text[:limit]}… [{len(text) - limit} more characters, {len(text)} in all: "
            f"ringfence {where} shows it whole]")
