"""ringfence: preflight-check agent shell commands, run them in real sandboxes,
and govern what crosses the boundary.

The public API is imported lazily so that per-command hot paths (``hook``,
``check --json``, ``run``) pay only for what they use::

    import ringfence
    v = ringfence.classify("longbridge news FIG.US 2>&1 | head -30")
    v.verdict, v.keys          # ('capability', ('longbridge',))
"""

from __future__ import annotations

__version__ = "0.1.0"

_API = {
    "classify": "ringfence.api",
    "load_profile": "ringfence.api",
    "compile_profile": "ringfence.api",
    "run": "ringfence.api",
    "Session": "ringfence.session.api",
    "Result": "ringfence.session.result",
    "RingfenceError": "ringfence.rfcore.errors",
}


def __getattr__(name: str):
    module = _API.get(name)
    if module is None:
        raise AttributeError(f"module 'ringfence' has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(module), name)


__all__ = sorted(_API)
