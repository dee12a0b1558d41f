"""The governor flow (SPEC §5) end to end, with a FAKE host CLI on PATH.

The classifier, gate and runner are other stages; here they are small fakes
with their documented contracts, so the governor's own logic (grants, pending
approvals, resume, escalation, ledger rows) is tested alone and without bwrap.
The real stack is exercised through the CLI in test_approvals.py.
"""

from __future__ import annotations

import io
import json
import os
import re
import subprocess
import sys
import textwrap
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from ringfence.classifier.verdict import Capability, Finding, Verdict
from ringfence.profiles.model import CommandRule, Profile
from ringfence.rfcore.errors import ApprovalError, SandboxError, UsageError
from ringfence.ledger import pending as ap
from ringfence.session import governor as G
from ringfence.fast import run as run_cli
from ringfence.ledger import grants as gr
from ringfence.ledger.store import Ledger

ROOT = Path(__file__).resolve().parents[2]
ID = re.compile(r"^ap_[a-z2-7]{10}$")


def verdict(cmd: str, cls: str, *keys: str) -> Verdict:
    caps = tuple(Capability(k, k.split()[0], tuple(k.split()), (0, len(cmd))) for k in keys)
    finds = (Finding("RF101", "command substitution runs code", (0, len(cmd))),) \
        if cls == "one_time" else ()
    return Verdict(cmd, cls, caps, (), finds)


VERDICTS = {v.command: v for v in (
    verdict("longbridge news FIG.US 2>&1 | head -30", "capability", "longbridge"),
    verdict("longbridge quote AAPL.US | tail -5", "capability", "longbridge"),
    verdict("longbridge fail", "capability", "longbridge"),
    verdict("./longbridge quote AAPL.US", "capability", "./longbridge"),
    verdict("/tmp/x/longbridge quote AAPL.US", "capability", "/tmp/x/longbridge"),
    verdict("longbridge news $(cat t)", "one_time", "longbridge"),
    verdict("echo hello", "helper"),
    verdict("git push origin main", "capability", "git push"),
    verdict("touch /ro/x", "capability", "touch"),
    verdict("make", "capability", "make"),
    verdict("longbridge quote AAPL.US", "capability", "longbridge"),
)}


@dataclass
class Decision:
    decision: str
    reasons: tuple = ()
    matched: tuple = ()

    def to_json(self):
        return {"decision": self.decision, "reasons": list(self.reasons)}


def fake_decide(v, profile, *, grants=frozenset(), context="host", cwd=None, **_):
    """The gate's contract: deny > ask > allow; grants cover capability keys."""
    rules = {r.pattern: r.action for r in profile.rules}
    if any(rules.get(k) == "deny" for k in v.keys):
        return Decision("deny", ("rule denies " + ", ".join(v.keys),))
    if context == "host":
        if v.verdict == "capability" and all(k in grants for k in v.keys):
            return Decision("allow", ("granted",))
        return Decision("ask", ("host access needs approval",))
    # An ask rule is covered only by an exact grant of the same argv (issue 20).
    exact = {tuple(json.loads(g)["argv"]) for g in grants if g.startswith('{"argv"')}
    held = [c.key for c in v.capabilities
            if rules.get(c.key) == "ask" and tuple(c.argv) not in exact]
    return Decision("ask", (f"rule asks for {held[0]}",)) if held else Decision("allow")


@dataclass
class FakeRunner:
    exit_code: int = 0
    stderr_tail: str = ""
    raises: Exception | None = None
    network: list = field(default_factory=list)
    calls: list = field(default_factory=list)

    def __call__(self, argv=None, *, command=None, profile=None, workspace=None, timeout=None,
                 grants=frozenset(), out=None, err=None, stdin=None, **_):
        self.calls.append((argv, command, profile.name, workspace, grants))
        self.stdin = stdin
        if self.raises:
            raise self.raises
        return type("R", (), {"exit_code": self.exit_code, "stdout_tail": "sandbox out",
                              "stderr_tail": self.stderr_tail, "duration": 0.01,
                              "network": self.network, "degradations": []})()


BUILD = Profile(name="build", source="builtin:build", digest="d-build", host="ask",
                rules=(CommandRule("ask", "git push"),))
STRICT = Profile(name="strict", source="builtin:strict", digest="d-strict", host="deny",
                 rules=(CommandRule("deny", "git push"),))
ASSIST = Profile(name="host-assisted", source="builtin:host-assisted", digest="d-ha",
                 host="escalate")


