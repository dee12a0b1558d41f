"""Fast path for `ringfence check` (stdlib + tree-sitter only)."""

from __future__ import annotations

from rfcore.errors import UsageError


def main(argv: list[str]) -> int:
    raise UsageError("'ringfence check' is not implemented yet")
