"""RF0xx: the parse could not be trusted; fail closed."""

from . import Rule

RULES: tuple[Rule, ...] = ()