@pytest.fixture
def env(tmp_path, monkeypatch):
    """A fake `longbridge` first on PATH that logs every call (host-side evidence)."""
    bin_ = tmp_path / "bin"
    bin_.mkdir()
    log = tmp_path / "calls.log"
    script = bin_ / "longbridge"
    script.write_text(textwrap.dedent(f"""\
        #!/bin/sh
        echo "$*" >> {log}
        echo "longbridge argv: $*"
        echo "longbridge stderr line" >&2
        [ "$1" = fail ] && exit 3
        exit 0
    """))
    script.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_}:{os.environ['PATH']}")
    ws = tmp_path / "ws"
    ws.mkdir()
    runner = FakeRunner()
    profiles = {"build": BUILD, "strict": STRICT, "host-assisted": ASSIST}
    deps = G.Deps(classify=lambda c: VERDICTS[c], decide=fake_decide, run_sandbox=runner,
                  load_profile=lambda name, workspace=None: profiles[name])
    led = Ledger(tmp_path / "ledger.db")
    yield type("Env", (), dict(log=log, ws=ws, deps=deps, runner=runner, ledger=led,
                               db=tmp_path / "ledger.db", profiles=profiles,
                               tmp=tmp_path))()
    led.close()


def calls(env) -> list[str]:
    return env.log.read_text().splitlines() if env.log.exists() else []


def run(env, cmd, *, host=True, session="s1", profile=BUILD):
    s = G.Streams(io.BytesIO(), io.BytesIO())
    out = G.govern(G.Request(profile=profile, command=cmd, workspace=str(env.ws),
                             cwd=str(env.ws), host=host, session=session),
                   ledger=env.ledger, deps=env.deps, streams=s)
    return out, s.out.getvalue().decode(), s.err.getvalue().decode()


def approve(env, aid, scope="once", session=None):
    s = G.Streams(io.BytesIO(), io.BytesIO())
    code = G.approve(aid, scope=scope, session=session, ledger=env.ledger, deps=env.deps,
                     streams=s)
    return code, s.out.getvalue().decode(), s.err.getvalue().decode()


def test_ask_then_approve_streams_real_output_and_resumes_original_run(env):
    out, stdout, stderr = run(env, "longbridge news FIG.US 2>&1 | head -30")
    assert (out.state, out.exit_code) == ("waiting_for_approval", 75)
    assert ID.match(out.approval_id)
    assert f"waiting_for_approval {out.approval_id}" in stderr
    assert "not granted: longbridge" in stderr and stdout == ""
    assert calls(env) == []                                   # nothing ran yet
    assert env.ledger.get_run(out.run_id).state == "waiting_for_approval"
    [pending] = ap.pending(env.ledger)
    assert (pending.id, pending.where, pending.keys) == (out.approval_id, "host", ("longbridge",))

    code, stdout, stderr = approve(env, out.approval_id)
    assert code == 0
    # 2>&1 | head: both lines arrive on stdout, exactly as bash produced them
    assert stdout == "longbridge argv: news FIG.US\nlongbridge stderr line\n"
    assert calls(env) == ["news FIG.US"]
    rec = env.ledger.get_run(out.run_id)                      # the ORIGINAL run
    assert [e["state"] for e in rec.events] == ["waiting_for_approval", "running", "completed"]
    assert rec.state == "completed" and rec.result("exit_code") == 0
    assert "longbridge argv: news FIG.US" in rec.result("stdout_tail")
    assert rec.approvals[0]["status"] == "approved" and rec.approvals[0]["scope"] == "once"
    assert ap.pending(env.ledger) == []
    assert gr.list_grants(env.ledger) == []                   # once stores no grant


def test_approve_exits_with_the_commands_status_and_records_failed(env):
    out, _, _ = run(env, "longbridge fail")
    code, stdout, stderr = approve(env, out.approval_id)
    assert code == 3
    assert stdout == "longbridge argv: fail\n" and stderr == "longbridge stderr line\n"
    rec = env.ledger.get_run(out.run_id)
    assert (rec.state, rec.result("exit_code")) == ("failed", 3)


