"""The documented range of every numeric profile field (docs/profiles.md, "Limits").

Light on purpose (no imports): the schema checks a file against it, and the
compiler checks a programmatic ``Profile`` against it on the ``run`` hot path, so
no value (``inf``, ``nan``, ``1e400``, a 20-digit integer, a negative) reaches a
system call that would overflow (``time_t``, ``rlim_t``) or mean nothing.
"""

from __future__ import annotations

# name -> (low, high, unit, whole). ``low`` is inclusive for whole numbers and
# exclusive for the timeout (0 s is not a timeout).
LIMIT_RANGES = {
    "timeout": (0, 7 * 86400, "seconds", False),         # a week, as `run --timeout`
    "memory_mb": (16, 4 * 1024 * 1024, "MiB", True),      # 4 TiB: fits rlim_t in bytes
    "pids": (8, 4 * 1024 * 1024, "processes", True),      # the kernel's pid_max ceiling
    "file_size_mb": (1, 8 * 1024 * 1024, "MiB", True),    # 8 TiB
    "stage_mb": (1, 16 * 1024 * 1024, "MiB", True),       # 16 TiB
}


def _shown(v) -> str:
    text = repr(v)
    return text if len(text) <= 24 else f"{text[:12]}...({len(text)} digits)"


def out_of_range(name: str, v) -> tuple[bool, str] | None:
    """None when ``v`` is a valid ``limits.<name>``; else (wrong_type, message)."""
    low, high, unit, whole = LIMIT_RANGES[name]
    kind = "a whole number" if whole else "a number"
    if isinstance(v, bool) or not isinstance(v, (int, float)) or (whole and not isinstance(v, int)):
        tname = {bool: "a boolean", float: "a number", str: "a string"}.get(type(v),
                                                                          type(v).__name__)
        return True, f"must be {kind} of {unit}, not {tname}"
    if (v >= low if whole else v > low) and v <= high:       # nan fails both
        return None
    lo = f"at least {low:d}" if whole else f"more than {low:d}"
    return False, f"must be {lo} and at most {high:d} {unit}, not {_shown(v)}"
