"""RF5xx: profile lint diagnostics."""

from . import Rule

RULES: tuple[Rule, ...] = ()
