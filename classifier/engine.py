"""classify(): command string -> parse -> analysis -> rules -> Verdict.

Fail closed: if the parse itself cannot be trusted (RF001/RF002/RF005-RF010)
the verdict is one_time with only those findings; nothing derived from an
untrusted tree is reported as a capability.
"""

from __future__ import annotations

from rfcore.rules import REGISTRY

from .analysis import analyze
from .parse import parse
from .rules import Context
from .rules import capability, decoration, onetime
from .rules import parse as parse_rules
from .verdict import Decoration, Finding, Verdict

# Families in the order they must run: decoration marks what it strips before
# the one-time family looks at redirects and the capability family builds keys.
_FINDING_FAMILIES = (parse_rules.CHECKS, onetime.CHECKS, capability.CHECKS)
_FORCING = ("RF0", "RF1")


def _message(code: str, text: str) -> str:
    return text or REGISTRY[code].summary


def classify(command: str) -> Verdict:
    """Classify one ``bash -c`` string. Never raises for any ``str``."""
    if not isinstance(command, str):
        raise TypeError(f"classify() needs a str, not {type(command).__name__}")
    script = parse(command)
    if script.problems:
        findings = tuple(dict.fromkeys(
            Finding(p.code, p.message, p.span) for p in script.problems))
        return Verdict(command, "one_time", findings=findings)
    ctx = Context(script, analyze(script))
    decorations = [Decoration(code, ctx.text(span), span)
                   for code, check, gate in decoration.CHECKS if gate(ctx)
                   for span, _ in check(ctx)]
    findings: dict[tuple, Finding] = {}
    for family in _FINDING_FAMILIES:
        for code, check, gate in family:
            if not gate(ctx):
                continue           # the check wants nothing this command has
            for span, message in check(ctx):
                findings.setdefault((code, span), Finding(code, _message(code, message), span))
    ordered = sorted(findings.values(), key=lambda f: (f.span[0], f.code))
    caps = tuple(capability.capabilities(ctx))
    decorations.sort(key=lambda d: (d.span[0], d.code))
    if any(f.code.startswith(_FORCING) for f in ordered):
        cls = "one_time"
    elif caps:
        cls = "capability"
    else:
        cls = "helper"
    return Verdict(command, cls, caps, tuple(decorations), tuple(ordered))
