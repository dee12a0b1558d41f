"""RF6xx: compile and backend diagnostics."""

from . import Rule

RULES: tuple[Rule, ...] = ()