def test_session_grant_covers_other_layouts_of_the_same_capability(env):
    out, _, _ = run(env, "longbridge news FIG.US 2>&1 | head -30", session="s1")
    assert approve(env, out.approval_id, scope="session", session="s1")[0] == 0
    out2, stdout, _ = run(env, "longbridge quote AAPL.US | tail -5", session="s1")
    assert (out2.state, out2.exit_code, out2.approval_id) == ("completed", 0, None)
    assert stdout == "longbridge argv: quote AAPL.US\n"
    assert calls(env) == ["news FIG.US", "quote AAPL.US"]
    assert [(g.key, g.scope, g.session) for g in gr.list_grants(env.ledger)] == [
        ("longbridge", "session", "s1")]


def test_grant_never_covers_path_qualified_programs(env):
    out, _, _ = run(env, "longbridge news FIG.US 2>&1 | head -30")
    approve(env, out.approval_id, scope="always")
    for cmd in ("./longbridge quote AAPL.US", "/tmp/x/longbridge quote AAPL.US"):
        o, _, err = run(env, cmd)
        assert (o.state, o.exit_code) == ("waiting_for_approval", 75), cmd
        assert f"not granted: {cmd.split()[0]}" in err
    assert calls(env) == ["news FIG.US"]


def test_one_time_is_never_granted(env):
    gr.add_grants(env.ledger, ["longbridge"], "always", "")
    out, _, err = run(env, "longbridge news $(cat t)")
    assert (out.state, out.exit_code) == ("waiting_for_approval", 75)
    assert "RF101 command substitution runs code" in err
    with pytest.raises(ApprovalError, match="one-time request"):
        approve(env, out.approval_id, scope="session")
    with pytest.raises(ApprovalError, match="one-time request"):
        approve(env, out.approval_id, scope="always")
    assert ap.get(env.ledger, out.approval_id).status == "pending"   # refusal claimed nothing
    assert approve(env, out.approval_id, scope="once")[0] == 0
    again, _, _ = run(env, "longbridge news $(cat t)")
    assert again.state == "waiting_for_approval"


def test_session_isolation(env):
    out, _, _ = run(env, "longbridge news FIG.US 2>&1 | head -30", session="alice")
    approve(env, out.approval_id, scope="session", session="alice")
    assert run(env, "longbridge quote AAPL.US | tail -5", session="bob")[0].exit_code == 75
    unnamed, named = gr.current_session(None, {})
    assert not named and unnamed.startswith("proc-")
    assert run(env, "longbridge quote AAPL.US | tail -5", session=unnamed)[0].exit_code == 75
    assert run(env, "longbridge quote AAPL.US | tail -5", session="alice")[0].exit_code == 0


def test_session_scope_needs_a_named_session(env):
    unnamed, _ = gr.current_session(None, {})
    out, _, _ = run(env, "longbridge news FIG.US 2>&1 | head -30", session=unnamed)
    with pytest.raises(ApprovalError, match="named session"):
        approve(env, out.approval_id, scope="session")
    assert approve(env, out.approval_id, scope="session", session="named")[0] == 0


def test_session_grants_expire(env, monkeypatch):
    monkeypatch.setenv("RINGFENCE_SESSION_TTL", "2h")
    out, _, _ = run(env, "longbridge news FIG.US 2>&1 | head -30")
    approve(env, out.approval_id, scope="session", session="s1")
    [g] = gr.list_grants(env.ledger)
    assert round(g.expires_at - g.created_at) == 7200
    assert run(env, "longbridge quote AAPL.US | tail -5")[0].exit_code == 0
    real = gr.time.time
    monkeypatch.setattr(gr.time, "time", lambda: real() + 7201)
    assert run(env, "longbridge quote AAPL.US | tail -5")[0].exit_code == 75
    assert gr.list_grants(env.ledger) == []


@pytest.mark.parametrize("raw,seconds", [("90", 90), ("15m", 900), ("1.5h", 5400), ("2d", 172800)])
def test_session_ttl_parsing(raw, seconds):
    assert gr.session_ttl({"RINGFENCE_SESSION_TTL": raw}) == seconds
    assert gr.session_ttl({}) == 8 * 3600


@pytest.mark.parametrize("raw", ["soon", "-5", "0", "5w"])
def test_bad_session_ttl_is_usage_error(raw):
    with pytest.raises(UsageError, match="not a duration"):
        gr.session_ttl({"RINGFENCE_SESSION_TTL": raw})


def test_strict_denies_host_requests(env):
    out, stdout, stderr = run(env, "longbridge quote AAPL.US | tail -5", profile=STRICT)
    assert (out.state, out.exit_code) == ("denied", 77)
    assert "host requests are denied under profile 'strict'" in stderr
    assert calls(env) == [] and ap.pending(env.ledger) == []
    assert env.ledger.get_run(out.run_id).state == "denied"


