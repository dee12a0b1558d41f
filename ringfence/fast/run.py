"""Fast path for `ringfence run` (stdlib + tree-sitter only)."""

from __future__ import annotations

from rfcore.errors import UsageError


def main(argv: list[str]) -> int:
    raise UsageError("'ringfence run' is not implemented yet")
