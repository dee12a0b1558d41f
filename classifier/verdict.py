"""The classifier's output records: the stable JSON contract of SPEC §2.

These records are what every downstream stage reads (gate, approvals, ledger,
renderers). Renderers for people and for JSON read the same objects.

Spans are ``[start, end)`` offsets in *characters* of ``command`` (tree-sitter
reports bytes; the front end converts).
"""

from __future__ import annotations

from ringfence.rfcore.records import field, record
from typing import Literal

VerdictClass = Literal["helper", "capability", "one_time"]
Span = tuple[int, int]


@record
class Capability:
    """One statically known program invocation, after unwrapping wrappers."""

    key: str                    # "longbridge", "git push", "./sed"
    program: str                # the program word after quote removal
    argv: tuple[str, ...]       # effective argv after quote removal, wrappers removed
    span: Span                  # the whole simple command in `command`
    effects: tuple[str, ...] = ()   # e.g. ("reads:input.txt",)

    def to_json(self) -> dict:
        return {"key": self.key, "program": self.program, "argv": list(self.argv),
                "span": list(self.span), "effects": list(self.effects)}


@record
class Decoration:
    code: str                   # RF3xx
    text: str                   # the source text that was stripped
    span: Span

    def to_json(self) -> dict:
        return {"code": self.code, "text": self.text, "span": list(self.span)}


@record
class Finding:
    code: str                   # RF0xx / RF1xx / RF2xx
    message: str
    span: Span

    def to_json(self) -> dict:
        return {"code": self.code, "message": self.message, "span": list(self.span)}


@record
class Verdict:
    command: str
    verdict: VerdictClass
    capabilities: tuple[Capability, ...] = ()
    decorations: tuple[Decoration, ...] = ()
    findings: tuple[Finding, ...] = ()
    parser: str = "tree-sitter-bash"

    @property
    def keys(self) -> tuple[str, ...]:
        """Distinct capability keys, in first-seen order."""
        return tuple(dict.fromkeys(c.key for c in self.capabilities))

    @property
    def codes(self) -> tuple[str, ...]:
        return tuple(f.code for f in self.findings)

    def to_json(self) -> dict:
        return {
            "command": self.command,
            "verdict": self.verdict,
            "capabilities": [c.to_json() for c in self.capabilities],
            "decorations": [d.to_json() for d in self.decorations],
            "findings": [f.to_json() for f in self.findings],
            "parser": self.parser,
        }
