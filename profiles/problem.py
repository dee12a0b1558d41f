"""One problem found in a profile: the small record every loading layer shares.

Its own module so the per-command hot paths (hook, run) can build and pass
problems without importing the schema table (:mod:`.schema` re-exports it).
"""

from __future__ import annotations

from ringfence.rfcore.records import record


@record
class Problem:
    code: str
    message: str
    key: str | None = None
    hint: str | None = None
    column: int | None = None   # 1-based, into the offending value (patterns)
