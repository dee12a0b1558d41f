"""One validator for every numeric command-line option (stdlib only).

`run --timeout`, `check --jobs`, `ledger list --limit`, `ledger prune --keep`: each
goes through :func:`number`, so every one refuses the same things with the same
kind of message: not a number, not finite (``nan``, ``inf``, ``1e400``), not whole
where a count is wanted, or outside the option's range. The caller picks the
exception class, and so the exit status (2 for most commands; `run` keeps SPEC §4's
125 for bad arguments).
"""

from __future__ import annotations

import math
import re

from ringfence.rfcore.errors import EXIT_USAGE, UsageError

_WHOLE = re.compile(r"\+?[0-9]{1,18}")          # 18 digits: never near an int64 overflow
_DECIMAL = re.compile(r"\+?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]{1,3})?")


class NumberUsageError(UsageError):
    """A bad numeric option to a non-run command: exit 2."""

    exit_code = EXIT_USAGE


def _n(x) -> str:
    return str(int(x)) if float(x).is_integer() else f"{x:g}"


def _span(low, high, unit: str) -> str:
    if high is None:
        return f"{unit} of at least {_n(low)}"
    return f"{unit} from {_n(low)} to {_n(high)}"


def number(text, *, option: str, whole: bool = True, low: float = 0, high: float | None = None,
           above_low: bool = False, unit: str | None = None, example=None,
           error: type[UsageError] = NumberUsageError):
    """``text`` as an int (``whole``) or a finite float in ``[low, high]``; ``error`` if not.

    ``above_low`` makes the lower bound exclusive (a timeout of 0 s is not a timeout).
    """
    raw = str(text).strip()
    unit = unit or ("a whole number" if whole else "a number")
    want = (f"a number of {unit} greater than {_n(low)}"
            + (f" and at most {_n(high)}" if high is not None else "")) if above_low \
        else _span(low, high, unit if not whole else "a whole number")
    bad = error(f"{option} takes {want}, not {str(text)!r}",
                hint=f"for example {option} {example if example is not None else int(low) + 1}")
    if whole:
        if not _WHOLE.fullmatch(raw):
            raise bad
        value = int(raw)
    else:
        if not _DECIMAL.fullmatch(raw):   # refuses nan, inf, hex, '1_0', ''
            raise bad
        value = float(raw)
        if not math.isfinite(value):      # 1e400 overflows to inf
            raise bad
    if value < low or (above_low and value == low) or (high is not None and value > high):
        raise bad
    return value
