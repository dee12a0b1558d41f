"""RF2xx: how invocations map to capability keys."""

from . import Rule

RULES: tuple[Rule, ...] = ()
