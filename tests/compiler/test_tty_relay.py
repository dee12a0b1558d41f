"""The terminal is never handed over (issue 23 item 8): a terminal on stdin reaches the
command as a pipe that ringfence relays; the command can neither write escape strings
to the person's terminal through it nor type into it (TIOCSTI), and its output to the
terminal is filtered (RF620). Tested with a real pty pair as the person's terminal."""

from __future__ import annotations

import json
import os
import select
import shutil
import subprocess
import termios
import time

import pytest

from .sandbox_util import CLI, INNER_PY

pytestmark = [
    pytest.mark.sandbox,
    pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap is not installed"),
]

ATTACK = (
    "printf 'A\\033]52;c;U1RPTEVO\\aB' >&0; echo wrote0=$?; "
    f"{INNER_PY} -c \"import fcntl, termios; fcntl.ioctl(0, termios.TIOCSTI, b'Z')\" "
    "2>/dev/null; echo sti=$?; "
    "if test -t 0; then echo stdin-is-tty; else echo stdin-is-pipe; fi; "
    "read line; echo got:$line; "
    "printf 'C\\033]52;c;Q0xJUA==\\aD\\n'; echo end"
)


def drain(master: int, proc: subprocess.Popen, limit: float = 60.0) -> bytes:
    out = bytearray()
    end = time.monotonic() + limit
    while time.monotonic() < end:
        r, _, _ = select.select([master], [], [], 0.1)
        if r:
            try:
                chunk = os.read(master, 65536)
            except OSError:
                break
            if not chunk:
                break
            out += chunk
        elif proc.poll() is not None:
            break
    return bytes(out)


def test_a_terminal_on_stdin_is_relayed_never_handed_over(box):
    master, slave = os.openpty()
    before = termios.tcgetattr(slave)
    os.write(master, b"hello\n")                 # the person types ahead
    proc = subprocess.Popen([*CLI, "run", "-p", "strict", "-w", str(box.ws), "-c", ATTACK],
                            cwd=box.ws, env=box.env(), stdin=slave, stdout=slave,
                            stderr=slave, close_fds=True)
    shown = drain(master, proc)
    assert proc.wait(timeout=60) == 0, shown
    assert b"\x1b]52" not in shown                # no clipboard write, by either way
    assert b"got:hello" in shown                  # what the person typed got through
    assert b"stdin-is-pipe" in shown
    assert b"wrote0=0" not in shown               # fd 0 is not writable
    assert b"sti=0" not in shown
    assert b"CD" in shown and b"end" in shown     # the filtered output still arrives
    # Nothing was typed into the person's terminal (TIOCSTI would queue a 'Z' there).
    os.set_blocking(slave, False)
    try:
        typed = os.read(slave, 100)
    except BlockingIOError:
        typed = b""
    assert b"Z" not in typed
    assert termios.tcgetattr(slave) == before     # its mode is the person's own
    os.close(slave)
    os.close(master)
    rows = [json.loads(x) for x in subprocess.run(
        [*CLI, "ledger", "export"], env=box.env(), capture_output=True, text=True,
        timeout=60).stdout.splitlines()]
    row = [r for r in rows if r.get("kind") != "hook"][-1]
    codes = {d["code"] for d in row["degradations"]}
    assert {"RF625", "RF620"} <= codes, codes
    assert row["state"] == "completed"


def test_ctrl_d_is_end_of_input_and_the_command_finishes(box):
    master, slave = os.openpty()
    os.write(master, b"one\ntwo\n\x04")          # two lines, then Ctrl-D
    proc = subprocess.Popen([*CLI, "run", "-p", "strict", "-w", str(box.ws), "--", "wc", "-l"],
                            cwd=box.ws, env=box.env(), stdin=slave, stdout=slave,
                            stderr=slave, close_fds=True)
    shown = drain(master, proc)
    assert proc.wait(timeout=60) == 0
    assert b"2" in shown.replace(b"one", b"").replace(b"two", b"")
    os.close(slave)
    os.close(master)


def test_a_pipe_or_file_on_stdin_is_passed_as_before(box):
    r = subprocess.run([*CLI, "run", "-p", "strict", "-w", str(box.ws), "--", "cat"],
                       cwd=box.ws, env=box.env(), input=b"plain input\n",
                       capture_output=True, timeout=60)
    assert r.returncode == 0 and r.stdout == b"plain input\n"


# --- review i23b: a background ringfence never reads the terminal -------------------------

BACKGROUND = r"""
import os, select, signal, sys
signal.signal(signal.SIGTTOU, signal.SIG_IGN)
where, slave, cli = sys.argv[1], sys.argv[2], sys.argv[3:]
os.setsid()
fd = os.open(slave, os.O_RDWR)          # the session's controlling terminal now
pid = os.fork()
if pid == 0:
    os.setpgid(0, 0)                    # `ringfence run ... &`: not the foreground group
    if where == "fg":
        os.tcsetpgrp(fd, os.getpgrp())
    signal.signal(signal.SIGTTOU, signal.SIG_DFL)
    for n in (0, 1, 2):
        os.dup2(fd, n)
    os.execvp(cli[0], cli)
_, status = os.waitpid(pid, 0)
os.tcsetpgrp(fd, os.getpgrp())          # the shell is in the foreground again
os.set_blocking(fd, False)
left = b""
if select.select([fd], [], [], 1.0)[0]:
    try:
        left = os.read(fd, 100)
    except OSError:
        pass
print(f"exit={os.waitstatus_to_exitcode(status)} left={left!r}", file=sys.stderr)
"""


def test_a_background_run_is_not_stopped_by_input_and_keeps_its_timeout(box, tmp_path):
    import sys

    prof = tmp_path / "p.toml"
    prof.write_text('extends = "strict"\n[limits]\ntimeout = 3\n', encoding="utf-8")
    master, slave = os.openpty()
    name = os.ttyname(slave)
    proc = subprocess.Popen([sys.executable, "-c", BACKGROUND, "bg", name, *CLI, "run", "-p",
                             str(prof), "-w", str(box.ws), "-c", "sleep 30"],
                            cwd=box.ws, env=box.env(), stderr=subprocess.PIPE, text=True)
    time.sleep(1.0)
    os.write(master, b"hello\n")                # typed while ringfence runs in the background
    try:
        _, err = proc.communicate(timeout=60)   # before: stopped by SIGTTIN, past its timeout
    finally:
        if proc.poll() is None:
            proc.kill()     # the session ends: its orphaned, stopped group gets SIGHUP
            proc.wait()
        os.close(master)
        os.close(slave)
    assert "exit=124" in err, err
    assert "left=b'hello\\n'" in err, err       # the type-ahead is still the shell's


def test_type_ahead_a_command_never_reads_stays_the_shells_but_one_line(box):
    """Documented bound (compiler/ttyrelay.py): the relay reads the terminal only when
    the pipe is empty, so of the lines typed during a run whose command never reads
    stdin, at most the first is lost; the rest stays in the terminal for the shell."""
    import sys

    master, slave = os.openpty()
    proc = subprocess.Popen([sys.executable, "-c", BACKGROUND, "fg", os.ttyname(slave), *CLI,
                             "run", "-p", "strict", "-w", str(box.ws), "-c", "sleep 3"],
                            cwd=box.ws, env=box.env(), stderr=subprocess.PIPE, text=True)
    time.sleep(1.5)
    os.write(master, b"one\ntwo\nthree\n")
    try:
        _, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        os.close(master)
        os.close(slave)
    assert "exit=0" in err, err
    assert "left=b'two\\n'" in err, err       # the shell reads on: two, then three
