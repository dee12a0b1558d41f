"""Every numeric profile field has a documented range (issue 23 item 2): lint and load
refuse a value outside it with RF550, and no value is ever an internal error."""

from __future__ import annotations

import math
import subprocess
import sys

import pytest

from ringfence.profiles.lint import lint
from ringfence.profiles.load import load_profile
from ringfence.profiles.model import Limits, Profile
from ringfence.profiles.ranges import LIMIT_RANGES
from ringfence.rfcore.errors import EXIT_UNSAFE, ProfileError

BAD = ["inf", "-inf", "nan", "1e400", "99999999999999999999", "-1", "0", "-0.0",
       "18446744073709551616", "9223372036854775808"]


def edges(name):
    low, high, _, whole = LIMIT_RANGES[name]
    if whole:
        return [str(low), str(high)], [str(low - 1), str(high + 1), f"{low}.5"]
    return ["0.001", str(high)], [str(high) + ".5"]


def profile_file(tmp_path, name, value):
    p = tmp_path / "profile.toml"
    p.write_text(f'extends = "build"\n[limits]\n{name} = {value}\n', encoding="utf-8")
    return p


@pytest.mark.parametrize("name", sorted(LIMIT_RANGES))
@pytest.mark.parametrize("value", BAD)
def test_out_of_range_is_rf550_in_lint_and_load(tmp_path, name, value):
    p = profile_file(tmp_path, name, value)
    diags = lint(str(p))
    # A float for a whole-number field is the wrong type (RF502); every other value
    # here is a number out of range (RF550).
    wrong_type = LIMIT_RANGES[name][3] and any(c in value for c in ".ein")
    code = "RF502" if wrong_type else "RF550"
    assert [(d.code, d.key, d.line) for d in diags] == [(code, f"limits.{name}", 3)], diags
    with pytest.raises(ProfileError) as info:
        load_profile(str(p))
    assert info.value.exit_code == EXIT_UNSAFE
    assert f"limits.{name}" in info.value.message
    assert wrong_type or "(RF550)" in info.value.message
    assert len(info.value.message) < 200          # a 20-digit value is shortened, not pasted


@pytest.mark.parametrize("name", sorted(LIMIT_RANGES))
def test_the_edges_of_each_range(tmp_path, name):
    good, bad = edges(name)
    for value in good:
        assert lint(str(profile_file(tmp_path, name, value))) == [], value
        load_profile(str(profile_file(tmp_path, name, value)))
    for value in bad:
        codes = [d.code for d in lint(str(profile_file(tmp_path, name, value)))]
        assert codes in (["RF550"], ["RF502"]), (value, codes)   # 8.5 pids: wrong type


def test_a_profile_built_in_code_is_held_to_the_same_ranges(tmp_path):
    from ringfence.compiler.compile import compile_profile
    from tests.compiler.fakehost import WS, fake_host

    for limits in (Limits(timeout=math.inf), Limits(memory_mb=10**20), Limits(pids=-1),
                   Limits(file_size_mb=2**70), Limits(timeout=float("nan"))):
        prof = Profile(name="p", limits=limits)
        with pytest.raises(ProfileError) as info:
            compile_profile(prof, WS, fake_host(prof))
        assert "RF550" in info.value.message


def test_run_refuses_before_anything_starts(tmp_path):
    p = profile_file(tmp_path, "timeout", "1e400")
    r = subprocess.run([sys.executable, "-m", "ringfence", "run", "-p", str(p), "--", "true"],
                       capture_output=True, text=True, cwd=tmp_path, timeout=60,
                       env={"PATH": "/usr/bin:/bin", "RINGFENCE_HOME": str(tmp_path / "st")})
    assert r.returncode == EXIT_UNSAFE
    lines = r.stderr.strip().splitlines()
    assert "Traceback" not in r.stderr and "RF550" in lines[0], r.stderr
