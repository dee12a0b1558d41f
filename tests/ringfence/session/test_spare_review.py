"""Attack review of the spare sandbox (issue 24 item 4, review r24s): what a run on
a spare did that a cold run at the same moment would not. Each test asserts on the
host side (the file written or not, the process gone) and compares with a cold
Session where the difference is the point. Fixtures from test_session_spare.py."""

from __future__ import annotations

import os
import subprocess
import threading
import time

import ringfence
from tests.ringfence.session.test_session_spare import _ready, env, pytestmark  # noqa: F401


def _state(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().rsplit(")", 1)[1].split()[0]
    except OSError:
        return "gone"


def _run_while_closed(s, box) -> ringfence.Result:
    """Run a command that writes after 3 s; close the Session 1.5 s in."""
    out: dict = {}
    t = threading.Thread(target=lambda: out.update(
        r=s.run("sleep 3; echo done > late.txt; echo out")))
    t.start()
    time.sleep(1.5)
    s.close()
    t.join(60)
    return out["r"]


def test_closing_a_session_does_not_kill_a_run_that_is_on_its_spare(env):
    # The spare's bwrap is forked by the pool's maker thread, and --die-with-parent
    # fires when that *thread* ends: close() used to end it, SIGKILLing the run in
    # flight (exit 137, `failed`, its writes lost). A cold run just finishes.
    cold = ringfence.Session(profile="build", workspace=str(env.ws), session="c",
                             spare=False)
    c = _run_while_closed(cold, env)
    assert (c.state, c.exit_code, c.stdout) == ("completed", 0, "out\n")
    assert (env.ws / "late.txt").read_text() == "done\n"
    (env.ws / "late.txt").unlink()
    warm = ringfence.Session(profile="build", workspace=str(env.ws), session="w")
    _ready(warm)
    w = _run_while_closed(warm, env)
    assert w.spare
    assert (w.state, w.exit_code, w.stdout) == ("completed", 0, "out\n")
    assert (env.ws / "late.txt").read_text() == "done\n"      # applied on the host
    # ... and once that run is over, close() still leaves no spare behind.
    assert warm._pool is None
    assert "bwrap --args" not in subprocess.run(
        ["ps", "-o", "args", "--ppid", str(os.getpid())], capture_output=True,
        text=True).stdout


def test_a_run_refused_cold_for_stage_space_is_refused_on_a_spare_too(env, monkeypatch):
    # RF622: below the minimum free space a run is refused, nothing runs (exit 125).
    # The spare checked the space when it was set up, minutes before.
    from ringfence.staging import mount

    for spare in (False, True):
        with ringfence.Session(profile="build", workspace=str(env.ws), spare=spare) as s:
            if spare:
                _ready(s)
            with monkeypatch.context() as m:
                m.setattr(mount, "free_space", lambda path: (1024, 10))
                r = s.run("echo ran > ran.txt")
            assert not r.spare
            assert (r.state, r.exit_code) == ("sandbox_error", 125)
            assert any("RF622" in n for n in r.notes)
            assert not (env.ws / "ran.txt").exists()


def test_a_spare_taken_but_never_handed_its_argv_is_killed_and_reaped(env, monkeypatch):
    # Anything raised between take() and the handoff (a KeyboardInterrupt from the
    # person's ^C, an OSError setting the subreaper) left the taken spare's bwrap
    # (alive without a cgroup, a zombie with one) and its argv pipe open until exit.
    from ringfence.compiler import supervise as sv

    s = ringfence.Session(profile="build", workspace=str(env.ws), session="i")
    try:
        _ready(s)
        spare = s._pool._slot
        pid, stage = spare.proc.pid, spare.setup.stage.path

        def interrupted(*a, **k):
            raise KeyboardInterrupt
        monkeypatch.setattr(sv, "TermGuard", interrupted)
        try:
            s.run("echo x > never.txt")
        except KeyboardInterrupt:
            pass
        monkeypatch.undo()
        assert _state(pid) == "gone", _state(pid)
        assert spare.argv_w is None
        assert not os.path.exists(stage)
        assert not (env.ws / "never.txt").exists()
    finally:
        s.close()


def test_a_spare_is_not_used_once_the_processs_umask_or_rlimits_changed(env):
    # The sandbox inherits the umask and rlimits of the process when bwrap is forked:
    # a spare forked before the host process tightened them gave the run the old ones
    # (a file it wrote reached the host 0644 under umask 077).
    import resource

    old_mask = os.umask(0o022)
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    try:
        with ringfence.Session(profile="build", workspace=str(env.ws), session="u") as s:
            _ready(s)
            os.umask(0o077)
            r = s.run("umask; echo x > private.txt")
            assert r.state == "completed" and r.stdout == "0077\n" and not r.spare
            assert os.stat(env.ws / "private.txt").st_mode & 0o777 == 0o600
            assert s._pool.why_not == "the compiled sandbox differs"
            _ready(s)
            resource.setrlimit(resource.RLIMIT_NOFILE, (soft - 1, hard))
            r = s.run("ulimit -n")
            assert r.stdout == f"{soft - 1}\n" and not r.spare
    finally:
        os.umask(old_mask)
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))


