"""ringfence.Session (issue 24) with the real sandbox and ledger: a waiting request is
decided by another process and resumed here with its REAL output; a crashed caller's
request is resumed by a new Session; cancel kills the sandbox; the approval binds to
the command, the directory's identity and the profile."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time

import pytest

import ringfence
from ringfence.rfcore.errors import ApprovalError
from tests.compiler.sandbox_util import CLI

pytestmark = [
    pytest.mark.sandbox,
    pytest.mark.skipif(__import__("shutil").which("bwrap") is None,
                       reason="bubblewrap is not installed"),
]

ASKY = 'extends = "build"\ndescription = "test: cat asks"\n[commands]\nask = ["cat **"]\n'


@pytest.fixture
def env(box_env):
    box = box_env
    profile = box.root / "asky.toml"
    profile.write_text(ASKY)
    box.profile = str(profile)
    return box


def session(box, **kw) -> ringfence.Session:
    return ringfence.Session(profile=box.profile, workspace=str(box.ws),
                             session=kw.pop("session", "agent-1"), **kw)


def cli(box, *args, **kw) -> subprocess.CompletedProcess:
    return subprocess.run([*CLI, *args], cwd=box.ws, env=box.env(), capture_output=True,
                          text=True, timeout=120, **kw)


def test_run_returns_the_whole_output_and_keeps_ringfence_lines_apart(env):
    s = session(env)
    r = s.run("seq 1 20000; echo oops >&2; exit 3")
    assert (r.state, r.exit_code) == ("failed", 3)
    assert r.stdout == "".join(f"{i}\n" for i in range(1, 20001))   # > 100 KiB, no tail cut
    assert r.stderr == "oops\n" and not r.truncated
    assert r.run_id and r.approval_id is None
    led = s.ledger().get_run(r.run_id)
    assert led.state == "failed" and len(led.result("stdout_tail")) <= 4096


def test_output_cap_keeps_head_and_tail_and_says_truncated(env):
    chunks = []
    s = session(env, output_cap=1000, on_output=lambda name, b: chunks.append((name, b)))
    r = s.run("seq 1 3000")
    assert r.truncated and r.state == "completed"
    assert r.stdout.startswith("1\n2\n3\n") and r.stdout.endswith("2999\n3000\n")
    assert "bytes of stdout cut here" in r.stdout and len(r.stdout) < 1200
    # The callback saw every byte while it ran.
    assert b"".join(b for n, b in chunks if n == "stdout") == "".join(
        f"{i}\n" for i in range(1, 3001)).encode()


def test_wait_then_a_second_process_decides_then_resume_returns_real_output(env):
    s = session(env)
    r = s.run("cat README")
    assert r.state == "waiting_for_approval" and r.exit_code == 75
    assert r.approval_id and "ask rule 'cat **'" in r.reasons[0]
    assert r.stdout == "" and r.stderr == ""              # nothing ran
    assert [p["id"] for p in s.pending()] == [r.approval_id]
    # Undecided: resume runs nothing and reports the wait again.
    again = s.resume(r.approval_id)
    assert again.state == "waiting_for_approval" and again.stdout == ""
    d = cli(env, "approve", r.approval_id, "--defer")
    assert d.returncode == 0, d.stderr
    assert "nothing ran here" in d.stdout
    import json
    listed = json.loads(cli(env, "approvals", "list", "--json").stdout)
    assert [(x["id"], x["decision"]) for x in listed] == [(r.approval_id, "once")]
    assert "decided" in cli(env, "approvals", "list").stdout
    assert s.ledger().get_run(r.run_id).state == "waiting_for_approval"   # not executed
    done = s.resume(r.approval_id)
    assert (done.state, done.exit_code, done.stdout) == ("completed", 0, "hello\n")
    assert done.run_id == r.run_id                        # the ORIGINAL run resumed
    # A second resume gets the stored output back; nothing runs twice.
    twice = s.resume(r.approval_id)
    assert (twice.state, twice.stdout) == ("completed", "hello\n")
    events = s.ledger().get_run(r.run_id).events
    claims = [e for e in events if (e["note"] or "").startswith("approved (scope")]
    assert len(claims) == 1 and events[-1]["state"] == "completed"   # claimed and ran once
    assert [e["state"] for e in events].count("completed") == 1


def test_plain_approve_still_runs_in_the_approvers_terminal(env):
    r = session(env).run("cat README")
    a = cli(env, "approve", r.approval_id)
    assert a.returncode == 0 and a.stdout == "hello\n"


@pytest.mark.parametrize("answer,state,stdout", [
    ("once", "completed", "hello\n"), ("deny", "denied", ""),
    (None, "waiting_for_approval", "")])
def test_on_approval_yes_no_none(env, answer, state, stdout):
    seen = []

    def ask(approval):
        seen.append(approval.command)
        return answer
    r = session(env, on_approval=ask).run("cat README")
    assert seen == ["cat README"]
    assert (r.state, r.stdout) == (state, stdout)
    if answer is None:
        assert r.approval_id and session(env).pending()[0]["id"] == r.approval_id


def test_unknown_decisions_and_always_for_one_time_are_refused_and_nothing_runs(env):
    s = session(env)
    r = s.run("cat README")
    with pytest.raises(ringfence.RingfenceError, match="unknown decision"):
        s.decide(r.approval_id, "sometimes")
    assert s.resume(r.approval_id).state == "waiting_for_approval"
    one = s.run("cat README > copy")         # a write: one-time, no standing grant
    assert one.state == "waiting_for_approval"
    with pytest.raises(ApprovalError, match="one-time"):
        s.decide(one.approval_id, "always")
    assert s.resume(one.approval_id).state == "waiting_for_approval"
    assert not (env.ws / "copy").exists()


CALLER = r"""
import sys, time, ringfence
def ask(approval):
    print(approval.id, flush=True)
    time.sleep(600)                 # the caller hangs, then is killed
