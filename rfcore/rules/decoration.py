"""RF3xx: harmless decoration that is stripped."""

from . import Rule

RULES: tuple[Rule, ...] = ()
