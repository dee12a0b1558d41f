"""The governor is a small state machine (issue 14, layering): every state's
transition is driven here through ``govern()`` with the fake stages of
test_governor.py, and each case asserts the exact sequence of states, the outcome
and the ledger row it left.
"""

from __future__ import annotations

import io

import pytest

from ringfence.session import governor as G
from ringfence.session.governor import State as S
from ringfence.profiles.model import CommandRule, Profile
from tests.ringfence.test_governor import ASSIST, BUILD, STRICT, calls, env  # noqa: F401

OFF = Profile(name="host", source="builtin:host", sandbox=False,
              rules=(CommandRule("deny", "git push"),))
NO_PUSH = Profile(name="no-push", source="builtin:build", digest="d-np", host="ask",
                  rules=(CommandRule("deny", "git push"),))

# (case, command, host?, profile, runner (exit, stderr), states, (state, exit), ledger kind)
CASES = [
    ("host, not granted", "longbridge quote AAPL.US", True, BUILD, None,
     [S.CLASSIFIED, S.HOST_REQUEST, S.PENDING, S.RECORDED], ("waiting_for_approval", 75),
     "host"),
    ("host, one-time", "longbridge news $(cat t)", True, BUILD, None,
     [S.CLASSIFIED, S.HOST_REQUEST, S.PENDING, S.RECORDED], ("waiting_for_approval", 75),
     "host"),
    ("host, helper", "echo hello", True, BUILD, None,
     [S.CLASSIFIED, S.HOST_REQUEST, S.HOST_RUN, S.RECORDED], ("completed", 0), "host"),
    ("host, strict", "longbridge quote AAPL.US", True, STRICT, None,
     [S.CLASSIFIED, S.HOST_REQUEST, S.REFUSED, S.RECORDED], ("denied", 77), "host"),
    ("host, deny rule", "git push origin main", True, NO_PUSH, None,
     [S.CLASSIFIED, S.HOST_REQUEST, S.REFUSED, S.RECORDED], ("denied", 77), "host"),
    ("sandbox, allowed", "make", False, BUILD, (0, ""),
     [S.CLASSIFIED, S.SANDBOX_REQUEST, S.SANDBOX_RUN, S.RECORDED], ("completed", 0),
     "sandbox"),
    ("sandbox, ask rule", "git push origin main", False, BUILD, None,
     [S.CLASSIFIED, S.SANDBOX_REQUEST, S.PENDING, S.RECORDED], ("waiting_for_approval", 75),
     "sandbox"),
    ("sandbox, deny rule", "git push origin main", False, STRICT, None,
     [S.CLASSIFIED, S.SANDBOX_REQUEST, S.REFUSED, S.RECORDED], ("denied", 77), "sandbox"),
    ("sandbox, own failure under Host-Assisted", "make", False, ASSIST,
     (2, "make: *** No rule to make target 'all'.  Stop.\n"),
     [S.CLASSIFIED, S.SANDBOX_REQUEST, S.SANDBOX_RUN, S.RECORDED], ("failed", 2), "sandbox"),
    ("sandbox, boundary failure under Host-Assisted", "touch /ro/x", False, ASSIST,
     (1, "touch: cannot touch '/ro/x': Read-only file system\n"),
     [S.CLASSIFIED, S.SANDBOX_REQUEST, S.SANDBOX_RUN, S.ESCALATED, S.HOST_REQUEST,
      S.PENDING, S.RECORDED], ("waiting_for_approval", 75), "sandbox"),
    ("sandbox off", "longbridge quote AAPL.US", False, OFF, None,
     [S.CLASSIFIED, S.UNSANDBOXED, S.HOST_RUN, S.RECORDED], ("completed", 0), "host"),
    ("sandbox off, deny rule", "git push origin main", False, OFF, None,
     [S.CLASSIFIED, S.UNSANDBOXED, S.REFUSED, S.RECORDED], ("denied", 77), "host"),
]


