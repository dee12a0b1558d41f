"""What a ``ringfence.Session`` hands back: the ``Result`` of one request, and the
streams that capture a run's whole output for it (issue 24).

Output is kept whole up to ``OUTPUT_CAP`` bytes per stream. Past that the first
and the last half of the cap are kept, a marker says how much was cut between
them, and ``truncated`` is True: a runaway ``yes`` cannot fill the caller's
memory, and both the start and the end (where test runners print their summary)
survive. The ledger keeps 4 KiB tails of every run either way.
"""

from __future__ import annotations

from dataclasses import dataclass, field

OUTPUT_CAP = 1024 * 1024          # bytes kept per stream (stdout, stderr)

# The ledger's state names (SPEC §5). waiting_for_approval is a resting state: it is
# never reported as stopped, failed or aborted.
STATES = ("completed", "failed", "waiting_for_approval", "denied", "aborted",
          "sandbox_error", "timeout", "limit", "running")


class Capture:
    """A binary sink (``write``/``flush``) keeping head and tail of what it gets."""

    def __init__(self, name: str, cap: int = OUTPUT_CAP, on_output=None) -> None:
        self.name, self.half = name, max(1, cap // 2)
        self.head, self.tail = bytearray(), bytearray()
        self.cut = 0
        self.on_output = on_output
        self.callback_error: str | None = None

    def write(self, chunk) -> int:
        chunk = bytes(chunk)
        room = self.half - len(self.head)
        if room > 0:
            self.head += chunk[:room]
            chunk_rest = chunk[room:]
        else:
            chunk_rest = chunk
        if chunk_rest:
            self.tail += chunk_rest
            over = len(self.tail) - self.half
            if over > 0:
                del self.tail[:over]
                self.cut += over
        if self.on_output is not None:
            try:
                self.on_output(self.name, chunk)
            except Exception as exc:      # the caller's bug must not stop the command
                self.on_output = None
                self.callback_error = f"on_output raised {type(exc).__name__}: {exc}"
        return len(chunk)

    def flush(self) -> None:
        pass

    @property
    def truncated(self) -> bool:
        return self.cut > 0

    def value(self) -> bytes:
        if not self.cut:
            return bytes(self.head + self.tail)
        mark = f"\n[ringfence: {self.cut} bytes of {self.name} cut here (cap " \
               f"{2 * self.half} bytes)]\n".encode()
        return bytes(self.head) + mark + bytes(self.tail)


class Notes:
    """The Streams the governor writes to, with ringfence's own lines kept apart
    from the command's output (``say`` never lands in the command's stderr)."""

    def __init__(self, cap: int = OUTPUT_CAP, on_output=None) -> None:
        self.out = Capture("stdout", cap, on_output)
        self.err = Capture("stderr", cap, on_output)
        self.lines: list[str] = []

    def say(self, text: str) -> None:
        self.lines.extend(text.rstrip("\n").splitlines())


@dataclass
class Result:
    state: str
    exit_code: int
    stdout: str = ""
    stderr: str = ""
    run_id: str | None = None
    approval_id: str | None = None
    reasons: tuple[str, ...] = ()
    changes: dict | None = None
    held: tuple[dict, ...] = ()
    truncated: bool = False
    command: str = ""
    where: str = "sandbox"            # host | sandbox | stage (held changes)
    profile: str | None = None
    notes: tuple[str, ...] = field(default=())   # ringfence's own lines
    spare: bool = False               # it ran in the Session's spare sandbox (docs/api.md)

    @property
    def waiting(self) -> bool:
        return self.state == "waiting_for_approval"

    def to_json(self) -> dict:
        return {"state": self.state, "exit_code": self.exit_code, "stdout": self.stdout,
                "stderr": self.stderr, "run_id": self.run_id,
                "approval_id": self.approval_id, "reasons": list(self.reasons),
                "changes": self.changes, "held": list(self.held),
                "truncated": self.truncated, "command": self.command,
                "where": self.where, "profile": self.profile, "notes": list(self.notes),
                "spare": self.spare}


def text(data: bytes) -> str:
    return data.decode("utf-8", "replace")
