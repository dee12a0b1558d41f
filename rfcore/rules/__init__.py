"""The one rule registry.

Every finding, decoration, lint diagnostic and backend diagnostic has a stable
code from this registry. One family per file; each file exports ``RULES``, a
tuple of :class:`Rule`. The engine, ``ringfence rule CODE``, the README table
and the tests all read :data:`REGISTRY`.

A code is retired (``status="retired"``), never reused or deleted.
"""

from __future__ import annotations

from ringfence.rfcore.records import record
from typing import Literal

Status = Literal["active", "retired"]

FAMILIES = {
    "RF0": "parse / fail-closed",
    "RF1": "forced one-time",
    "RF2": "capability mapping",
    "RF3": "decoration",
    "RF5": "profile lint",
    "RF6": "compile / backend",
}


@record
class Rule:
    code: str                 # "RF101"
    name: str                 # "command-substitution" (kebab-case, stable)
    summary: str              # one line, used as the default finding message
    explanation: str          # one paragraph: what it does and why it matters
    bad: str                  # an example that triggers the rule (tests execute it)
    good: str                 # a close example that does not (tests execute it)
    status: Status = "active"
    known_problems: str = ""

    @property
    def family(self) -> str:
        return FAMILIES[self.code[:3]]


def _load() -> dict[str, Rule]:
    from . import backend, capability, decoration, effects, lint, onetime, parse

    registry: dict[str, Rule] = {}
    for module in (parse, onetime, effects, capability, decoration, lint, backend):
        for rule in module.RULES:
            if rule.code in registry:
                raise AssertionError(f"duplicate rule code {rule.code}")
            if rule.code[:3] not in FAMILIES:
                raise AssertionError(f"rule {rule.code} is outside every family")
            registry[rule.code] = rule
    return dict(sorted(registry.items()))


REGISTRY: dict[str, Rule] = _load()


def get(code: str) -> Rule:
    """Return the rule for ``code`` (case-insensitive); KeyError if unknown."""
    return REGISTRY[code.upper()]


def summary(code: str) -> str:
    return REGISTRY[code].summary