def test_deny_records_and_blocks_later_approve(env):
    out, _, _ = run(env, "longbridge news FIG.US 2>&1 | head -30")
    denied = G.deny(out.approval_id, ledger=env.ledger)
    assert denied.status == "denied"
    assert env.ledger.get_run(out.run_id).state == "denied"
    with pytest.raises(ApprovalError, match="already denied"):
        approve(env, out.approval_id)
    with pytest.raises(ApprovalError, match="already denied"):
        G.deny(out.approval_id, ledger=env.ledger)
    assert calls(env) == []


def test_double_approve_is_an_error_not_a_second_run(env):
    out, _, _ = run(env, "longbridge news FIG.US 2>&1 | head -30")
    assert approve(env, out.approval_id)[0] == 0
    with pytest.raises(ApprovalError, match="already approved") as exc:
        approve(env, out.approval_id)
    assert exc.value.exit_code == 2
    assert calls(env) == ["news FIG.US"]
    with pytest.raises(ApprovalError, match="no approval"):
        approve(env, "ap_doesnotexist")


def test_concurrent_approve_from_two_processes_executes_once(env):
    out, _, _ = run(env, "longbridge news FIG.US 2>&1 | head -30")
    go = env.tmp / "go"
    code = textwrap.dedent("""
        import os, sys, time
        from ringfence.session import governor as G
        from ringfence.ledger.store import Ledger
        from ringfence.rfcore.errors import ApprovalError
        from tests.ringfence.test_governor import BUILD
        led = Ledger(sys.argv[1])
        deps = G.default_deps()
        deps.load_profile = lambda name, workspace=None: BUILD   # the request's profile
        while not os.path.exists(sys.argv[3]):
            time.sleep(0.001)
        try:
            sys.exit(G.approve(sys.argv[2], ledger=led, deps=deps))
        except ApprovalError as e:
            print(e, file=sys.stderr)
            sys.exit(e.exit_code)
    """)
    environ = dict(os.environ, PYTHONPATH=str(ROOT))
    kids = [subprocess.Popen([sys.executable, "-c", code, str(env.db), out.approval_id,
                              str(go)], env=environ, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE) for _ in range(3)]
    go.write_text("go")
    results = [(k.wait(timeout=120), k.stdout.read().decode(), k.stderr.read().decode())
               for k in kids]
    assert sorted(r[0] for r in results) == [0, 2, 2]
    assert calls(env) == ["news FIG.US"]
    assert sum("already approved" in r[2] for r in results) == 2
    events = [e["state"] for e in env.ledger.get_run(out.run_id).events]
    assert events == ["waiting_for_approval", "running", "completed"]


def test_helper_runs_on_host_without_asking(env):
    out, stdout, _ = run(env, "echo hello")
    assert (out.state, out.exit_code, stdout) == ("completed", 0, "hello\n")


def test_sandbox_ask_rule_pends_and_approve_runs_in_same_sandbox(env):
    out, _, err = run(env, "git push origin main", host=False)
    assert (out.state, out.exit_code) == ("waiting_for_approval", 75)
    assert "needs approval under profile 'build' to run in its sandbox" in err
    assert "rule asks for git push" in err
    assert env.runner.calls == []
    assert ap.get(env.ledger, out.approval_id).where == "sandbox"
    code, _, _ = approve(env, out.approval_id, scope="session", session="s1")
    assert code == 0
    assert env.runner.calls == [(None, "git push origin main", "build", str(env.ws),
                                 frozenset({"git push"}))]
    rec = env.ledger.get_run(out.run_id)
    assert [e["state"] for e in rec.events] == ["waiting_for_approval", "running", "completed"]
    # The session grant now satisfies the ask rule for this session only.
    assert run(env, "git push origin main", host=False)[0].state == "completed"
    assert run(env, "git push origin main", host=False, session="s2")[0].exit_code == 75


def test_sandbox_approve_refuses_when_profile_changed(env):
    out, _, _ = run(env, "git push origin main", host=False)
    env.profiles["build"] = Profile(name="build", source="builtin:build", digest="d-new",
                                    rules=())
    with pytest.raises(ApprovalError, match="changed since"):
        approve(env, out.approval_id)
    assert env.runner.calls == [] and ap.get(env.ledger, out.approval_id).status == "pending"


