"""A note: a non-fatal finding (RF6xx) shown to the user and stored in the ledger.

Here in the core, not in ``compiler/spec.py`` (which re-exports it), because the
workspace room (``ringfence/staging/``) records notes too and sits below the compiler.
"""

from __future__ import annotations

from ringfence.rfcore.records import record


@record
class Note:
    """A compile-time finding (RF6xx) shown to the user and stored in the ledger."""
    code: str
    message: str


__all__ = ["Note"]
