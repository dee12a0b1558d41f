"""A NUL byte in any path or value of a profile (review i23b) is a clear RF502 error in
lint and load, and `run` refuses with 125: never `internal error: ValueError`."""

from __future__ import annotations

import subprocess
import sys

import pytest

from ringfence.profiles.lint import lint
from ringfence.profiles.load import load_profile
from ringfence.rfcore.errors import EXIT_UNSAFE, ProfileError

CASES = [
    ("filesystem", 'read_deny = ["/tmp/a\\u0000b"]'),
    ("filesystem", 'writable = ["/tmp/x\\u0000"]'),
    ("filesystem", 'write_protect = ["{workspace}/.x\\u0000"]'),
    ("filesystem", 'read_allow = ["~/.a\\u0000"]'),
    ("tooling", 'dir = "/tmp/t\\u0000"'),
    ("env.set", 'A = "x\\u0000"'),
    ("commands", 'allow = ["ls\\u0000"]'),
]


@pytest.mark.parametrize("table,line", CASES)
def test_a_nul_byte_is_rf502_in_lint_load_and_run(tmp_path, table, line):
    p = tmp_path / "p.toml"
    p.write_text(f'extends = "strict"\n[{table}]\n{line}\n', encoding="utf-8")
    diags = lint(str(p))
    assert any(getattr(d, "code", None) == "RF502" or "RF502" in str(d) for d in diags), diags
    assert "NUL byte" in " ".join(str(d) for d in diags)
    with pytest.raises(ProfileError):
        load_profile(str(p))
    ws = tmp_path / "ws"
    ws.mkdir()
    r = subprocess.run([sys.executable, "-m", "ringfence", "run", "-p", str(p), "-w", str(ws),
                        "--", "true"], capture_output=True, text=True, timeout=60,
                       env={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path),
                            "RINGFENCE_HOME": str(tmp_path / "state")})
    assert r.returncode == EXIT_UNSAFE, r.stderr
    assert "NUL byte" in r.stderr and "internal error" not in r.stderr, r.stderr
