"""A Session's spare sandbox (compiler/spare.py, issue 24 item 4): the next run's
bwrap is set up ahead and used only when it is provably the sandbox a cold start
would build now. The attacks: a secret the spare's masks were set up for is swapped
on the host after the spare was made; the run must never print the new one.

The box lives in /srv/rf-spare-tests (made 1777 by a root run), not /var/tmp: a
spare is never used while an ancestor of a path it mounts changed within RACY_NS (a
shared /var/tmp changes every few seconds), nor under a home (masked). A test waits
for its spare to be ready (``_ready``)."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import threading
import time
from pathlib import Path

import pytest

import ringfence
from tests.compiler.sandbox_util import SECRET_DOTENV, make_box

pytestmark = [
    pytest.mark.sandbox,
    pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap is not installed"),
]

NEW = "RF-SWAPPED-SECRET-9e41aa"
WAIT = 20.0     # seconds a spare may take to become usable (RACY_NS and a busy host)


BASE = Path("/srv/rf-spare-tests")


@pytest.fixture
def env(monkeypatch):
    if not BASE.is_dir() and os.geteuid() == 0:
        BASE.mkdir(parents=True)
        BASE.chmod(0o1777)
    if not os.access(BASE, os.W_OK | os.X_OK):
        pytest.skip(f"{BASE} is missing or not writable (a root run makes it)")
    # One parent per user: a root run and an unprivileged one at the same time must not
    # change each other's ancestors (that would make their spares stale, rightly).
    mine = BASE / str(os.getuid())
    mine.mkdir(exist_ok=True)
    box = make_box(str(mine))
    for k, v in box.env().items():
        monkeypatch.setenv(k, v)
    for k in ("RINGFENCE_PROFILE", "RINGFENCE_SESSION", "RINGFENCE_SPARE"):
        monkeypatch.delenv(k, raising=False)
    yield box
    shutil.rmtree(box.root, ignore_errors=True)


def _until_spare(s, command="true") -> ringfence.Result:
    """Run ``command`` until a run used the spare (the spare is then made again)."""
    end = time.monotonic() + WAIT
    while True:
        r = s.run(command)
        if r.spare:
            return r
        assert time.monotonic() < end, f"no spare was used: {s._pool.why_not}"
        time.sleep(0.3)


def _ready(s) -> None:
    """Wait until a spare sits ready and still fresh, without using it. A spare gone
    stale meanwhile (the test's own writes, a cold run's settle, another test's box
    under a shared parent changed a directory it depends on: rightly not used) is
    replaced by one more run, so an assertion that the next run uses it holds on a
    busy machine too."""
    from ringfence.compiler.sparecheck import sample

    end = time.monotonic() + WAIT
    pool = s._pool
    while True:
        with pool._cond:
            spare = pool._slot if not pool._building else None
        if spare is not None:
            if spare.proc.poll() is None and sample(spare.names) == spare.sig:
                return
            _until_spare(s)     # takes the stale one (a cold run), asks for a new one
        assert time.monotonic() < end, f"no spare became ready: {pool._fail}"
        time.sleep(0.05)
        if pool._slot is None and not pool._building and pool._wanted is None:
            _until_spare(s)     # the maker gave up (racy); one more run asks again


def _changes(r) -> dict:
    return {k: v for k, v in (r.changes or {}).items() if k != "stage"}   # its own name


@pytest.mark.parametrize("profile", ["strict", "build"])
def test_a_spare_gives_what_a_cold_run_gives(env, profile):
    # Unprivileged, RLIMIT_NPROC is limits.pids plus the user's tasks when the sandbox
    # is set up (compiler/limits.py own_tasks): the cold Session's count includes the
    # warm one's spare, so that one line may differ by those few tasks.
    cases = ["echo out; echo err >&2; exit 3", "env | sort; echo SHLVL=$SHLVL 0=$0 $$",
             "set | grep -v '^BASH_ARGV\\|^BASH_ARGC\\|^_=\\|^PPID=' | sort",
             "ls -l /proc/self/fd | awk '{print $1, $9, $10, $11}' | sed 's/:\\[.*//'",
             "echo new > made.txt; cat made.txt", "cat .env; echo $?", "pwd; umask; ulimit -a | grep -v '^max user processes'",
             "kill -TERM $$", "printf '%s\\n' \"$(cat README)\""]
    warm = ringfence.Session(profile=profile, workspace=str(env.ws), session="warm")
    cold = ringfence.Session(profile=profile, workspace=str(env.ws), session="cold",
                             spare=False)
    try:
        for cmd in cases:
            for _ in range(3):
                # A spare is rightly dropped when the host changed what it was built
                # from meanwhile (the cold Session's run just before): that run is
                # cold and correct; the next spare is built from the new state.
                _ready(warm)
                w = warm.run(cmd)
                (env.ws / "made.txt").unlink(missing_ok=True)
                if w.spare:
                    break
            c = cold.run(cmd)
            assert w.spare and not c.spare, (cmd, warm._pool.why_not)
            assert (w.state, w.exit_code, w.stdout, w.stderr) == \
                (c.state, c.exit_code, c.stdout, c.stderr), cmd
            assert _changes(w) == _changes(c), cmd
            (env.ws / "made.txt").unlink(missing_ok=True)
        if profile == "strict":
            assert SECRET_DOTENV not in warm.run("cat .env").stdout
    finally:
        warm.close()
        cold.close()


def test_writes_held_and_applied_timeout_and_limits_are_as_cold(env):
    with ringfence.Session(profile="build", workspace=str(env.ws), session="w") as s:
        _ready(s)
        r = s.run("echo hi > a.txt; mkdir -p .git/hooks; echo 'rm -rf ~' > .git/hooks/pre-commit")
        assert r.spare and r.state == "completed"
        assert (env.ws / "a.txt").read_text() == "hi\n"          # applied on the host
        assert not (env.ws / ".git/hooks/pre-commit").exists()   # held for a person
        assert [h["path"] for h in r.held] == [".git/hooks/pre-commit"]
        _ready(s)
        r = s.run("sleep 30", timeout=1)
        assert r.spare and r.state == "timeout" and r.exit_code == 124
        _ready(s)
        r = s.run("echo x > cut.txt; python3 -c 'b = bytearray(1 << 31)'")
        assert r.spare
        ref = ringfence.Session(profile="build", workspace=str(env.ws), spare=False).run(
            "echo x > cut.txt; python3 -c 'b = bytearray(1 << 31)'")
        assert (r.state, r.exit_code) == (ref.state, ref.exit_code)


def test_cancel_kills_the_whole_spare_sandbox(env):
    from ringfence.rfcore.cancel import CancelToken

    with ringfence.Session(profile="strict", workspace=str(env.ws), session="c") as s:
        _ready(s)
        token, out = CancelToken(), {}
        t = threading.Thread(target=lambda: out.update(r=s.run(
            "sleep 31.25 & sleep 31.5; echo late", cancel=token)))
        t.start()
        end = time.monotonic() + 20
        while "sleep 31.5" not in _ps() and time.monotonic() < end:
            time.sleep(0.05)
        token.cancel()
        t.join(30)
        r = out["r"]
        assert r.spare and r.state == "aborted" and "late" not in r.stdout
        assert "sleep 31.25" not in _ps() and "sleep 31.5" not in _ps()


def _ps() -> str:
    return subprocess.run(["ps", "-eo", "args"], capture_output=True, text=True).stdout


def test_a_dotenv_replaced_by_rename_after_the_spare_is_never_shown(env):
    # Strict masks the workspace's .env (Build lets the command read the workspace).
    with ringfence.Session(profile="strict", workspace=str(env.ws), session="a") as s:
        _ready(s)
        new = env.ws / ".env.new"
        new.write_text(f"TOKEN={NEW}\n")
        os.rename(new, env.ws / ".env")
        r = s.run("cat .env; ls -la")
        assert NEW not in r.stdout + r.stderr
        assert not r.spare, "the spare was used although .env was replaced"


@pytest.mark.parametrize("profile", ["strict", "build"])
def test_a_credential_dir_replaced_by_rename_after_the_spare_is_never_shown(
        env, monkeypatch, profile):
    gh = env.outside / "ghcfg"
    gh.mkdir()
    (gh / "hosts.yml").write_text(f"github.com:\n    oauth_token: {SECRET_DOTENV}\n")
    monkeypatch.setenv("GH_CONFIG_DIR", str(gh))
    with ringfence.Session(profile=profile, workspace=str(env.ws), session="h") as s:
        _ready(s)
        fresh = env.outside / "ghcfg.new"
        fresh.mkdir()
        (fresh / "hosts.yml").write_text(f"github.com:\n    oauth_token: {NEW}\n")
        os.rename(gh, env.outside / "ghcfg.old")
        os.rename(fresh, gh)
        r = s.run(f"cat {gh}/hosts.yml")
        assert NEW not in r.stdout + r.stderr and not r.spare
        r = s.run(f"cat {env.outside}/ghcfg.old/hosts.yml")     # the test can fail:
        assert SECRET_DOTENV in r.stdout                          # that one is not masked


@pytest.mark.parametrize("profile", ["strict", "build"])
def test_a_new_credential_file_and_a_new_dotenv_in_a_subdir_are_hidden(
        env, monkeypatch, profile):
    gh = env.outside / "ghcfg"
    monkeypatch.setenv("GH_CONFIG_DIR", str(gh))
    with ringfence.Session(profile=profile, workspace=str(env.ws), session="n") as s:
        _ready(s)
        gh.mkdir()
        (gh / "hosts.yml").write_text(f"github.com:\n    oauth_token: {NEW}\n")
        r = s.run(f"cat {gh}/hosts.yml")
        assert NEW not in r.stdout + r.stderr and not r.spare
        if profile == "strict":
            _ready(s)
            (env.ws / "sub" / "deeper").mkdir()
            (env.ws / "sub" / "deeper" / ".env").write_text(f"TOKEN={NEW}\n")
            r = s.run("cat sub/deeper/.env")
            assert NEW not in r.stdout + r.stderr and not r.spare


def test_a_changed_gitconfig_is_served_as_it_is_now(env):
    cfg = env.home / ".gitconfig"
    cfg.write_text("[user]\n\tname = Before\n")
    with ringfence.Session(profile="strict", workspace=str(env.ws), session="g") as s:
        _ready(s)
        cfg.write_text(f"[user]\n\tname = After\n[http]\n\textraHeader = Authorization: "
                       f"Bearer {NEW}\n")
        r = s.run("cat ~/.gitconfig")
        assert "After" in r.stdout and NEW not in r.stdout and not r.spare


def test_close_leaves_no_bwrap_no_stage_no_cgroup(env):
    s = ringfence.Session(profile="build", workspace=str(env.ws), session="x")
    _ready(s)
    spare = s._pool._slot
    pid, stage = spare.proc.pid, spare.setup.stage.path
    cg = list(spare.setup.lims.dirs) if spare.setup.lims is not None else []
    assert os.path.exists(f"/proc/{pid}") and os.path.isdir(stage)
    from ringfence.staging.stale import recover

    assert recover(os.path.dirname(os.path.dirname(stage))) == []
    assert os.path.isdir(stage) and spare.setup.stage.meta()["state"] == "spare"   # live
    assert s._pool._slot is spare and spare.usable(spare.key) is None
    s.close()
    assert not os.path.exists(f"/proc/{pid}") or \
        open(f"/proc/{pid}/stat").read().split()[2] == "Z"
    assert not os.path.exists(stage)
    assert all(not os.path.exists(d) for d in cg)
    assert "bwrap --args" not in subprocess.run(
        ["ps", "-o", "args", "--ppid", str(os.getpid())], capture_output=True,
        text=True).stdout
    r = s.run("echo after close")          # a closed Session still runs, cold
    assert r.state == "completed" and not r.spare


def test_a_killed_spare_means_a_cold_run_that_works(env):
    with ringfence.Session(profile="strict", workspace=str(env.ws), session="k") as s:
        _ready(s)
        os.kill(s._pool._slot.proc.pid, signal.SIGKILL)
        time.sleep(0.2)
        r = s.run("echo fine")
        assert r.state == "completed" and r.stdout == "fine\n" and not r.spare
        assert s._pool.why_not == "its sandbox died"


def test_a_spare_that_dies_as_it_is_handed_the_run_means_a_cold_run(env, monkeypatch):
    from ringfence.compiler import spare as sp

    with ringfence.Session(profile="build", workspace=str(env.ws), session="d") as s:
        _ready(s)
        spare = s._pool._slot
        spare.proc.kill()
        spare.proc.wait()
        time.sleep(0.2)                 # its sandbox (and launcher) died with bwrap
        monkeypatch.setattr(sp.Spare, "usable", lambda self, ident: None)
        r = s.run("echo fine > f.txt; cat f.txt")
        assert r.state == "completed" and r.stdout == "fine\n" and not r.spare
        assert s._pool.why_not == "its sandbox died as it was handed the run"
        assert (env.ws / "f.txt").read_text() == "fine\n"
        assert not os.path.exists(spare.setup.stage.path)


def test_an_old_spare_is_not_used(env, monkeypatch):
    from ringfence.compiler import spare as sp

    with ringfence.Session(profile="strict", workspace=str(env.ws), session="o") as s:
        _ready(s)
        monkeypatch.setattr(sp, "MAX_AGE", 0.2)
        time.sleep(0.5)
        r = s.run("echo fine")
        assert r.stdout == "fine\n" and not r.spare
        assert s._pool.why_not in ("it is older than MAX_AGE",
                                   "no spare was ready")      # the maker expired it first


def test_never_for_long_commands_or_when_turned_off(env, monkeypatch):
    with ringfence.Session(profile="strict", workspace=str(env.ws), session="l") as s:
        _ready(s)
        r = s.run("echo " + "x" * 5000)
        assert r.state == "completed" and not r.spare
    monkeypatch.setenv("RINGFENCE_SPARE", "0")
    s = ringfence.Session(profile="strict", workspace=str(env.ws), session="o")
    assert s._pool is None and not s.run("true").spare


def _killed_with_a_spare(env, profile: str, then: str):
    """A child process whose Session has a spare ready runs ``then`` (with ``s``, its
    Session) and SIGKILLs itself; its CompletedProcess."""
    code = ("import ringfence, os, threading, time\n"
            f"s = ringfence.Session(profile={profile!r}, workspace={str(env.ws)!r})\n"
            "end = time.monotonic() + 30\n"
            "while s._pool._slot is None and time.monotonic() < end:\n"
            "    s.run('true'); time.sleep(0.5)       # a racy first sample makes none\n"
            + then + "os.kill(os.getpid(), 9)\n")
    return subprocess.run([__import__("sys").executable, "-c", code], capture_output=True,
                          text=True, env=dict(os.environ), timeout=90)


def test_a_dead_processes_spare_stage_is_removed_by_recover(env):
    p = _killed_with_a_spare(env, "strict", "print(s._pool._slot.setup.stage.path, flush=True)\n")
    stage = p.stdout.strip()
    assert stage and os.path.isdir(stage), p.stderr
    with ringfence.Session(profile="strict", workspace=str(env.ws), spare=False) as s:
        r = s.run("true")
    assert r.state == "completed" and not os.path.exists(stage)
    assert not any("RF642" in n for n in r.notes)


def test_a_run_killed_on_its_spare_is_reported_interrupted_not_removed_as_a_spare(env):
    """A spare's stage that a run took (staging/mount.py ``mark_taken``) is that run's:
    its process SIGKILLed mid-run, recover keeps it and says so (RF642); it is never
    removed as an unused spare."""
    p = _killed_with_a_spare(env, "build", (
        "stage = s._pool._slot.setup.stage\n"
        "threading.Thread(target=s.run, args=('echo kept > k.txt; sleep 30',),\n"
        "                 daemon=True).start()\n"
        "end = time.monotonic() + 20\n"
        "while not os.path.exists(os.path.join(stage.upper, 'k.txt')) and \\\n"
        "        time.monotonic() < end:\n"
        "    time.sleep(0.05)\n"
        "print(stage.path, stage.meta().get('state'), flush=True)\n"))
    stage, state = (p.stdout.split() + ["", ""])[:2]
    assert stage and os.path.isdir(stage), p.stderr
    assert state == "running"                   # taken: a run's stage, not a spare
    from ringfence.staging.stale import recover

    notes = recover(os.path.dirname(os.path.dirname(stage)))
    assert any("RF642" in n.code and "never applied" in n.message for n in notes), notes
    assert os.path.isfile(os.path.join(stage, "upper", "k.txt"))     # kept, unapplied
    assert not (env.ws / "k.txt").exists()


def _run_cgroups(pid: int) -> list[str]:
    from ringfence.compiler.limits import _own_paths, _v1_mount, _v2_mount

    own, found = _own_paths(), []
    roots = [(_v1_mount(c), own.get(c)) for c in ("pids", "memory")]
    roots.append((_v2_mount(), own.get("")))
    import glob

    for mount, path in roots:
        if mount and path is not None:
            found += glob.glob(os.path.join(mount, path.lstrip("/"), f"ringfence-{pid}-*"))
    return found


@pytest.mark.skipif(os.geteuid() != 0, reason="an unprivileged run gets no cgroup here")
def test_a_sessions_run_cgroups_are_removed_off_the_critical_path_never_left(env):
    """A Session hands an empty cgroup's removal to its worker (compiler/limits.py):
    the run's cgroups still go away, shortly after, run after run."""
    with ringfence.Session(profile="strict", workspace=str(env.ws), session="cg") as s:
        made = []
        for _ in range(4):
            r = s.run("true")
            assert r.state == "completed"
            made += _run_cgroups(os.getpid())
        if not made and not _run_cgroups(os.getpid()):
            # Either they were removed before we looked, or none is made here.
            from ringfence.compiler.limits import RunLimits

            probe = RunLimits(pids=10, memory=None)
            had = list(probe.dirs)
            probe.close()
            if not had:
                pytest.skip("no writable cgroup hierarchy on this machine")
        end = time.monotonic() + 10
        while _run_cgroups(os.getpid()) and time.monotonic() < end:
            time.sleep(0.05)
        left = _run_cgroups(os.getpid())
        spare = s._pool._slot
        mine = set(spare.setup.lims.dirs) if spare is not None and spare.setup.lims else set()
        assert set(left) <= mine, left          # only the waiting spare's own cgroups


