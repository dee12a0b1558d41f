"""The verdicts of the last texts this process classified.

The classifier is a pure function of the text, and a verdict is frozen, so a
process may answer a text it classified before from here: the governor (a
Session and the MCP server repeat commands; agents do), and the gate when it
looks at the same inline code (``bash -c CODE``) for the governor and again for
the runner. Lock-protected (a Session classifies in several threads) with
``_thread``, not ``threading``: the hook's path stays without it.
"""

from __future__ import annotations

import _thread
from typing import Any, Callable

RECENT = 256
_VERDICTS: dict[str, Any] = {}          # text -> verdict, oldest first
_LOCK = _thread.allocate_lock()


def recent(text: str, classify: Callable[[str], Any] | None = None):
    """The verdict of ``text``: remembered, or ``classify(text)`` (the classifier's
    own when None), remembered as the newest of the last RECENT."""
    with _LOCK:
        verdict = _VERDICTS.pop(text, None)
        if verdict is not None:
            _VERDICTS[text] = verdict       # now the newest
            return verdict
    if classify is None:
        from ringfence.classifier import classify
    verdict = classify(text)
    with _LOCK:
        _VERDICTS[text] = verdict
        while len(_VERDICTS) > RECENT:
            del _VERDICTS[next(iter(_VERDICTS))]
    return verdict
