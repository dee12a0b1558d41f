"""Regular expressions compiled on first use.

Every ``ringfence run``, ``check`` and ``hook`` is a fresh interpreter, so a
module-level ``re.compile`` is paid by every command, whether or not that
command's text ever reaches the pattern (arithmetic tokens, awk literals, ssh
options...). ``lazy(pattern, flags)`` stands in for ``re.compile``: it compiles
on the first attribute access (``.match``, ``.search``, ``.pattern``...) and then
behaves as the compiled pattern.
"""

from __future__ import annotations

import re

__all__ = ["lazy"]


class _Lazy:
    """The deferred pattern. ``__getattr__`` runs only for a name not yet found:
    on first use it compiles, then keeps the compiled pattern's attribute (its
    bound ``match``, ``search``...) on the instance, so later calls are plain
    attribute lookups."""

    def __init__(self, source, flags: int = 0) -> None:
        self._source = source
        self._flags = flags
        self._compiled = None

    def compiled(self) -> re.Pattern:
        if self._compiled is None:
            self._compiled = re.compile(self._source, self._flags)
        return self._compiled

    def __getattr__(self, name: str):
        if name.startswith("__"):
            raise AttributeError(name)
        value = getattr(self.compiled(), name)
        self.__dict__[name] = value
        return value

    def __repr__(self) -> str:
        return f"lazy({self._source!r})"


def lazy(source, flags: int = 0) -> _Lazy:
    """``re.compile(source, flags)``, deferred until the pattern is first used."""
    return _Lazy(source, flags)
