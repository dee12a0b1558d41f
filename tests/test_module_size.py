"""No module of the package over 400 lines (issue 14, "keep the layers honest").

A module that grows past it is split by responsibility (see CONTRIBUTING's key
files), not cut in half. Tests are exempt. The governor, the request-to-outcome
state machine, stays small enough to read in one sitting.
"""

from __future__ import annotations

import os

from tests.conftest import ROOT

LIMIT = 400
PACKAGES = ("rfcore", "classifier", "profiles", "compiler", "ringfence")


def package_modules() -> dict[str, int]:
    sizes = {}
    for top in PACKAGES:
        # os.walk does not follow symlinks: ringfence/<name> -> ../<name> counts once.
        for dirpath, dirnames, filenames in os.walk(ROOT / top):
            dirnames[:] = [d for d in dirnames if d != "__pycache__"]
            for name in filenames:
                if name.endswith(".py"):
                    path = os.path.join(dirpath, name)
                    with open(path, encoding="utf-8") as f:
                        sizes[os.path.relpath(path, ROOT)] = sum(1 for _ in f)
    return sizes


def test_the_walk_sees_every_package():
    sizes = package_modules()
    for top in PACKAGES:
        assert f"{top}/__init__.py" in sizes
    assert "ringfence/session/governor.py" in sizes and "classifier/engine.py" in sizes
    assert not any(p.startswith("ringfence/classifier/") for p in sizes)   # no double count


def test_no_module_over_the_limit():
    over = {p: n for p, n in package_modules().items() if n > LIMIT}
    assert over == {}, f"split these by responsibility (limit {LIMIT} lines): {over}"


def test_the_governor_is_a_small_state_machine():
    assert package_modules()["ringfence/session/governor.py"] <= 260
