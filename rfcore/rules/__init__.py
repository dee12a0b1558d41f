"""The one rule registry.

Every finding, decoration, lint diagnostic and backend diagnostic has a stable
code from this registry. One family per file; each file exports ``RULES``, a
tuple of :class:`Rule`. The engine, ``ringfence rule CODE``, the README table
and the tests all read :data:`REGISTRY`, which loads a family's file the first
time one of its codes is looked up (see ``_MODULES``).

A code is retired (``status="retired"``), never reused or deleted.
"""

from __future__ import annotations

from collections.abc import Mapping

from ringfence.rfcore.records import record

Status = str   # "active" | "retired" (a str alias: no typing import on the hook path)

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


# The modules of each family, in registry order. A module holds only codes of
# its family (checked when it is loaded), so looking up one code loads only
# its family's modules: the classifier's hot path needs a finding's summary,
# never the lint and backend rules.
_MODULES = (("RF0", "failclosed"), ("RF1", "onetime"), ("RF1", "effects"), ("RF2", "capability"),
            ("RF3", "decoration"), ("RF5", "lint"), ("RF6", "backend"),
            ("RF6", "staging"), ("RF6", "running"))


class _Registry(Mapping):
    """Read-only ``code -> Rule``, sorted by code, loading each family on first use.

    ``REGISTRY[code]``, ``code in REGISTRY`` and ``REGISTRY.get(code)`` load one
    family; iterating (``items()``, ``values()``, ``list()``, ``len``) loads all.
    """

    def __init__(self) -> None:
        from _thread import RLock     # not `threading`: this is on the hook's path

        self._rules: dict[str, Rule] = {}
        self._loaded: set[str] = set()
        self._all: dict[str, Rule] | None = None
        self._lock = RLock()          # classify() is used from threads

    def _load_family(self, family: str) -> None:
        if family in self._loaded:
            return
        import importlib

        with self._lock:
            if family in self._loaded:      # another thread loaded it meanwhile
                return
            found: dict[str, Rule] = {}
            for fam, name in _MODULES:
                if fam != family:
                    continue
                module = importlib.import_module(f"{__name__}.{name}")
                for rule in module.RULES:
                    if rule.code[:3] != family:
                        raise AssertionError(f"rule {rule.code} in rules/{name}.py is "
                                             f"outside its family {family}")
                    if rule.code in self._rules or rule.code in found:
                        raise AssertionError(f"duplicate rule code {rule.code}")
                    found[rule.code] = rule
            self._rules.update(found)       # published whole, then marked loaded
            self._loaded.add(family)

    def _everything(self) -> dict[str, Rule]:
        if self._all is None:
            for family in FAMILIES:
                self._load_family(family)
            with self._lock:
                if self._all is None:
                    self._all = dict(sorted(self._rules.items()))
        return self._all

    def __getitem__(self, code: str) -> Rule:
        if isinstance(code, str) and code[:3] in FAMILIES:
            self._load_family(code[:3])
        return self._rules[code]

    def __iter__(self):
        return iter(self._everything())

    def __len__(self) -> int:
        return len(self._everything())

    def __repr__(self) -> str:
        return f"REGISTRY({len(self)} rules)"


REGISTRY: Mapping[str, Rule] = _Registry()


def get(code: str) -> Rule:
    """Return the rule for ``code`` (case-insensitive); KeyError if unknown."""
    return REGISTRY[code.upper()]


def summary(code: str) -> str:
    return REGISTRY[code].summary