def test_sandbox_deny_rule_is_77(env):
    out, _, err = run(env, "git push origin main", host=False, profile=STRICT)
    assert (out.state, out.exit_code) == ("denied", 77)
    assert "rule denies git push" in err and env.runner.calls == []


def test_sandbox_run_is_recorded_with_changes(env):
    # A staged run reports its exact change record itself (ringfence/staging/settle.py):
    # the governor stores it as is and never walks the workspace.
    record = {"created": ["built.o"], "modified": [], "deleted": [], "capped": False,
              "unreadable_dirs": 0, "staged": True, "stage": "st_x", "held": [],
              "not_applied": []}

    def write_file(argv=None, *, command=None, profile=None, workspace=None, **_):
        return type("R", (), {"exit_code": 0, "stdout_tail": "ok", "stderr_tail": "",
                              "changes": record, "held": (),
                              "network": [{"host": "pypi.org", "port": 443,
                                           "allowed": True}]})()
    env.deps.run_sandbox = write_file
    out, _, _ = run(env, "make", host=False)
    rec = env.ledger.get_run(out.run_id)
    assert (rec.state, rec.kind, rec.profile, rec.spec_digest) == (
        "completed", "sandbox", "build", "d-build")
    assert rec.result("changes") == record
    assert rec.result("network") == [{"host": "pypi.org", "port": 443, "allowed": True}]


def test_sandbox_error_is_125_and_recorded(env):
    env.runner.raises = SandboxError("bwrap: no user namespaces")
    out, _, err = run(env, "make", host=False)
    assert (out.state, out.exit_code) == ("sandbox_error", 125)
    assert "could not run safely: bwrap: no user namespaces" in err
    assert env.ledger.get_run(out.run_id).state == "sandbox_error"
    env.runner.raises = UsageError("workspace is not a directory")
    out, _, err = run(env, "make", host=False)
    assert (out.state, out.exit_code) == ("sandbox_error", 125)


def test_host_assisted_escalates_boundary_failure_linked(env):
    env.runner.exit_code = 1
    env.runner.stderr_tail = "touch: cannot touch '/ro/x': Read-only file system\n"
    out, _, err = run(env, "touch /ro/x", host=False, profile=ASSIST)
    assert (out.state, out.exit_code) == ("waiting_for_approval", 75)
    assert "escalating to a host request" in err
    sandbox_run = env.ledger.get_run(out.run_id)
    host_run = env.ledger.get_run(out.escalated_run_id)
    assert (sandbox_run.kind, sandbox_run.state) == ("sandbox", "failed")
    assert sandbox_run.children == [host_run.id]
    assert (host_run.kind, host_run.parent_id, host_run.state) == (
        "host", sandbox_run.id, "waiting_for_approval")
    assert ap.get(env.ledger, out.approval_id).where == "host"


def test_host_assisted_does_not_escalate_ordinary_failures(env):
    env.runner.exit_code = 2
    env.runner.stderr_tail = "make: *** No rule to make target 'all'.  Stop.\n"
    out, _, _ = run(env, "make", host=False, profile=ASSIST)
    assert (out.state, out.exit_code, out.escalated_run_id) == ("failed", 2, None)
    assert ap.pending(env.ledger) == []


def test_build_does_not_escalate_even_on_boundary_failure(env):
    env.runner.exit_code = 1
    env.runner.stderr_tail = "Permission denied"
    out, _, _ = run(env, "make", host=False, profile=BUILD)
    assert (out.state, out.exit_code) == ("failed", 1)


@pytest.mark.parametrize("stderr,network,expected", [
    ("bash: /etc/x: Permission denied", [], True),
    ("curl: (56) CONNECT tunnel failed, response 403", [], True),
    ("error: EACCES: permission denied, open '/x'", [], True),
    ("socket: Operation not permitted", [], True),
    ("", [{"host": "evil.example", "port": 443, "allowed": False}], True),
    ("AssertionError: 1 != 2", [{"host": "pypi.org", "port": 443, "allowed": True}], False),
    ("HTTP 403 from api.github.com", [], False),
])
def test_boundary_failure_detection(stderr, network, expected):
    result = type("R", (), {"stderr_tail": stderr, "network": network})()
    assert G.looks_like_boundary(result) is expected


