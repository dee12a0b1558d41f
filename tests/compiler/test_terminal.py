"""The person's terminal around a run (issue 10 §6), through the real CLI on a pty.

* the command reads the terminal through a relayed pipe (issue 23), and the
  terminal's mode is the person's after a normal exit, a timeout and a signal;
* in contexts with no person at the terminal (`run --no-stdin`, which the hook's
  --wrap sets, and approval executors) the command does not get it at all;
* control strings (OSC 52 clipboard, title) never reach the terminal (RF620),
  colours do, and output to a pipe is left byte for byte.
"""

from __future__ import annotations

import json
import os
import pty
import select
import shutil
import signal
import subprocess
import termios
import time

import pytest

from .sandbox_util import CLI

pytestmark = [
    pytest.mark.sandbox,
    pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap is not installed"),
]


def on_pty(box, args, *, signal_after: float | None = None) -> tuple[int, bytes, list]:
    """Run the CLI with a pty as stdin/stdout/stderr: (exit, what the terminal got,
    the terminal's termios afterwards)."""
    master, slave = pty.openpty()
    try:
        before = termios.tcgetattr(slave)
        assert before[3] & termios.ECHO
        proc = subprocess.Popen([*CLI, *args], cwd=box.ws, env=box.env(TERM="xterm"),
                                stdin=slave, stdout=slave, stderr=slave)
        got = bytearray()
        started = time.monotonic()
        while proc.poll() is None:
            if signal_after is not None and time.monotonic() - started > signal_after:
                proc.send_signal(signal.SIGTERM)
                signal_after = None
            if select.select([master], [], [], 0.05)[0]:
                got += os.read(master, 65536)
        while select.select([master], [], [], 0.2)[0]:
            got += os.read(master, 65536)
        return proc.returncode, bytes(got), termios.tcgetattr(slave)
    finally:
        os.close(master)
        os.close(slave)


def echo_on(attrs) -> bool:
    return bool(attrs[3] & termios.ECHO) and bool(attrs[3] & termios.ICANON)


def test_the_command_reads_the_terminal_through_a_relay_and_cannot_change_it(box):
    # Issue 23: the terminal is never handed over; the command's stdin is a pipe
    # ringfence feeds from it (tests/compiler/test_tty_relay.py has the attacks).
    code, out, attrs = on_pty(box, ["run", "-p", "strict", "--", "bash", "-c",
                                    "test -t 0 && echo has-tty || echo relayed; "
                                    "stty -echo -icanon; true"])
    assert code == 0, out
    assert b"relayed" in out and b"has-tty" not in out
    assert echo_on(attrs), "echo was left off after the run"


def test_mode_is_restored_after_a_timeout(box):
    code, out, attrs = on_pty(box, ["run", "-p", "strict", "--timeout", "1", "--", "bash",
                                    "-c", "stty -echo raw; sleep 60"])
    assert code == 124, out
    assert echo_on(attrs)


def test_mode_is_restored_after_a_signal(box):
    code, out, attrs = on_pty(box, ["run", "-p", "strict", "--", "bash", "-c",
                                    "stty -echo; echo ready; sleep 60"], signal_after=2.0)
    assert code == 128 + signal.SIGTERM, out
    assert echo_on(attrs)


def test_no_stdin_run_does_not_get_the_terminal(box):
    code, out, attrs = on_pty(box, ["run", "--no-stdin", "-p", "strict", "--", "bash", "-c",
                                    "test -t 0 && echo has-tty || echo no-tty; stty -echo"])
    assert b"no-tty" in out and b"has-tty" not in out
    assert echo_on(attrs)


def test_approval_executor_does_not_get_the_terminal(box):
    r = subprocess.run([*CLI, "run", "--host", "-p", "build", "--", "stty", "-echo"],
                       cwd=box.ws, env=box.env(), capture_output=True, text=True, timeout=60)
    assert r.returncode == 75, r.stderr
    ap_id = json.loads(subprocess.run([*CLI, "approvals", "list", "--json"], cwd=box.ws,
                                      env=box.env(), capture_output=True, text=True,
                                      timeout=60).stdout)[0]["id"]
    code, out, attrs = on_pty(box, ["approve", ap_id])
    assert code == 1, out          # stty on /dev/null: not a terminal
    assert echo_on(attrs)


def test_osc_strings_are_removed_from_terminal_output(box):
    code, out, attrs = on_pty(box, ["run", "-p", "strict", "--", "printf",
                                    r"a\033]52;c;cHduZWQ=\007b\033]0;title\033\\c\033[1md\n"])
    assert code == 0
    assert b"\x1b]" not in out
    assert b"abc\x1b[1md" in out                # colours pass
    assert b"RF620: removed 2 terminal control string(s)" in out


def test_output_to_a_pipe_is_byte_for_byte(box):
    data = r"a\033]52;c;cHduZWQ=\007b"
    r = subprocess.run([*CLI, "run", "-p", "strict", "--", "printf", data], cwd=box.ws,
                       env=box.env(), capture_output=True, timeout=60)
    assert r.returncode == 0
    assert r.stdout == b"a\x1b]52;c;cHduZWQ=\x07b"
    assert b"RF620" not in r.stderr


def test_mode_is_restored_after_a_host_run(box):
    code, out, attrs = on_pty(box, ["run", "--sandbox", "off", "--", "stty", "-echo"])
    assert code == 0, out
    assert echo_on(attrs)
