"""`ringfence run` and `hook` end without the interpreter's teardown
(``ringfence.fast.exit_now``): what a normal exit guarantees must still hold."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from tests.conftest import NO_BWRAP, have_bwrap


def test_exit_now_waits_for_threads_runs_handlers_and_flushes(tmp_path):
    done = tmp_path / "thread-done"
    code = (
        "import atexit, sys, threading, time\n"
        "from ringfence.fast import exit_now\n"
        f"def late():\n    time.sleep(0.3)\n    open({str(done)!r}, 'w').write('ok')\n"
        "threading.Thread(target=late).start()\n"
        "atexit.register(lambda: sys.stderr.write('handler ran\\n'))\n"
        "sys.stdout.write('buffered ' * 2000)\n"          # still in Python's buffer
        "exit_now(3)\n"
        "print('never')\n")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                       timeout=60)
    assert r.returncode == 3
    assert r.stdout == "buffered " * 2000
    assert "handler ran" in r.stderr
    assert done.read_text() == "ok"          # the non-daemon thread finished first


def test_exit_now_survives_a_closed_reader():
    code = ("import sys\nfrom ringfence.fast import exit_now\n"
            "sys.stdout.write('x' * 200000)\nexit_now(0)\n")
    p = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE)
    p.stdout.read(10)
    p.stdout.close()                           # the reader goes away (`| head`)
    _, err = p.communicate(timeout=60)
    assert p.returncode == 0, err
    assert b"Traceback" not in err


@pytest.mark.sandbox
@pytest.mark.skipif(not have_bwrap(), reason=NO_BWRAP)
def test_a_run_through_the_entry_point_keeps_its_output_code_and_record(tmp_path):
    import sqlite3
    import tempfile

    state = tmp_path / "state"
    env = dict(os.environ, RINGFENCE_HOME=str(state), XDG_STATE_HOME=str(state),
               HOME=str(tmp_path))
    env.pop("RINGFENCE_DEBUG", None)
    with tempfile.TemporaryDirectory(dir="/var/tmp", prefix="rf-exit-") as work:
        r = subprocess.run([sys.executable, "-m", "ringfence", "run", "-p", "build", "-w", work,
                            "--", "sh", "-c", "seq 1 20000; echo made > f; echo err >&2; exit 7"],
                           capture_output=True, text=True, env=env, cwd=work, timeout=120)
        assert r.returncode == 7, r.stderr
        assert r.stdout.splitlines() == [str(i) for i in range(1, 20001)]
        assert "err" in r.stderr
        assert open(os.path.join(work, "f")).read() == "made\n"
    db = sqlite3.connect(state / "ledger.db")
    states = [s for (s,) in db.execute("SELECT state FROM run_events ORDER BY rowid")]
    assert states[-1] == "failed", states


@pytest.mark.sandbox
@pytest.mark.skipif(not have_bwrap(), reason=NO_BWRAP)
def test_a_run_whose_reader_went_away_is_still_recorded_as_what_it_was(tmp_path):
    """`ringfence run ... 2>&1 | true`: the warnings after settling (RF641, a held
    file) meet a closed pipe. The run applied its harmless writes and holds the rest:
    it must be recorded so (completed, a pending approval), never `aborted` because
    a warning could not be shown."""
    import json
    import sqlite3
    import tempfile

    state = tmp_path / "state"
    env = dict(os.environ, RINGFENCE_HOME=str(state), XDG_STATE_HOME=str(state),
               HOME=str(tmp_path))
    env.pop("RINGFENCE_DEBUG", None)
    with tempfile.TemporaryDirectory(dir="/var/tmp", prefix="rf-exit-") as work:
        r, w = os.pipe()
        os.close(r)                                   # the reader is gone before it starts
        try:
            p = subprocess.run([sys.executable, "-m", "ringfence", "run", "-p", "build", "-w",
                                work, "--", "sh", "-c",
                                "echo note > CLAUDE.md; echo data > plain.txt"],
                               stdout=w, stderr=w, env=env, cwd=work, timeout=120)
        finally:
            os.close(w)
        assert open(os.path.join(work, "plain.txt")).read() == "data\n"
        assert not os.path.exists(os.path.join(work, "CLAUDE.md"))       # held
    db = sqlite3.connect(state / "ledger.db")
    rows = db.execute("SELECT state, changes FROM run_events ORDER BY rowid").fetchall()
    final = rows[-1]
    assert final[0] == "completed", (p.returncode, rows)
    assert "CLAUDE.md" in json.dumps(json.loads(final[1])["held"])


@pytest.mark.sandbox
@pytest.mark.skipif(not have_bwrap(), reason=NO_BWRAP)
@pytest.mark.skipif(not os.path.exists("/dev/full"),
                    reason="this system has no /dev/full (Linux's always-full device)")
def test_output_to_a_full_disk_is_the_commands_failure_not_ours(tmp_path):
    """`ringfence run ... > /dev/full`: the command's output cannot be written. The
    command sees its pipe close (as `seq > /dev/full` sees ENOSPC bare) and fails;
    the run ran, applied its writes and is recorded as failed, never as an internal
    error that says nothing was run."""
    import sqlite3
    import tempfile

    state = tmp_path / "state"
    env = dict(os.environ, RINGFENCE_HOME=str(state), XDG_STATE_HOME=str(state),
               HOME=str(tmp_path))
    env.pop("RINGFENCE_DEBUG", None)
    with tempfile.TemporaryDirectory(dir="/var/tmp", prefix="rf-exit-") as work, \
            open("/dev/full", "wb") as full:
        p = subprocess.run([sys.executable, "-m", "ringfence", "run", "-p", "build", "-w", work,
                            "--", "sh", "-c", "echo x > f; seq 1 100000"],
                           stdout=full, stderr=subprocess.PIPE, text=True, env=env, cwd=work,
                           timeout=120)
        assert open(os.path.join(work, "f")).read() == "x\n"
    assert "internal error" not in p.stderr, p.stderr
    assert p.returncode not in (0, 125), p.stderr
    db = sqlite3.connect(state / "ledger.db")
    final = db.execute("SELECT state, exit_code FROM run_events ORDER BY rowid DESC").fetchone()
    assert final == ("failed", p.returncode), (final, p.stderr)
