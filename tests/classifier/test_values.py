"""Issue 11 §2: values bash evaluates as code. Each attack is run for real by bash
(the marker file appears: the hidden command ran) and must classify one_time;
each literal twin runs nothing and must not."""

from __future__ import annotations

import shutil
import subprocess

import pytest

from ringfence.classifier import classify

BASH = shutil.which("bash")
RUN = "$(touch M)"
BT = "\\140touch M\\140"

# (command, code): `RUN` is a command substitution hidden in a value.
ATTACKS = [
    (f"x='a[{RUN}]'; (( x ))", "RF140"),
    (f"x='a[{RUN}]'; y=$((x+1))", "RF140"),
    (f"x='a[{RUN}]'; let x", "RF140"),
    (f"declare -i n; n='a[{RUN}]'", "RF140"),
    (f"x='a[{RUN}]'; a=(1); echo ${{a[x]}}", "RF140"),
    (f"x='a[{RUN}]'; s=abc; echo ${{s:x}}", "RF140"),
    (f"x='a[{RUN}]'; [[ $x -eq 1 ]]", "RF140"),
    (f"x='a[{RUN}]'; echo $[x]", "RF140"),
    (f"x='a[{RUN}]'; for ((i=0; i<x; i++)); do :; done", "RF140"),
    (f"test -v 'a[{RUN}]'", "RF140"),
    (f"read 'a[{RUN}]' < /dev/null", "RF140"),
    (f"printf -v 'a[{RUN}]' %s 1", "RF140"),
    (f"declare 'a[{RUN}]=1'", "RF140"),
    (f"x='a[{RUN}]'; a[$x]=1", "RF140"),
    (f"p='a[{RUN}]'; echo ${{!p}}", "RF141"),
    (f'echo "${{x={BT}}}${{x@P}}"', "RF142"),
    (f"input='{BT}'; result=${{input@P}}", "RF142"),
]
SAFE = [
    f"x='a[{RUN}]'; [ \"$x\" -eq 1 ]",
    f"x='a[{RUN}]'; test \"$x\" -lt 1",
    f"x='a[{RUN}]'; echo ${{!x*}}",
    f"x='a[{RUN}]'; (( x = 1 ))",
]


def _ran(cmd: str, tmp_path) -> bool:
    subprocess.run([BASH, "-c", cmd], cwd=tmp_path, capture_output=True, timeout=10,
                   check=False)
    return (tmp_path / "M").exists()


@pytest.mark.skipif(BASH is None, reason="bash is not installed")
@pytest.mark.parametrize("cmd,code", ATTACKS)
def test_hidden_code_runs_in_bash_and_is_one_time(cmd, code, tmp_path):
    assert _ran(cmd, tmp_path), f"bash did not run the hidden command: {cmd}"
    v = classify(cmd)
    assert v.verdict == "one_time"
    assert code in v.codes


@pytest.mark.skipif(BASH is None, reason="bash is not installed")
@pytest.mark.parametrize("cmd", SAFE)
def test_no_evaluation_in_bash_and_no_arithmetic_finding(cmd, tmp_path):
    assert not _ran(cmd, tmp_path), f"bash ran the hidden command: {cmd}"
    v = classify(cmd)
    assert not {"RF140", "RF141", "RF142"} & set(v.codes), (cmd, v.codes)