def drive(env, cmd, host, profile):
    trace: list = []
    streams = G.Streams(io.BytesIO(), io.BytesIO())
    out = G.govern(G.Request(profile=profile, command=cmd, workspace=str(env.ws),
                             cwd=str(env.ws), host=host, session="s1"),
                   ledger=env.ledger, deps=env.deps, streams=streams, trace=trace)
    return out, trace


@pytest.mark.parametrize("case,cmd,host,profile,runner,states,outcome,kind", CASES,
                         ids=[c[0] for c in CASES])
def test_each_request_walks_its_states(env, case, cmd, host, profile, runner, states,
                                       outcome, kind):
    if runner is not None:
        env.runner.exit_code, env.runner.stderr_tail = runner
    out, trace = drive(env, cmd, host, profile)
    assert trace == states
    assert (out.state, out.exit_code) == outcome
    rec = env.ledger.get_run(out.run_id)
    assert rec.kind == kind
    # The sandbox ran exactly when the machine went through SANDBOX_RUN.
    assert len(env.runner.calls) == (S.SANDBOX_RUN in trace)
    if S.ESCALATED in trace:
        child = env.ledger.get_run(out.escalated_run_id)
        assert (rec.state, child.kind, child.parent_id) == ("failed", "host", rec.id)
        assert child.state == out.state
    else:
        assert out.escalated_run_id is None and rec.state == out.state


def test_the_cases_cover_every_state_and_every_transition():
    seen = {s for c in CASES for s in c[5]}
    assert seen == set(S)
    # Every state but the last has one transition function, and nothing else does.
    assert set(G.STEPS) == set(S) - {S.RECORDED}
    edges = {(a, b) for c in CASES for a, b in zip(c[5], c[5][1:])}
    assert edges == {
        (S.CLASSIFIED, S.UNSANDBOXED), (S.CLASSIFIED, S.HOST_REQUEST),
        (S.CLASSIFIED, S.SANDBOX_REQUEST),
        (S.UNSANDBOXED, S.REFUSED), (S.UNSANDBOXED, S.HOST_RUN),
        (S.HOST_REQUEST, S.REFUSED), (S.HOST_REQUEST, S.HOST_RUN),
        (S.HOST_REQUEST, S.PENDING),
        (S.SANDBOX_REQUEST, S.REFUSED), (S.SANDBOX_REQUEST, S.PENDING),
        (S.SANDBOX_REQUEST, S.SANDBOX_RUN),
        (S.SANDBOX_RUN, S.RECORDED), (S.SANDBOX_RUN, S.ESCALATED),
        (S.ESCALATED, S.HOST_REQUEST),
        (S.REFUSED, S.RECORDED), (S.PENDING, S.RECORDED), (S.HOST_RUN, S.RECORDED)}


def test_a_granted_host_capability_runs_on_the_host(env):
    # HOST_REQUEST -> HOST_RUN through the gate's allow (a session grant), not a helper.
    out, _ = drive(env, "longbridge quote AAPL.US", True, BUILD)
    code = G.approve(out.approval_id, scope="session", session="s1", ledger=env.ledger,
                     deps=env.deps, streams=G.Streams(io.BytesIO(), io.BytesIO()))
    assert code == 0 and calls(env) == ["quote AAPL.US"]
    out, trace = drive(env, "longbridge quote AAPL.US", True, BUILD)
    assert trace == [S.CLASSIFIED, S.HOST_REQUEST, S.HOST_RUN, S.RECORDED]
    assert (out.state, out.exit_code) == ("completed", 0)
    assert calls(env) == ["quote AAPL.US", "quote AAPL.US"]


def test_the_public_api_is_still_the_governors():
    # What other modules and docs import from ringfence.session.governor (some lazily).
    from ringfence.session.governor import (
        Deps,
        Outcome,
        Request,
        Streams,
        approve,
        default_deps,
        deny,
        exec_host,
        govern,
        looks_like_boundary,
        safe,
    )
    assert set(G.__all__) <= set(dir(G)) | set(G._LAZY)
    with pytest.raises(AttributeError):
        G.no_such_name