def test_the_launchers_own_variables_never_reach_the_command(env):
    # The launcher read the argv into shell variables n, x and a: a profile setting
    # one of those (exported) gave the command the word count, its own command
    # string, or nothing at all instead of the profile's value.
    from ringfence.compiler.spare import VARS

    names = ("n", "x", "a") + VARS[:3]
    sets = ", ".join(f'{n} = "V-{n}"' for n in names)
    (env.ws / ".ringfence.toml").write_text(f'extends = "build"\n[env]\nset = {{ {sets} }}\n')
    cmd = "echo " + " ".join(f"{n}=${{{n}-unset}}" for n in names)
    want = " ".join(f"{n}=V-{n}" for n in names) + "\n"
    time.sleep(2.5)         # RACY_NS: the maker would wait for the new profile file
    with ringfence.Session(workspace=str(env.ws), session="v") as s:
        assert s.run(cmd).stdout == want
        end = time.monotonic() + 20
        while s._pool._slot is None and time.monotonic() < end:     # made, not used
            time.sleep(0.05)
        r = s.run(cmd)
        assert r.stdout == want and not r.spare     # it sets the launcher's names
        assert s._pool.why_not == "the environment sets a variable the launcher uses"
    (env.ws / ".ringfence.toml").write_text('extends = "build"\n[env]\n'
                                            'set = { n = "N", x = "X", a = "A" }\n')
    with ringfence.Session(workspace=str(env.ws), session="v2") as s:
        s.run("true")
        _ready(s)
        r = s.run("echo $n $x $a")
        assert r.spare and r.stdout == "N X A\n"


def test_a_spares_degradations_are_printed_when_a_run_uses_it(env, monkeypatch, capfd):
    # A cold run prints each degradation (RF606: no seccomp filter) to stderr as its
    # sandbox is set up; the spare was set up quietly, so the run on it printed none.
    from ringfence.compiler import seccomp

    def no_filter(*a, **k):
        raise ValueError("no filter in this test")
    monkeypatch.setattr(seccomp, "build_filter", no_filter)
    for spare in (False, True):
        with ringfence.Session(profile="strict", workspace=str(env.ws), spare=spare) as s:
            if spare:
                _ready(s)
            capfd.readouterr()
            r = s.run("true")
            err = capfd.readouterr().err
            assert r.spare == spare and r.state == "completed"
            assert err.count("RF606") == 1, (spare, err)


def test_bash_env_runs_nothing_before_the_handoff(env):
    # The launcher was a plain `bash -c`: with BASH_ENV passed (a user config may set
    # it) it sourced that file when the spare was set up, before the next run was
    # even decided (its output and writes became the next run's), and again in the
    # command. (Exported functions cannot be named in a profile's env.)
    (env.root / "bashenv").write_text('echo "sourced" >&2\n')
    conf = env.home / ".config" / "ringfence"
    conf.mkdir(parents=True)
    (conf / "config.toml").write_text(
        f'extends = "build"\n[env]\nset = {{ BASH_ENV = "{env.root}/bashenv" }}\n')
    cmd = "echo ran"
    with ringfence.Session(workspace=str(env.ws), session="c", spare=False) as s:
        c = s.run(cmd)
    assert (c.stdout, c.stderr) == ("ran\n", "sourced\n")
    with ringfence.Session(workspace=str(env.ws), session="w") as s:
        s.run("true")
        _ready(s)
        w = s.run(cmd)
    assert w.spare and (w.stdout, w.stderr) == (c.stdout, c.stderr)


def test_an_exported_shellopts_keeps_its_value(env):
    # `bash -p` rewrites an exported SHELLOPTS (adds "privileged"): no spare then.
    conf = env.home / ".config" / "ringfence"
    conf.mkdir(parents=True)
    (conf / "config.toml").write_text('extends = "build"\n[env]\n'
                                      'set = { SHELLOPTS = "braceexpand:hashall" }\n')
    time.sleep(2.5)         # RACY_NS, for the config just written under the home
    cmd = "echo $SHELLOPTS"
    with ringfence.Session(workspace=str(env.ws), session="c", spare=False) as s:
        c = s.run(cmd)
    with ringfence.Session(workspace=str(env.ws), session="w") as s:
        s.run("true")
        end = time.monotonic() + 20
        while s._pool._slot is None and time.monotonic() < end:
            time.sleep(0.05)
        w = s.run(cmd)
        assert s._pool.why_not == "the environment sets a variable the launcher uses"
    assert not w.spare and w.stdout == c.stdout and "privileged" not in w.stdout


def test_a_spare_is_not_used_once_ignored_or_blocked_signals_changed(env):
    # Ignored signals (process-wide) and the forking thread's blocked ones reach the
    # command: the spare's were the maker thread's when it was set up.
    import signal

    cmd = "grep -E '^Sig(Blk|Ign)' /proc/self/status"
    old = signal.signal(signal.SIGUSR2, signal.SIG_DFL)
    try:
        with ringfence.Session(profile="strict", workspace=str(env.ws), session="g") as s:
            _ready(s)
            signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGUSR1})
            signal.signal(signal.SIGUSR2, signal.SIG_IGN)
            w = s.run(cmd)
        with ringfence.Session(profile="strict", workspace=str(env.ws), spare=False) as s:
            c = s.run(cmd)
        assert not w.spare and w.stdout == c.stdout
        assert "SigBlk:\t0000000000000200" in c.stdout
    finally:
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGUSR1})
        signal.signal(signal.SIGUSR2, old)
