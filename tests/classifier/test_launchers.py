"""The launcher table (classifier/data_launch.py), the code-input rows
(classifier/effects_code.py, data_interp.py) and the subscripts bash evaluates
in builtins, checked against the real programs (issue 22).

* every option a launcher row names is in the installed program's `--help` or
  man page (skipped per program when it is not installed);
* every "it runs a command" row is run for real, in bash, with a command that
  creates a marker file: the marker must appear (the program really runs it)
  and the classifier must say one_time with the expected code. Programs that
  are not installed, or cannot run here (no privilege, no user namespaces),
  are skipped with the reason.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from ringfence.classifier import classify
from ringfence.classifier.data_launch import LAUNCHERS
from tests.classifier.test_effects_help import documentation

# Options that a program documents under another spelling, or only in a version
# other than the installed one.
_DOC_ELSEWHERE = {("strace", "--seccomp-bpf"): "strace documents it as --seccomp-bpf",
                  ("numactl", "--preferred-many"): "numactl 2.0.16+",
                  ("numactl", "--weighted-interleave"): "numactl 2.0.19+",
                  ("numactl", "-w"): "numactl 2.0.19+",
                  ("numactl", "-P"): "numactl 2.0.16+",
                  ("ltrace", "--output"): "ltrace documents -o only",
                  ("bwrap", "--argv0"): "bubblewrap 0.9 added --argv0 (Debian 12 has 0.8)",
                  ("valgrind", "--dhat-out-file"): "valgrind --tool=dhat --help"}


def _row_options(name: str) -> set[str]:
    row = LAUNCHERS[name]
    out = set(row.opts.value) | set(row.stop_opts) | set(row.writes) | set(row.shell_opts)
    out |= set(row.run_opts) | set(row.env_opts) | {o for o, _ in row.fact_opts}
    return {o for o in out if o not in ("-h", "--help", "-V", "--version", "-v")}


OPTION_CASES = sorted((name, opt) for name in LAUNCHERS for opt in _row_options(name))


@pytest.mark.parametrize(("name", "option"), OPTION_CASES,
                         ids=[f"{n}:{o}" for n, o in OPTION_CASES])
def test_launcher_option_is_in_the_programs_documentation(name, option):
    text, skip = documentation(name)
    if skip:
        pytest.skip(skip)
    if option not in text and (name, option) in _DOC_ELSEWHERE:
        pytest.skip(_DOC_ELSEWHERE[name, option])
    assert option in text, f"{name}: {option!r} not in its --help or man page"


def test_every_launcher_row_cites_its_manual():
    for name, row in LAUNCHERS.items():
        assert row.source and ("(" in row.source or "[" in row.source), name


# --- it really runs the command ----------------------------------------------------

MARK = "sh -c 'echo ran > \"$RF_M\"'"      # $RF_M: the marker's absolute path (chroot /)


def _bash(cmd: str, cwd: Path, timeout: int = 60) -> subprocess.CompletedProcess:
    return subprocess.run(["bash", "-c", cmd], cwd=cwd, capture_output=True, timeout=timeout,
                          stdin=subprocess.DEVNULL,
                          env=dict(os.environ, LC_ALL="C", RF_M=str(cwd / "M")))


def _runs(cmd: str, tmp_path: Path, needs: str, timeout: int = 60) -> None:
    """Run ``cmd`` for real: the marker file M must appear (else skip with why)."""
    prog = needs.split()[0]
    if shutil.which(prog) is None:
        pytest.skip(f"{prog} is not installed")
    r = _bash(cmd, tmp_path, timeout)
    marker = tmp_path / "M"
    for _ in range(50):                  # detached forms finish a little later
        if marker.exists():
            break
        subprocess.run(["sleep", "0.1"])
    if not marker.exists():
        pytest.skip(f"`{cmd}` cannot run here (rc {r.returncode}): "
                    f"{r.stderr.decode(errors='replace')[:200]}")
    assert marker.read_text().strip() == "ran"


LAUNCHED = [
    ("taskset 0x1 " + MARK, "sh", ()),
    ("taskset -c 0 " + MARK, "sh", ()),
    ("chrt -o 0 " + MARK, "sh", ()),
    ("prlimit --nofile=256 " + MARK, "sh", ()),
    ("ionice -c 3 " + MARK, "sh", ()),
    ("unshare -r " + MARK, "sh", ("RF123",)),
    ("strace -f -qq -o /dev/null " + MARK, "sh", ()),
    ("valgrind -q " + MARK, "sh", ()),
    ("flock L " + MARK, "sh", ()),
    ("setsid -w " + MARK, "sh", ("RF126",)),
    ("stdbuf -oL " + MARK, "sh", ()),
    ("nohup " + MARK, "sh", ()),
    ("chroot / " + MARK, "sh", ("RF123",)),
    ("runuser -u root -- " + MARK, "sh", ("RF123",)),
    ("setpriv --nnp " + MARK, "sh", ("RF123",)),
    ("fakeroot " + MARK, "sh", ()),
    ("ssh-agent " + MARK, "sh", ()),
    ("xvfb-run " + MARK, "sh", ()),
    ("numactl --localalloc " + MARK, "sh", ()),
    ("firejail --quiet " + MARK, "sh", ()),
    ("dbus-launch " + MARK, "sh", ("RF126",)),
]


@pytest.mark.parametrize(("cmd", "key", "extra"), LAUNCHED, ids=[c for c, _, _ in LAUNCHED])
def test_launcher_runs_its_operand_and_the_operand_is_judged(cmd, key, extra, tmp_path):
    v = classify(cmd)
    assert v.verdict == "one_time" and list(v.keys) == [key], (v.keys, v.codes)
    assert "RF107" in v.codes and set(extra) <= set(v.codes), v.codes
    _runs(cmd, tmp_path, cmd)


SHELL_HANDED = [
    ("flock L -c 'echo ran > M'", "RF114"),
    ("sg root -c 'echo ran > M'", "RF114"),
    ("runuser root -c 'echo ran > M'", "RF114"),
    ("tmux -L rf-i22 new -d 'echo ran > M'", "RF114"),
]


@pytest.mark.parametrize(("cmd", "code"), SHELL_HANDED, ids=[c for c, _ in SHELL_HANDED])
def test_launcher_hands_a_shell_string_over(cmd, code, tmp_path):
    v = classify(cmd)
    assert v.verdict == "one_time" and code in v.codes, v.codes
    try:
        _runs(cmd, tmp_path, cmd)
    finally:
        if cmd.startswith("tmux") and shutil.which("tmux"):
            _bash("tmux -L rf-i22 kill-server", tmp_path)


def test_a_shell_in_any_programs_operands_is_judged(tmp_path):
    # `env` stands for any program that execs its operands
    for cmd in ("mything --run /bin/sh -c id", "foo bash -lc id", 'foo "$SH" -c id',
                "docker run img sh -c 'make test'"):
        v = classify(cmd)
        assert v.verdict == "one_time", (cmd, v.codes)
    for cmd in ("echo sh -c id", "printf '%s\\n' bash -c", "tar -Jcf a.tar $dir"):
        assert "RF107" not in classify(cmd).codes and "RF114" not in classify(cmd).codes, cmd


def test_stop_options_run_nothing():
    # `taskset -p PID` reads an affinity; the operand is a pid, not a program
    for cmd in ("taskset -p 1", "chrt -p 1", "ionice -p 1", "strace -p 1", "screen -ls"):
        v = classify(cmd)
        assert list(v.keys) == [cmd.split()[0]], (cmd, v.keys)


# --- input and values that are code, in the real program -------------------------------

CODE_INPUT = [
    ("ed -s f <<< '!echo ran > M'", "ed", "RF116"),
    ("tclsh <<< 'exec sh -c {echo ran > M}'", "tclsh", "RF116"),
    ("gdb -q -batch -ex 'shell echo ran > M'", "gdb", "RF133"),
    ("printf 'shell echo ran > M\\n' > c.gdb; gdb -q -batch -x c.gdb", "gdb", "RF133"),
    ("sqlite3 db '.shell echo ran > M'", "sqlite3", "RF133"),
    ("sqlite3 db '.system echo ran > M'", "sqlite3", "RF133"),
    ("sqlite3 -cmd '.shell echo ran > M' db .quit", "sqlite3", "RF133"),
    ("sqlite3 db '.shell echo ran > M' <<< ''", "sqlite3", "RF133"),
    ("sqlite3 db <<< '.shell echo ran > M'", "sqlite3", "RF116"),
    ("make -f /dev/null --eval 'x:=$(shell echo ran > M)' -q", "make", "RF133"),
    ("printf 'a\\nb\\n' > f; mapfile -C 'echo ran > M #' -c 1 lines < f", "bash", "RF113"),
    ("dc <<< '!echo ran > M'", "dc", "RF116"),
    ("m4 <<< 'syscmd(echo ran > M)'", "m4", "RF116"),
    ("a=(1 2); unset 'a[$(echo ran > M)]'", "bash", "RF140"),
    ("sleep 0 & wait -n -p 'a[$(echo ran > M)]'", "bash", "RF140"),
    ("printf '#!/bin/sh\\necho ran > M\\n' > x.sh; chmod +x x.sh; echo x > f; tar cf a.tar f; "
     "TAR_OPTIONS=--to-command=./x.sh tar xf a.tar", "tar", "RF122"),
    ("GCONV_PATH=. iconv -f utf-8 -t ascii f 2>/dev/null; sh -c 'echo ran > M'", "iconv",
     "RF122"),
]


@pytest.mark.parametrize(("cmd", "needs", "code"), CODE_INPUT, ids=[c for c, _, _ in CODE_INPUT])
def test_input_or_value_that_is_code_runs_and_is_one_time(cmd, needs, code, tmp_path):
    v = classify(cmd)
    assert v.verdict == "one_time" and code in v.codes, (v.codes, v.keys)
    if needs == "iconv":
        return          # GCONV_PATH needs a crafted module: the classification is the test
    _runs(cmd, tmp_path, needs)


def test_sqlite_output_writes_the_file(tmp_path):
    cmd = "sqlite3 db '.output out.txt' 'select 42;'"
    v = classify(cmd)
    assert v.verdict == "one_time" and "RF131" in v.codes
    if shutil.which("sqlite3") is None:
        pytest.skip("sqlite3 is not installed")
    _bash(cmd, tmp_path)
    assert (tmp_path / "out.txt").read_text().strip() == "42"


@pytest.mark.parametrize("cmd", ["gdb -q -batch -ex bt", "sqlite3 db .tables",
                                 "sqlite3 db 'select 1'", "make -f /dev/null -q",
                                 "unset x", "a=(1); unset 'a[0]'"])
def test_read_only_forms_run_nothing(cmd, tmp_path):
    assert "RF133" not in classify(cmd).codes and "RF140" not in classify(cmd).codes
    if shutil.which(cmd.split()[0]) or cmd.startswith(("unset", "a=")):
        _bash(cmd, tmp_path)
        assert not (tmp_path / "M").exists()
