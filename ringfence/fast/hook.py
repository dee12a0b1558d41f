"""Fast path for `ringfence hook` (stdlib + tree-sitter only)."""

from __future__ import annotations

from rfcore.errors import UsageError


def main(argv: list[str]) -> int:
    raise UsageError("'ringfence hook' is not implemented yet")