def test_every_request_gets_a_ledger_row(env):
    run(env, "longbridge news FIG.US 2>&1 | head -30")            # pending
    run(env, "echo hello")                                          # host helper
    run(env, "longbridge quote AAPL.US | tail -5", profile=STRICT)  # refused
    run(env, "make", host=False)                                    # sandboxed
    assert sorted(r.state for r in env.ledger.list_runs()) == [
        "completed", "completed", "denied", "waiting_for_approval"]


def test_parse_run_args():
    p = run_cli.parse_run_args
    assert p(["--host", "--session", "s", "--", "ls", "-la"])["argv"] == ["ls", "-la"]
    o = p(["--profile=strict", "-c", "ls | head"])
    assert (o["profile"], o["command"], o["argv"]) == ("strict", "ls | head", None)
    assert p(["make", "-j4"])["argv"] == ["make", "-j4"]
    o = p(["-p", "observe", "-w", "/ws", "--", "ls"])
    assert (o["profile"], o["workspace"], o["argv"]) == ("observe", "/ws", ["ls"])
    assert p(["--help"])["help"] is True
    for bad, msg in ([[], "exactly one"], [["-c", "x", "--", "y"], "exactly one"],
                     [["--bogus"], "unknown option"], [["--timeout", "-1", "--", "x"], "timeout"],
                     [["--sandbox", "maybe", "--", "x"], "on or off"], [["--profile"], "needs a value"],
                     [["--sandbox", "off", "-p", "build", "--", "x"], "conflicts"],
                     [["-c", "  "], "empty command"],
                     [["--host", "--timeout", "5", "--", "x"], "sandboxed runs only"]):
        with pytest.raises(UsageError, match=msg):
            p(bad)


def test_sandbox_off_runs_on_host_without_asking_and_is_recorded(env):
    host = Profile(name="host", source="builtin:host", sandbox=False)
    out, stdout, _ = run(env, "longbridge quote AAPL.US | tail -5", host=False, profile=host)
    assert (out.state, out.exit_code, stdout) == ("completed", 0, "longbridge argv: quote AAPL.US\n")
    rec = env.ledger.get_run(out.run_id)
    assert rec.kind == "host" and "full host access" in rec.events[0]["note"]
    assert env.runner.calls == [] and ap.pending(env.ledger) == []


def test_approve_refuses_when_the_recorded_cwd_is_gone(env, tmp_path):
    gone = tmp_path / "gone"
    gone.mkdir()
    s = G.Streams(io.BytesIO(), io.BytesIO())
    out = G.govern(G.Request(profile=BUILD, command="longbridge fail", workspace=str(env.ws),
                             cwd=str(gone), host=True, session="s1"),
                   ledger=env.ledger, deps=env.deps, streams=s)
    gone.rmdir()
    with pytest.raises(ApprovalError, match="no longer exists"):
        approve(env, out.approval_id)
    assert ap.get(env.ledger, out.approval_id).status == "pending" and calls(env) == []


# --- the real stack: classifier + profiles + gate (+ runner for sandbox tests) -----------------

def needs_stack(test):
    """Marks tests that use the real stack (they fail, never skip, without it)."""
    return test

RUN = textwrap.dedent("""
    import sys
    from ringfence.rfcore.errors import RingfenceError
    from ringfence.fast.run import main_run
    try:
        sys.exit(main_run(sys.argv[1:]))
    except RingfenceError as exc:
        print(f"ringfence run: {exc}", file=sys.stderr)
        sys.exit(exc.exit_code)
""")