s = ringfence.Session(profile=sys.argv[1], workspace=sys.argv[2], session="agent-1",
                      on_approval=ask)
s.run("cat README")
"""


def test_a_crashed_callers_request_is_resumed_by_a_new_session(env):
    proc = subprocess.Popen([sys.executable, "-c", CALLER, env.profile, str(env.ws)],
                            env=env.env(), stdout=subprocess.PIPE, text=True)
    try:
        approval_id = proc.stdout.readline().strip()
        assert approval_id.startswith("ap_")
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    s = session(env)               # a new process's view: the request still waits
    assert [p["id"] for p in s.pending()] == [approval_id]
    assert s.resume(approval_id).state == "waiting_for_approval"
    assert cli(env, "approve", approval_id, "--defer").returncode == 0
    r = s.resume(approval_id)
    assert (r.state, r.stdout) == ("completed", "hello\n")


def test_cancel_kills_the_running_sandbox_and_records_aborted(env):
    s = session(env)
    out = {}
    t = threading.Thread(target=lambda: out.setdefault("r", s.run("sleep 3; touch late")))
    t.start()
    for _ in range(300):
        if s._inflight:
            break
        time.sleep(0.05)
    (run_id,) = list(s._inflight)
    time.sleep(0.3)                 # let bwrap start: the switch is attached by then
    assert s.cancel(run_id) == "aborted"
    t.join(60)
    assert out["r"].state == "aborted" and out["r"].run_id == run_id
    assert s.ledger().get_run(run_id).state == "aborted"
    time.sleep(4)                   # the sandboxed `touch` would have run by now
    assert not (env.ws / "late").exists()


def test_cancel_withdraws_a_waiting_request(env):
    s = session(env)
    r = s.run("cat README")
    assert s.cancel(r.run_id) == "aborted"
    assert s.ledger().get_run(r.run_id).state == "aborted"
    assert s.pending() == []
    a = cli(env, "approve", r.approval_id)
    assert a.returncode == 2 and "already cancelled" in a.stderr and a.stdout == ""


def test_resume_refuses_a_cwd_swapped_for_a_symlink(env):
    (env.outside / "README").write_text("outside secret\n")
    s = session(env)
    r = s.run("cat README", cwd="sub")
    assert r.state == "waiting_for_approval"
    os.rename(env.ws / "sub", env.ws / "sub.old")
    os.symlink(env.outside, env.ws / "sub")
    s.decide(r.approval_id, "once")
    with pytest.raises(ApprovalError, match="changed"):
        s.resume(r.approval_id)
    assert s.ledger().get_run(r.run_id).state == "waiting_for_approval"


def test_resume_refuses_a_changed_profile(env):
    s = session(env)
    r = s.run("cat README")
    with open(env.profile, "a") as f:
        f.write('allow = ["cat **"]\n')
    s.decide(r.approval_id, "once")
    with pytest.raises(ApprovalError, match="changed"):
        s.resume(r.approval_id)


def test_cwd_outside_the_workspace_is_refused(env):
    with pytest.raises(ringfence.RingfenceError, match="outside the workspace"):
        session(env).run("true", cwd="../outside")


def test_check_runs_nothing_and_says_the_decision(env):
    c = session(env).check("cat README > copy")
    assert c["decision"] in ("allow", "ask") and c["profile"] == "asky"
    assert not (env.ws / "copy").exists()
    assert session(env).check("ringfence approve ap_x")["decision"] == "deny"


def test_a_callers_timeout_never_outlives_the_profiles_limit(env):
    short = env.root / "short.toml"
    short.write_text('extends = "build"\ndescription = "t"\n[limits]\ntimeout = 1\n')
    s = ringfence.Session(profile=str(short), workspace=str(env.ws), session="agent-1")
    r = s.run("sleep 5; touch late", timeout=10_000)
    assert r.state == "timeout"
    assert not (env.ws / "late").exists()
    with pytest.raises(ringfence.RingfenceError, match="positive"):
        s.run("true", timeout=-1)


def test_settled_stages_are_removed_after_the_result_and_dead_trash_by_recover(env):
    from ringfence.staging import mount as stg

    s = session(env)
    r = s.run("echo x > made")
    assert r.state == "completed" and (env.ws / "made").read_text() == "x\n"
    root = env.state / "stage"
    for _ in range(100):              # the worker removes it off the critical path
        if not any(n.startswith(("st_", stg.TRASH)) for n in os.listdir(root)):
            break
        time.sleep(0.05)
    assert [n for n in os.listdir(root) if n.startswith(("st_", stg.TRASH))] == []
    # A trash dir left by a process that died (killed before its worker ran):
    dead = subprocess.Popen(["true"])
    dead.wait()
    left = root / f"{stg.TRASH}{dead.pid}-st_x"
    (left / "work" / "work").mkdir(parents=True)
    os.chmod(left / "work" / "work", 0)
    from ringfence.staging.stale import recover

    recover(str(env.state))
    assert not left.exists()


def test_ledger_prune_takes_decisions_and_stored_outputs_with_their_runs(env):
    s = session(env)
    r = s.run("cat README")
    s.decide(r.approval_id, "once")
    assert s.resume(r.approval_id).stdout == "hello\n"
    led = s.ledger()
    count = lambda t: led.conn.execute(f"SELECT COUNT(*) FROM {t}").fetchone()[0]  # noqa: E731
    assert (count("decisions"), count("outputs")) == (1, 1)
    p = cli(env, "ledger", "prune", "--keep", "0")
    assert p.returncode == 0, p.stderr
    assert (count("decisions"), count("outputs"), count("runs")) == (0, 0, 0)


def test_host_assisted_escalation_waits_to_run_on_the_host_and_resumes_there(env):
    target = env.outside / "made-on-host"
    s = ringfence.Session(profile="host-assisted", workspace=str(env.ws), session="agent-1")
    r = s.run(f"touch {target}")
    assert (r.state, r.where, r.exit_code) == ("waiting_for_approval", "host", 75)
    assert "Read-only file system" in r.stderr or "Permission denied" in r.stderr
    assert not target.exists()                      # the sandbox held; nothing on the host
    s.decide(r.approval_id, "once")
    done = s.resume(r.approval_id)
    assert (done.state, done.where, done.exit_code) == ("completed", "host", 0)
    assert target.exists()
