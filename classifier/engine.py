"""classify(): command string -> parse -> analysis -> rules -> Verdict.

Fail closed: if the parse itself cannot be trusted (RF001/RF002/RF005-RF010)
the verdict is one_time with only those findings; nothing derived from an
untrusted tree is reported as a capability.
"""

from __future__ import annotations

from ringfence.rfcore.rules import REGISTRY

from .analysis import analyze
from .parse import parse
from .rules import Context, triggers
from .rules import capability, decoration, effects, implied, launchers, onetime, values
from ringfence.classifier.rules import failclosed as parse_rules
from .verdict import Decoration, Finding, Verdict

# Checks in the order they must run: decoration marks what it strips before
# the one-time family looks at redirects and the capability family builds keys.
_DECORATION = decoration.CHECKS
_FINDINGS = (parse_rules.CHECKS + onetime.CHECKS + values.CHECKS + effects.CHECKS
             + launchers.CHECKS + implied.CHECKS
             + capability.CHECKS)
_FORCING = ("RF0", "RF1")


def _index(checks) -> dict[str, list[tuple[int, str, object]]]:
    """trigger key -> [(order, code, check)]: built once at import."""
    index: dict[str, list[tuple[int, str, object]]] = {}
    for order, (code, check, gate) in enumerate(checks):
        for key in gate:
            index.setdefault(key, []).append((order, code, check))
    return index


_DECORATION_INDEX = _index(_DECORATION)
_FINDINGS_INDEX = _index(_FINDINGS)


def _selected(index, present: set[str]) -> list[tuple[int, str, object]]:
    chosen: dict[int, tuple[int, str, object]] = {}
    for key in present:
        for entry in index.get(key, ()):
            chosen[entry[0]] = entry
    return [chosen[k] for k in sorted(chosen)]


_PLANS: dict[frozenset, tuple[list, list]] = {}


def _plan(present: frozenset) -> tuple[list, list]:
    """The checks to run for a set of triggers (memoised: sets repeat a lot)."""
    plan = _PLANS.get(present)
    if plan is None:
        if len(_PLANS) > 4096:
            _PLANS.clear()
        plan = _PLANS[present] = (_selected(_DECORATION_INDEX, present),
                                  _selected(_FINDINGS_INDEX, present))
    return plan


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
    deco_checks, finding_checks = _plan(frozenset(triggers(ctx)))
    decorations = [Decoration(code, ctx.text(span), span)
                   for _, code, check in deco_checks
                   for span, _ in check(ctx)]
    findings: dict[tuple, Finding] = {}
    for _, code, check in finding_checks:
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
