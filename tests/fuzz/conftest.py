"""Hypothesis settings profiles for the fuzz run (issue 6).

"ci" (default): derandomized with no example database, so every run of the
normal suite draws the same examples and a failure reproduces exactly; about a
minute in total on a 2-core machine. "long" (`make fuzz`, RINGFENCE_FUZZ=long):
random, many more examples. The profiles are registered, not loaded: the tests
here apply them explicitly so other packages' hypothesis tests keep their own.
"""

from __future__ import annotations

import os

import pytest
from hypothesis import HealthCheck, settings

settings.register_profile("ci", max_examples=400, derandomize=True, database=None,
                          deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("long", max_examples=5000, derandomize=False, database=None,
                          deadline=None, suppress_health_check=[HealthCheck.too_slow])
PROFILE = "long" if os.environ.get("RINGFENCE_FUZZ") == "long" else "ci"


# classify() calls over 50 ms in the test loop: counted and printed, never
# asserted (speed is measured in bench/, not in timed tests).
SLOW = {"calls": 0, "slow": 0, "worst_ms": 0.0}


@pytest.fixture(scope="session")
def slow_counter():
    return SLOW


def pytest_terminal_summary(terminalreporter):
    if SLOW["calls"]:
        terminalreporter.write_line(
            f"fuzz ({PROFILE}): {SLOW['calls']} classify() calls, {SLOW['slow']} over 50 ms, "
            f"slowest {SLOW['worst_ms']:.1f} ms")