def test_the_mcp_server_uses_a_spare_and_kills_it_when_it_exits(env):
    import sys

    import anyio
    from mcp import Client
    from mcp.client.stdio import StdioServerParameters

    def server(spare: str) -> StdioServerParameters:
        return StdioServerParameters(
            command=sys.executable, args=["-m", "ringfence", "mcp", "-p", "strict", "-w",
                                          str(env.ws)],
            env={**env.env(), "RINGFENCE_SPARE": spare}, cwd=str(env.ws))

    cmd = "echo out; echo err >&2; cat .env; exit 4"
    made: list = []

    def _spare_stages() -> list:
        import json

        root = env.state / "stage"
        found = []
        for p in root.iterdir() if root.is_dir() else ():
            meta = p / "meta.json"
            if meta.is_file() and json.loads(meta.read_text()).get("state") == "spare":
                found.append(p)
        return found

    async def calls(spare: str) -> list[dict]:
        out = []
        async with Client(server(spare), mode="legacy") as c:
            end = time.monotonic() + WAIT
            while time.monotonic() < end:
                r = (await c.call_tool("shell", {"command": cmd})).structured_content
                out.append(r)
                if r["spare"] or spare == "0" and len(out) == 3:
                    break
                await anyio.sleep(0.3)
            while spare == "1" and not _spare_stages() and time.monotonic() < end:
                await anyio.sleep(0.05)     # the next spare, made after this call
            made.extend(_spare_stages())
        return out

    warm = anyio.run(calls, "1")
    cold = anyio.run(calls, "0")
    assert warm[-1]["spare"], "the server never used a spare"
    assert not any(r["spare"] for r in cold)
    keys = ("state", "exit_code", "stdout", "stderr")
    assert [warm[-1][k] for k in keys] == [cold[-1][k] for k in keys]
    assert SECRET_DOTENV not in warm[-1]["stdout"] + warm[-1]["stderr"]
    # The server has exited: its spare went with it (no stage left, none running).
    assert made, "no spare stage was seen while the server ran"
    time.sleep(0.5)
    assert not any(p.exists() for p in made) and _spare_stages() == []
    assert str(env.ws) not in _ps()
