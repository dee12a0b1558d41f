"""RF1xx: constructs that force one-time approval."""

from . import Rule

RULES: tuple[Rule, ...] = ()
