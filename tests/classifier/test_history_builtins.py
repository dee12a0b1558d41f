"""bash builtins that run or stage shell code are one time like eval (RF117):
`fc` re-runs history, `history -s/-r/-n` stage it, `history -w/-a` write the
history file, `set -k` turns later NAME=VALUE words into assignments. PS0-PS3 and
HISTFILE are exec variables (RF122). The mechanisms are run for real."""
from __future__ import annotations

import subprocess

import pytest

from ringfence.classifier import classify


def _bash(script: str, cwd) -> None:
    subprocess.run(["bash", "-c", script], cwd=cwd, capture_output=True, timeout=30,
                   stdin=subprocess.DEVNULL, env={"PATH": "/usr/bin:/bin", "HOME": str(cwd)})


def test_history_s_then_fc_s_really_runs_the_staged_command(tmp_path):
    for line in ('history -s "touch M"', "fc -s touch"):
        v = classify(line)
        assert v.verdict == "one_time" and "RF117" in v.codes, (line, v.codes)
    _bash('set -o history\nhistory -s "touch M"\nfc -s touch', tmp_path)
    assert (tmp_path / "M").exists()


def test_set_k_really_turns_later_words_into_assignments(tmp_path):
    v = classify("set -k")
    assert v.verdict == "one_time" and "RF117" in v.codes, v.codes
    _bash("set -k; sh -c 'eval \"$X\"' X='touch M'", tmp_path)
    assert (tmp_path / "M").exists()


@pytest.mark.parametrize("cmd", [
    "fc -e vi", "fc", "fc -s", "history -w ~/.bashrc", "history -a", "history -r f",
    "history -n", "set -ek", "set -o keyword", 'set "$x"', "PS0='$(id)'", "export PS1=x",
    "HISTFILE=~/.bashrc", "PS2=x bash -i"])
def test_code_staging_forms_are_one_time(cmd):
    assert classify(cmd).verdict == "one_time", classify(cmd).codes


@pytest.mark.parametrize("cmd", ["fc -l", "fc -ln -5", "history", "history 10", "history -c",
                                 "history -d 5", "set -e", "set -o pipefail", "set -- a b"])
def test_listing_forms_are_not_one_time(cmd):
    assert classify(cmd).verdict != "one_time", classify(cmd).codes