@pytest.fixture
def real(env, monkeypatch):
    monkeypatch.setenv("RINGFENCE_HOME", str(env.tmp / "home"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(env.tmp / "cfg"))
    monkeypatch.delenv("RINGFENCE_PROFILE", raising=False)
    monkeypatch.setenv("RINGFENCE_SESSION", "e2e")
    return env


def sub(*args: str, cwd=None, **env_extra) -> subprocess.CompletedProcess:
    environ = dict(os.environ, PYTHONPATH=str(ROOT), **env_extra)
    return subprocess.run([sys.executable, "-c", RUN, *args], capture_output=True, timeout=120,
                          env=environ, cwd=cwd)


def approve_cli(*args: str, **env_extra) -> subprocess.CompletedProcess:
    environ = dict(os.environ, PYTHONPATH=str(ROOT), **env_extra)
    return subprocess.run([sys.executable, "-m", "ringfence", "approve", *args],
                          capture_output=True, timeout=120, env=environ)


def approval_id(stderr: bytes) -> str:
    m = re.search(rb"waiting_for_approval (ap_[a-z2-7]{10})", stderr)
    assert m, stderr
    return m.group(1).decode()


@needs_stack
def test_e2e_host_ask_approve_resume_and_grant_reuse(real):
    ws = str(real.ws)
    r = sub("--host", "--profile", "build", "-c", "longbridge news FIG.US 2>&1 | head -30", cwd=ws)
    assert r.returncode == 75 and r.stdout == b"", r.stderr
    aid = approval_id(r.stderr)
    assert calls(real) == []
    a = approve_cli(aid, "--scope", "session")
    assert a.returncode == 0, a.stderr
    assert a.stdout == b"longbridge argv: news FIG.US\nlongbridge stderr line\n"
    assert approve_cli(aid).returncode == 2                       # double approve
    r2 = sub("--host", "--profile", "build", "-c", "longbridge quote AAPL.US | tail -5", cwd=ws)
    assert (r2.returncode, r2.stdout) == (0, b"longbridge argv: quote AAPL.US\n"), r2.stderr
    # path-qualified programs are different capabilities
    for cmd in ("./longbridge quote AAPL.US", "/tmp/x/longbridge quote AAPL.US"):
        assert sub("--host", "--profile", "build", "-c", cmd, cwd=ws).returncode == 75
    # another session is not covered
    other = sub("--host", "--profile", "build", "-c", "longbridge quote AAPL.US", cwd=ws,
                RINGFENCE_SESSION="other")
    assert other.returncode == 75
    assert calls(real) == ["news FIG.US", "quote AAPL.US"]


@needs_stack
def test_e2e_one_time_never_granted_and_strict_denies(real):
    ws = str(real.ws)
    gr.add_grants(Ledger(), ["longbridge"], "always", "")
    r = sub("--host", "--profile", "build", "-c", "longbridge news $(echo FIG.US)", cwd=ws)
    assert r.returncode == 75
    aid = approval_id(r.stderr)
    assert approve_cli(aid, "--scope", "always").returncode == 2
    s = sub("--host", "--profile", "strict", "-c", "longbridge quote AAPL.US", cwd=ws)
    assert s.returncode == 77 and b"denied" in s.stderr
    assert calls(real) == []
    with Ledger() as led:
        states = sorted(x.state for x in led.list_runs())
    assert states == ["denied", "waiting_for_approval"]


@needs_stack
@pytest.mark.sandbox
def test_e2e_sandbox_ask_rule_approve_runs_in_the_sandbox(real, tmp_path):
    """`git push` under Build asks; approval pushes from inside the sandbox."""
    ws = real.ws
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@e", "-c", "init.defaultBranch=main"]
    subprocess.run([*git, "init", "-q", "--bare", str(ws / "remote.git")], check=True)
    subprocess.run([*git, "init", "-q", str(ws / "repo")], check=True)
    (ws / "repo" / "f").write_text("x")
    subprocess.run([*git, "-C", str(ws / "repo"), "add", "f"], check=True)
    subprocess.run([*git, "-C", str(ws / "repo"), "commit", "-qm", "c1"], check=True)
    subprocess.run([*git, "-C", str(ws / "repo"), "remote", "add", "origin",
                    str(ws / "remote.git")], check=True)
    r = sub("--profile", "build", "--workspace", str(ws), "-c",
            "cd repo && git push -q origin main", cwd=str(ws))
    assert r.returncode == 75, r.stderr
    assert b"sandbox" in r.stderr
    head = subprocess.run(["git", "-C", str(ws / "remote.git"), "rev-parse", "--verify", "-q",
                           "main"], capture_output=True)
    assert head.returncode != 0                                   # nothing pushed yet
    a = approve_cli(approval_id(r.stderr))
    assert a.returncode == 0, a.stderr
    head = subprocess.run(["git", "-C", str(ws / "remote.git"), "log", "--format=%s", "main"],
                          capture_output=True)
    assert head.stdout == b"c1\n"                                 # host-side evidence


def test_main_run_resolves_the_profile_and_governs(env, monkeypatch):
    monkeypatch.setenv("XDG_CONFIG_HOME", str(env.tmp / "cfg"))
    monkeypatch.delenv("RINGFENCE_PROFILE", raising=False)
    monkeypatch.chdir(env.ws)
    s = G.Streams(io.BytesIO(), io.BytesIO())
    code = run_cli.main_run(["--host", "--session", "m", "--profile", "strict", "-c",
                       "longbridge quote AAPL.US | tail -5"], deps=env.deps,
                      ledger=env.ledger, streams=s)
    assert code == 77 and b"denied by profile 'strict'" in s.err.getvalue()
    code = run_cli.main_run(["--host", "--session", "m", "-c", "longbridge quote AAPL.US | tail -5"],
                      deps=env.deps, ledger=env.ledger, streams=s)
    assert code == 75
    [rec, _] = env.ledger.list_runs()
    assert (rec.profile, rec.session, rec.workspace) == ("build", "m", str(env.ws))
    env.profiles["host"] = Profile(name="host", source="builtin:host", sandbox=False)
    code = run_cli.main_run(["--sandbox", "off", "--", "longbridge", "quote", "AAPL.US"],
                      deps=env.deps, ledger=env.ledger, streams=s)
    assert code == 0 and calls(env) == ["quote AAPL.US"]
    assert run_cli.main_run(["--help"], deps=env.deps, ledger=env.ledger, streams=s) == 0
    assert b"ringfence run" in s.out.getvalue()
    with pytest.raises(UsageError, match="not a directory"):
        run_cli.main_run(["--workspace", str(env.tmp / "nope"), "--", "ls"], deps=env.deps,
                   ledger=env.ledger, streams=s)


@needs_stack
@pytest.mark.sandbox
def test_e2e_host_assisted_escalates_a_read_only_failure(real):
    """A write outside the workspace fails in the sandbox, becomes a linked host request,
    and only a person's approval makes it happen on the host."""
    import shutil
    import tempfile

    outside = Path(tempfile.mkdtemp(prefix="rf-h4-", dir="/var/tmp"))
    try:
        target = outside / "made-on-host"
        r = sub("--profile", "host-assisted", "--workspace", str(real.ws), "-c",
                f"touch {target}", cwd=str(real.ws))
        assert r.returncode == 75, r.stderr
        assert b"Read-only file system" in r.stderr and b"escalating" in r.stderr
        assert not target.exists()                                # host side: untouched
        with Ledger() as led:
            host_run, sandbox_run = led.list_runs(limit=2)
            assert (sandbox_run.kind, sandbox_run.state) == ("sandbox", "failed")
            assert (host_run.kind, host_run.state, host_run.parent_id) == (
                "host", "waiting_for_approval", sandbox_run.id)
        a = approve_cli(approval_id(r.stderr))
        assert a.returncode == 0, a.stderr
        assert target.is_file()
        with Ledger() as led:
            assert led.get_run(host_run.id).state == "completed"
    finally:
        shutil.rmtree(outside, ignore_errors=True)


def test_interrupted_sandbox_run_is_recorded_aborted(env):
    env.runner.raises = KeyboardInterrupt()
    with pytest.raises(KeyboardInterrupt):
        run(env, "make", host=False)
    [rec] = env.ledger.list_runs()
    assert [e["state"] for e in rec.events] == ["running", "aborted"]
    assert "KeyboardInterrupt" in rec.events[-1]["note"]


@needs_stack
def test_run_path_imports_no_typer_rich_or_lark(real):
    code = textwrap.dedent("""
        import io, json, sys
        from ringfence.fast.run import main_run
        code = main_run(["--host", "-c", "echo hot path"])
        bad = sorted(m for m in sys.modules
                     if m.split(".")[0] in ("typer", "rich", "lark", "bashlex", "click"))
        print(json.dumps([code, bad]), file=sys.stderr)
    """)
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, timeout=60,
                       env=dict(os.environ, PYTHONPATH=str(ROOT)), cwd=str(real.ws))
    assert r.stdout == b"hot path\n"
    assert json.loads(r.stderr.decode().strip().splitlines()[-1]) == [0, []]


@needs_stack
def test_sigkilled_run_reads_aborted_and_is_recovered(real):
    import signal

    environ = dict(os.environ, PYTHONPATH=str(ROOT))
    proc = subprocess.Popen([sys.executable, "-c", RUN, "--host", "-c", "echo started; sleep 60"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=environ,
                            cwd=str(real.ws), start_new_session=True)
    assert proc.stdout.readline() == b"started\n"
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait(timeout=30)
    with Ledger() as led:                     # opening recovers
        [rec] = led.list_runs()
        assert rec.state == "aborted"
        assert [e["state"] for e in rec.events] == ["running", "aborted"]
        assert led.conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
