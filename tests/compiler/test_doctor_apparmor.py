"""`doctor` and AppArmor's userns restriction (issue 23 item 10): the safest fix first (a
profile for bwrap alone), `doctor --fix apparmor` writes and loads it and re-runs a trial
sandbox, and nothing ever touches the system-wide sysctl."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys

import pytest

from ringfence.cli import doctor_apparmor as aa
from ringfence.rfcore.records import replace

BWRAP = shutil.which("bwrap") or "/usr/bin/bwrap"


def test_the_profile_lets_bwrap_alone_create_user_namespaces():
    text = aa.profile_text(BWRAP)
    real = os.path.realpath(BWRAP)
    assert f"profile ringfence-bwrap {real} " in text
    main, child = text.split("profile ringfence-bwrap-child", 1)
    assert "allow userns," in main
    assert "allow px /** -> ringfence-bwrap-child," in main      # what bwrap runs
    assert "audit deny capability," in child and "audit deny userns," in child
    assert "allow userns" not in child
    assert text.count("{") == text.count("}")


def test_a_path_apparmor_cannot_name_is_refused():
    with pytest.raises(ValueError):
        aa.profile_text("/opt/my bwrap/bwrap")


def test_the_hint_names_the_profile_first_and_the_sysctl_last():
    hint = aa.fix_hint(BWRAP)
    assert hint.startswith("sudo ringfence doctor --fix apparmor")
    assert hint.index("--fix apparmor") < hint.index("sysctl")
    assert "Last resort" in hint


def _parser_version() -> tuple[int, ...] | None:
    parser = shutil.which("apparmor_parser")
    if not parser:
        return None
    out = subprocess.run([parser, "--version"], capture_output=True, text=True).stdout
    digits = [int(x) for x in out.split()[-1].split(".")[:2] if x.isdigit()] if out else []
    return tuple(digits) or (0,)


@pytest.mark.skipif(_parser_version() is None,
                    reason="apparmor_parser is not installed (apt-get install apparmor)")
def test_apparmor_parser_accepts_the_profile(tmp_path):
    if _parser_version() < (4,):
        pytest.skip("apparmor_parser < 4 does not know abi 4.0 or the userns rule "
                    "(Ubuntu 23.10+, where the restriction exists, ships 4.x)")
    p = tmp_path / "ringfence-bwrap"
    p.write_text(aa.profile_text(BWRAP))
    r = subprocess.run(["apparmor_parser", "-Q", "-K", "-T", str(p)], capture_output=True,
                       text=True)
    assert r.returncode == 0, r.stderr


@pytest.mark.skipif(os.geteuid() != 0, reason="--fix apparmor is for root")
@pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap is not installed")
def test_fix_writes_loads_and_retries_without_touching_the_sysctl(tmp_path):
    calls = tmp_path / "calls"
    parser = tmp_path / "apparmor_parser"
    parser.write_text(f"#!/bin/sh\necho \"$@\" >> {calls}\n")
    parser.chmod(0o755)
    sysctl = "/proc/sys/kernel/apparmor_restrict_unprivileged_userns"
    before = open(sysctl).read() if os.path.exists(sysctl) else None
    ok, said = aa.fix(BWRAP, directory=str(tmp_path), parser=str(parser))
    assert ok, said
    path = tmp_path / "ringfence-bwrap"
    assert path.read_text() == aa.profile_text(BWRAP)
    assert oct(path.stat().st_mode & 0o777) == "0o644"
    assert calls.read_text().split() == ["-r", str(path)]
    assert "trial sandbox now starts" in said
    assert (open(sysctl).read() if os.path.exists(sysctl) else None) == before


def test_fix_says_why_when_the_profile_cannot_be_loaded(tmp_path):
    if os.geteuid() != 0:
        ok, said = aa.fix(BWRAP, directory=str(tmp_path))
        assert not ok and "needs root" in said
        return
    parser = tmp_path / "apparmor_parser"
    parser.write_text("#!/bin/sh\necho 'AppArmor parser error: syntax' >&2\nexit 1\n")
    parser.chmod(0o755)
    ok, said = aa.fix(BWRAP, directory=str(tmp_path), parser=str(parser))
    assert not ok and "could not load it" in said and "syntax" in said


def test_doctor_on_a_restricted_host_names_the_profile_fix(monkeypatch):
    from ringfence.cli import run as cli_run
    from ringfence.compiler import host

    real = host.probe

    def restricted(**kw):
        return replace(real(**kw), apparmor_userns_restricted=True, userns=False,
                       bwrap_trial_error="bwrap: setting up uid map: Permission denied")
    monkeypatch.setattr(host, "probe", restricted)
    checks = {c.name: c for c in cli_run.checks()}
    c = checks["AppArmor userns restriction"]
    assert not c.ok and c.fix.startswith("sudo ringfence doctor --fix apparmor")


def test_doctor_fix_of_something_unknown_is_a_usage_error():
    r = subprocess.run([sys.executable, "-m", "ringfence", "doctor", "--fix", "sysctl"],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 2 and "knows 'apparmor'" in r.stderr and "Traceback" not in r.stderr
