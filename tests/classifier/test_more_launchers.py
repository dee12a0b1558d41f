"""Launchers issue 22's table lacked (setarch, linux32/64, choom, dbus-run-session,
the dynamic loader run directly, gosu, tini, sshpass, ccache, softlimit, run-parts,
start-stop-daemon) and subcommands that run their operands (`uv run`, `npm exec`,
`perf stat`, `pyenv exec`, `bundle exec`, `mise exec`, `conda run`, `op run`, ...):
the program they run is judged and keyed. Installed ones are run for real."""
from __future__ import annotations

import pytest

from ringfence.classifier import classify
from tests.classifier.test_launchers import MARK, _runs

REAL = [
    ("setarch x86_64 " + MARK, "setarch"),
    ("setarch x86_64 -R " + MARK, "setarch"),
    ("linux64 " + MARK, "linux64"),
    ("choom -n 0 -- " + MARK, "choom"),
    ("dbus-run-session -- " + MARK, "dbus-run-session"),
    ("/lib64/ld-linux-x86-64.so.2 /bin/" + MARK, "/lib64/ld-linux-x86-64.so.2"),
]


@pytest.mark.parametrize(("cmd", "needs"), REAL, ids=[c for c, _ in REAL])
def test_launcher_runs_its_operand_and_the_operand_is_keyed(cmd, needs, tmp_path):
    v = classify(cmd)
    assert v.verdict == "one_time" and "RF107" in v.codes, v.codes
    assert v.keys[-1] in ("sh", "/bin/sh"), v.keys
    _runs(cmd, tmp_path, needs)


def test_perf_stat_runs_its_operand(tmp_path):
    cmd = "perf stat -o /dev/null " + MARK
    v = classify(cmd)
    assert list(v.keys) == ["perf stat", "sh"] and "RF107" in v.codes, (v.keys, v.codes)
    _runs(cmd, tmp_path, "perf")


@pytest.mark.parametrize(("cmd", "keys"), [
    ("uv run make", ["uv run", "make"]), ("npm exec make", ["npm exec", "make"]),
    ("pnpm dlx make", ["pnpm dlx", "make"]), ("yarn dlx make", ["yarn dlx", "make"]),
    ("bun x make", ["bun x", "make"]), ("bundle exec rake", ["bundle exec", "rake"]),
    ("mise exec node@20 -- make", ["mise exec", "make"]), ("mise x -- make", ["mise x", "make"]),
    ("conda run -n e make", ["conda run", "make"]), ("op run -- make", ["op run", "make"]),
    ("doppler run -- make", ["doppler run", "make"]),
    ("podman unshare make", ["podman unshare", "make"]),
    ("pyenv exec python x.py", ["pyenv exec", "python"]),
    ("setarch x86_64 make", ["make"]), ("sshpass -p x make", ["make"]),
    ("tini make", ["make"]), ("ccache gcc x.c", ["gcc"]), ("softlimit -m 1 make", ["make"])])
def test_the_launched_program_is_keyed(cmd, keys):
    assert list(classify(cmd).keys) == keys, classify(cmd).codes


@pytest.mark.parametrize("cmd", [
    "gosu root make", "run-parts d", "start-stop-daemon -S -x make",
    "ld.so --preload x.so make", "perf stat --pre ./x make", "doppler run --command id",
    "uv run python -c 'import os'"])
def test_launchers_that_escalate_or_hand_over_are_one_time(cmd):
    assert classify(cmd).verdict == "one_time", classify(cmd).codes


@pytest.mark.parametrize(("cmd", "keys"), [
    ("ip netns exec n make", ["ip", "make"]), ("ip netns e n make", ["ip", "make"]),
    ("ip -n x netns exec n make", ["ip", "make"]),
    ("dpkg-architecture -c make", ["dpkg-architecture", "make"])])
def test_ip_netns_exec_and_dpkg_architecture_c_key_the_command(cmd, keys):
    assert list(classify(cmd).keys) == keys


def test_dpkg_architecture_c_really_runs_it(tmp_path):
    cmd = "dpkg-architecture -c " + MARK
    assert "RF107" in classify(cmd).codes
    _runs(cmd, tmp_path, "dpkg-architecture")


@pytest.mark.parametrize("cmd", ["ip -b f", "ip -batch f", "ip -force -batch f"])
def test_ip_batch_is_one_time(cmd):
    assert classify(cmd).verdict == "one_time"


@pytest.mark.parametrize("cmd", ["ip -br addr", "ip addr", "ip netns list"])
def test_ip_queries_stay_capability(cmd):
    assert classify(cmd).verdict == "capability"
