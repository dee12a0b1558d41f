"""`ringfence doctor`: each host requirement, with the fix for each failure."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys

import pytest


needs_bwrap = pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap is not installed")


def doctor(env) -> tuple[int, dict]:
    r = subprocess.run([sys.executable, "-m", "ringfence", "doctor", "--json"], env=env,
                       capture_output=True, text=True, timeout=60)
    assert "Traceback" not in r.stderr
    return r.returncode, {c["name"]: c for c in json.loads(r.stdout)["checks"]}


@needs_bwrap
@pytest.mark.sandbox
def test_doctor_passes_on_a_good_host(box):
    code, checks = doctor(box.env())
    assert code == 0, checks
    assert checks["bwrap"]["ok"] and checks["user namespaces"]["ok"]
    assert checks["seccomp"]["ok"] and checks["proxy prerequisites"]["ok"]
    assert set(checks) >= {"bwrap", "bwrap version", "AppArmor userns restriction",
                           "user namespaces", "seccomp", "Landlock", "proxy prerequisites",
                           "state dir", "ledger", "stage space", "stages left behind"}


def test_doctor_names_the_fix_when_bwrap_is_missing(box):
    code, checks = doctor(box.env(PATH="/nonexistent"))
    assert code == 1
    assert not checks["bwrap"]["ok"]
    assert "apt-get install bubblewrap" in checks["bwrap"]["fix"]
    # dependent checks agree: no "a trial sandbox started" next to "bwrap FAIL" (issue 14)
    userns = checks["user namespaces"]
    assert not userns["ok"] and userns["detail"].startswith("not tested")


def test_doctor_reports_a_bwrap_that_cannot_start_a_sandbox(box):
    fake = box.root / "fakebin"
    fake.mkdir()
    (fake / "bwrap").write_text("#!/bin/sh\n[ \"$1\" = --version ] && echo 'bubblewrap 0.9.0' "
                                "&& exit 0\necho 'bwrap: setting up uid map: Permission denied' >&2\n"
                                "exit 1\n")
    (fake / "bwrap").chmod(0o755)
    code, checks = doctor(box.env(PATH=f"{fake}:/usr/bin:/bin"))
    assert code == 1
    userns = checks["user namespaces"]
    assert not userns["ok"] and "uid map: Permission denied" in userns["detail"]
    assert "max_user_namespaces" in userns["fix"]


def test_doctor_human_output_is_a_table_with_a_verdict(box):
    r = subprocess.run([sys.executable, "-m", "ringfence", "doctor"],
                       env=box.env(PATH="/nonexistent", COLUMNS="200"), capture_output=True,
                       text=True, timeout=60)
    assert r.returncode == 1
    assert "ringfence doctor" in r.stdout and "apt-get install bubblewrap" in r.stdout
    assert "some required checks failed" in r.stdout


@needs_bwrap
@pytest.mark.sandbox
def test_run_hot_path_never_imports_typer_rich_or_lark(box):
    code = ("import sys\n"
            "from ringfence.fast import main\n"
            f"rc = main(['run', '-p', 'strict', '-w', {str(box.ws)!r}, '--', 'true'])\n"
            "print(rc, sorted(m for m in ('typer', 'rich', 'lark', 'bashlex', 'click') "
            "if m in sys.modules))\n")
    r = subprocess.run([sys.executable, "-c", code], env=box.env(), capture_output=True,
                       text=True, timeout=60)
    assert r.stdout.strip() == "0 []", r.stderr


def test_doctor_lists_the_credentials_it_found_and_how_each_is_hidden(box):
    """Issue 21: the one credential table, as found under this HOME (box: ~/.ssh,
    ~/.aws/credentials, ~/.netrc planted), plus an XDG-moved gh config and a served
    ~/.npmrc."""
    xdg = box.root / "xdg"
    (xdg / "gh").mkdir(parents=True)
    (xdg / "gh" / "hosts.yml").write_text("oauth_token: x\n")
    (box.home / ".npmrc").write_text("registry=https://registry.npmjs.org/\n")
    code, checks = doctor(box.env(XDG_CONFIG_HOME=str(xdg)))
    cred = checks["credentials hidden"]
    assert cred["ok"], cred
    detail = cred["detail"]
    assert f"{box.home}/.ssh (SSH keys): hidden with the home" in detail
    assert f"{box.home}/.netrc (machine passwords (curl, git, ftp)): hidden with the home" in detail
    assert f"{xdg}/gh (GitHub CLI token): masked" in detail
    assert f"{box.home}/.npmrc (npm registry tokens): served without its secrets" in detail
