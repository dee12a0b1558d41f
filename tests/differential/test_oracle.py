"""The bash oracle, and the classifier compared against it (issue 6).

Three parts: the oracle itself (really runs bwrap: marked `sandbox`), the
comparison rules (pure), and the differential run over the corpora. The run
takes a deterministic sample in CI; `RINGFENCE_DIFFERENTIAL=full` (`make
differential`) takes every command of `corpus/` and `../shared/corpus/`.
"""

from __future__ import annotations

import json
import os
import tempfile
import time
from collections import Counter
from pathlib import Path

import pytest

from ringfence.classifier.verdict import Capability, Decoration, Verdict
from tests.conftest import NO_BWRAP, ROOT, have_bwrap, read_shared_corpus

from .compare import Outcome, compare, explains, format_problem, words_match
from ringfence.rfcore.errors import SandboxError

from .oracle import OracleResult, run_oracle, sandbox_mode, survivors_of

FULL = os.environ.get("RINGFENCE_DIFFERENTIAL") == "full"
needs_bwrap = pytest.mark.skipif(not have_bwrap(), reason=NO_BWRAP)

# Disagreements already reported to the classifier's owner, awaiting a fix
# (numbers refer to the findings list in docs/differential.md).
# The differential test asserts the disagreeing set equals this list (within
# the sample), so a fix forces the entry out and a new bug fails the test.
# Each is also in /work/briefs/h5-findings.md with both sides.
KNOWN_DISAGREEMENTS: dict[str, str] = {
    # (empty: findings 6-8 are fixed and their commands are in corpus/oracle-regressions.jsonl)
}
# Commands the differential always includes beside the corpora: cases found by
# differential fuzzing (finding 8, fixed: now also in corpus/oracle-regressions.jsonl).
PROBES = ["make x$'\\\\'\\'", "make $'\\\\'\\''", "make x$'\\\\' y"]


# --- the oracle itself -------------------------------------------------------

@pytest.fixture(scope="module")
def basics() -> dict[str, OracleResult]:
    if not have_bwrap():
        pytest.skip(NO_BWRAP)
    cmds = [
        "ls -la | head -n 5",
        "rm 'a b' \"c\"d e\\ f $'g\\th' ''",
        "l\\ongbridge quote AAPL",
        "cd /tmp && git -C x push || echo failed",
        "for i in 1 2; do rm $i; done",
        "if [ -f x ]; then cp a b; else mv a b; fi",
        "timeout 5 nice -n 3 rm x",
        "printf '%s' x; eval 'rm y'; read z; kill 1; return 3; exit 4",
        "ls (",
        "rm ok-after-syntax-error",
        "a; }; b; { c",
        "while true; do x; done",
        "echo $(date) `whoami`",
        "x=1 y=2; FOO=bar env BAZ=1 make -j$x",
        "/bin/rm -rf /",
        "grep foo < missing.txt",
        "nul\0byte",
        "yes $'a\\nR\\n' | tr x $'\\n'",
    ]
    return dict(zip(cmds, run_oracle(cmds)))


@pytest.mark.sandbox
def test_oracle_records_argv_after_quote_removal(basics):
    assert basics["rm 'a b' \"c\"d e\\ f $'g\\th' ''"].argvs == (
        ("rm", "a b", "cd", "e f", "g\th", ""),)
    assert basics["l\\ongbridge quote AAPL"].argvs == (("longbridge", "quote", "AAPL"),)
    assert basics["x=1 y=2; FOO=bar env BAZ=1 make -j$x"].argvs == (
        ("env", "BAZ=1", "make", "-j1"),)
    assert sorted(basics["ls -la | head -n 5"].argvs) == [("head", "-n", "5"), ("ls", "-la")]
    # Newlines inside arguments of concurrent pipeline stages stay inside them.
    assert sorted(basics["yes $'a\\nR\\n' | tr x $'\\n'"].argvs) == [
        ("tr", "x", "\n"), ("yes", "a\nR\n")]


@pytest.mark.sandbox
def test_oracle_sees_both_branches_and_every_iteration(basics):
    assert basics["cd /tmp && git -C x push || echo failed"].argvs == (
        ("cd", "/tmp"), ("git", "-C", "x", "push"), ("echo", "failed"))
    assert basics["if [ -f x ]; then cp a b; else mv a b; fi"].argvs == (
        ("[", "-f", "x", "]"), ("cp", "a", "b"), ("mv", "a", "b"))
    assert basics["for i in 1 2; do rm $i; done"].argvs == (("rm", "1"), ("rm", "2"))
    assert basics["timeout 5 nice -n 3 rm x"].argvs == (
        ("timeout", "5", "nice", "-n", "3", "rm", "x"),)


@pytest.mark.sandbox
def test_oracle_builtins_are_recorded_not_run(basics):
    # eval, exit and return would change control flow if they ran: they are
    # recorded, and everything after them is still reached.
    r = basics["printf '%s' x; eval 'rm y'; read z; kill 1; return 3; exit 4"]
    assert r.status == "ok"
    assert r.argvs == (("printf", "%s", "x"), ("eval", "rm y"), ("read", "z"), ("kill", "1"),
                       ("return", "3"), ("exit", "4"))
    assert basics["echo $(date) `whoami`"].argvs == (("date",), ("whoami",), ("echo",))


@pytest.mark.sandbox
def test_oracle_isolates_bad_commands(basics):
    assert basics["ls ("].status == "parse_error"
    assert basics["rm ok-after-syntax-error"].argvs == (("rm", "ok-after-syntax-error"),)
    # A stray `}` would close the parse-check function body and run the rest;
    # the harness notices the record made while parsing and discards it.
    assert basics["a; }; b; { c"].status == "escaped"
    assert basics["nul\0byte"].status == "unencodable"
    loop = basics["while true; do x; done"]
    assert loop.status == "capped"
    assert set(loop.argvs) == {("true",), ("x",)}


@pytest.mark.sandbox
def test_oracle_runs_nothing_real(basics):
    # The sandbox root holds only bash: a path-qualified program is not found,
    # and bash says so (the comparison then treats the command as partial).
    assert basics["/bin/rm -rf /"].argvs == ()
    assert "/bin/rm: No such file or directory" in basics["/bin/rm -rf /"].stderr
    assert basics["grep foo < missing.txt"].argvs == ()
    assert "missing.txt" in basics["grep foo < missing.txt"].stderr


@pytest.mark.sandbox
@needs_bwrap
def test_oracle_cannot_touch_the_host():
    with tempfile.TemporaryDirectory() as tmp:
        victim = Path(tmp) / "victim"
        victim.write_text("original\n")
        os.chmod(tmp, 0o777)
        os.chmod(victim, 0o666)
        cmds = [f"echo pwned > {victim}", f"/bin/rm -f {victim}", f"cd {tmp} && rm victim",
                f"exec 3>{victim}; printf pwned >&3"]
        results = run_oracle(cmds)
        assert victim.read_text() == "original\n"
        assert [r.status for r in results] == ["ok"] * 4


@pytest.mark.sandbox
@needs_bwrap
def test_pathological_batches_end_within_the_limits():
    # Each spawns a process per level or a fork bomb: the pids limit, the
    # per-command timeout and the kill of the sandbox's pid namespace contain
    # them, and the commands after them in the same batch still get answers.
    deep = "echo " + "$(" * 2000 + "x" + ")" * 2000
    pipes = " | ".join(["cat"] * 3000)
    bomb = "f() { f | f & }; f"
    handler_bomb = "command_not_found_handle() { y | y; }; y"
    # run_oracle raises SandboxError if any process of a batch outlives it.
    results = run_oracle([deep, "rm a", pipes, "rm b", bomb, "rm c", handler_bomb, "rm d"],
                         passes=(1,), command_timeout=1)
    # Under bwrap (root's stop-gap) RLIMIT_NPROC makes forks fail and the command
    # times out ("killed"). Under `ringfence run` a bomb that reaches the pids limit
    # within its second ends the whole run, and is "limit" when it does so alone
    # (the test below); on a slow machine it may time out first, as under bwrap.
    stopped = ("killed", "limit") if sandbox_mode() == "ringfence" else ("killed",)
    assert results[0].status in stopped           # bash overflows its stack
    # 3,000 stages: either the record cap or the per-command timeout (bash
    # waiting to retry fork at the pids limit) ends it, whichever comes first.
    assert results[2].status in ("capped", *stopped)
    assert results[4].status in stopped           # the fork bomb
    assert results[6].status in stopped
    assert [r.argvs for r in results[1::2]] == [(("rm", "a"),), (("rm", "b"),), (("rm", "c"),),
                                                (("rm", "d"),)]


@pytest.mark.sandbox
@needs_bwrap
@pytest.mark.skipif(os.geteuid() == 0 and os.environ.get("RINGFENCE_ORACLE_SANDBOX") != "ringfence",
                    reason="only `ringfence run` ends a run on a limit (the unprivileged half)")
def test_a_command_that_alone_ends_the_run_on_a_limit_is_limit():
    # The batch ends at the bomb (RF624); the bomb is run again alone, ends its run
    # again, and is "limit" (not compared); the commands around it get their answers,
    # in both passes. Its 20 s are ample to reach the pids limit.
    results = run_oracle(["rm a", "f() { f | f & }; f", "rm b", "g() { g | g & }; g; rm c"],
                         command_timeout=20)
    assert [r.status for r in results] == ["ok", "limit", "ok", "limit"]
    assert [results[0].argvs, results[2].argvs] == [(("rm", "a"),), (("rm", "b"),)]


def test_sandbox_mode_follows_privilege(monkeypatch):
    # Unprivileged runs go through `ringfence run`; root uses the stop-gap,
    # because the pids limit (RLIMIT_NPROC) would not bind a root sandbox.
    monkeypatch.delenv("RINGFENCE_ORACLE_SANDBOX", raising=False)
    assert sandbox_mode() == ("bwrap" if os.geteuid() == 0 else "ringfence")
    monkeypatch.setenv("RINGFENCE_ORACLE_SANDBOX", "nsjail")
    with pytest.raises(SandboxError, match="use 'ringfence' or 'bwrap'"):
        sandbox_mode()


@pytest.mark.sandbox
@needs_bwrap
def test_a_broken_sandbox_fails_closed(monkeypatch, tmp_path):
    # A driver that dies before announcing itself: no command may be reported
    # as answered, the harness raises.
    import tests.differential.oracle as oracle_mod
    broken = tmp_path / "broken.bash"
    broken.write_text("exit 3\n")
    monkeypatch.setattr(oracle_mod, "DRIVER", broken)
    with pytest.raises(SandboxError, match="sandbox failed"):
        run_oracle(["ls"], passes=(0,))
    if os.geteuid() == 0:
        monkeypatch.setattr(oracle_mod, "UNPRIVILEGED_USER", "rf-no-such-user")
        with pytest.raises(SandboxError, match="rf-no-such-user"):
            run_oracle(["ls"], passes=(0,))


def test_driver_refuses_to_run_outside_a_pid_namespace(tmp_path):
    # Its cleanup is kill(-1): on the host that would hit every process of the
    # user. Run straight on the host, the prelude must stop before anything.
    import subprocess
    from .oracle import DRIVER
    (tmp_path / "cwd").mkdir()
    (tmp_path / "records").touch()
    done = subprocess.run(["bash", "--norc", "--noprofile", "-c",
                           f"__rf_work={tmp_path}; . {DRIVER}; echo reached"],
                          capture_output=True, text=True, env={})
    assert (done.returncode, done.stdout) == (125, "")
    assert (tmp_path / "records").read_bytes() == b""


def test_survivor_scan_finds_a_live_process():
    import subprocess
    import sys
    tag = f"rf-survivor-probe-{os.getpid()}"
    proc = subprocess.Popen([sys.executable, "-c", "import sys; sys.stdin.read()", tag],
                            stdin=subprocess.PIPE)
    try:
        # Started means its command line is visible; wait for that, not for time.
        for _ in range(1000):
            if survivors_of(tag):
                break
            time.sleep(0.005)
        assert survivors_of(tag) == [proc.pid]
    finally:
        proc.kill()
        proc.wait()
    assert survivors_of(tag) == []


# --- the comparison rules (pure) --------------------------------------------

def _verdict(cmd: str, cls: str, *argvs: tuple[str, ...], decorations: tuple[str, ...] = ()):
    caps = tuple(Capability(key=a[0], program=a[0], argv=a, span=(0, len(cmd))) for a in argvs)
    decs = tuple(Decoration(code="RF300", text=t, span=(0, 1)) for t in decorations)
    return Verdict(command=cmd, verdict=cls, capabilities=caps, decorations=decs)


def test_words_match_is_exact_for_static_words():
    assert words_match(("rm", "a b"), ("rm", "a b"))
    assert not words_match(("rm", "a", "b"), ("rm", "a b"))
    assert not words_match(("rm",), ("rm", "x"))
    assert words_match(("rm", "$x"), ("rm",))               # expands to nothing
    assert words_match(("rm", "*.txt", "y"), ("rm", "a.txt", "b.txt", "y"))
    assert not words_match(("rm", "$x", "y"), ("rm", "a", "z"))


def test_explains_looks_inside_wrappers_only():
    assert explains(("rm", "x"), ("timeout", "5", "rm", "x"))
    assert explains(("rm", "{}"), ("find", ".", "-exec", "rm", "{}", ";"))
    assert not explains(("rm", "x"), ("sudo", "rm", "x"))
    assert not explains(("rm",), ("timeout", "5", "rm", "x"))


def test_compare_flags_missed_and_phantom_invocations():
    ok = compare(_verdict("cd a && make | head", "capability", ("make",), decorations=("| head",)),
                 OracleResult("cd a && make | head", "ok", (("cd", "a"), ("make",), ("head",))))
    assert ok.compared and ok.problems == ()
    # The classifier dropped a real program as if it were decoration.
    missed = compare(_verdict("longbridge | grep x", "helper"),
                     OracleResult("longbridge | grep x", "ok", (("longbridge",), ("grep", "x"))))
    assert [(p.kind, p.oracle) for p in missed.problems] == [
        ("missed", ("longbridge",)), ("missed", ("grep", "x"))]
    # Quote removal gone wrong: the classifier's key is not what bash runs.
    phantom = compare(_verdict("l\\s", "capability", ("l\\s",)),
                      OracleResult("l\\s", "ok", (("ls",),)))
    assert [p.kind for p in phantom.problems] == ["missed", "phantom"]
    assert phantom.problems[1].classifier == ("l\\s",)


def test_compare_checks_the_key_against_the_argv():
    cmd = "git -C x push"
    good = Capability(key="git push", program="git", argv=("git", "-C", "x", "push"), span=(0, 13))
    bad = Capability(key="git status", program="git", argv=("git", "-C", "x", "push"), span=(0, 13))
    seen = OracleResult(cmd, "ok", (("git", "-C", "x", "push"),))
    assert compare(Verdict(cmd, "capability", (good,)), seen).problems == ()
    assert [p.kind for p in compare(Verdict(cmd, "capability", (bad,)), seen).problems] == ["key"]


def test_compare_scope():
    syntax = compare(_verdict("ls (", "capability", ("ls",)),
                     OracleResult("ls (", "parse_error"))
    assert [p.kind for p in syntax.problems] == ["syntax"]
    assert not compare(_verdict("eval x", "one_time"), OracleResult("eval x", "ok")).compared
    assert compare(_verdict("ls", "capability", ("ls",)),
                   OracleResult("ls", "killed")).reason == "oracle killed"
    # A command that alone ended its `ringfence run` on a limit: partial, not compared.
    limit = compare(_verdict("ls", "capability", ("ls",)), OracleResult("ls", "limit", (("ls",),)))
    assert not limit.compared and limit.reason == "oracle limit"
    # `case` branches on data: an untaken branch is unverified, not a phantom.
    case = compare(_verdict("case $x in a) make;; esac", "capability", ("make",)),
                   OracleResult("case $x in a) make;; esac", "ok", ()))
    assert case.problems == () and case.unverified == 1
    partial = compare(_verdict("./x < in", "capability", ("./x",)),
                      OracleResult("./x < in", "ok", (), "in: No such file or directory"))
    assert partial.compared and partial.problems == () and partial.unverified == 1


# --- the differential run ----------------------------------------------------

def _project_corpus() -> list[str]:
    cmds = []
    for path in sorted((ROOT / "corpus").glob("*.jsonl")):
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.strip():
                cmds.append(json.loads(line)["cmd"])
    return cmds


def _sample(cmds: list[str], size: int) -> list[str]:
    """Deterministic: evenly spaced, so the sample spans the whole file."""
    if FULL or len(cmds) <= size:
        return cmds
    step = len(cmds) / size
    return [cmds[int(i * step)] for i in range(size)]


def _classify_or_skip():
    # A plain import: a classifier that fails to import is a failure, not a skip.
    from ringfence.classifier.engine import classify

    return classify


@pytest.mark.sandbox
@needs_bwrap
def test_differential_against_bash(capsys):
    classify = _classify_or_skip()
    cmds = (PROBES + _project_corpus() + _sample(read_shared_corpus("nl2bash.cm"), 250)
            + _sample(read_shared_corpus("agent-synthetic.jsonl"), 150))
    cmds = list(dict.fromkeys(cmds))
    outcomes: list[Outcome] = [compare(classify(c), r) for c, r in zip(cmds, run_oracle(cmds))]
    compared = [o for o in outcomes if o.compared]
    bad = [o for o in compared if o.problems]
    skipped = Counter(o.reason for o in outcomes if not o.compared)
    with capsys.disabled():
        print(f"\ndifferential ({'full' if FULL else 'sample'}): {len(outcomes)} commands, "
              f"{len(compared)} compared, {len(bad)} disagreed, "
              f"{sum(o.unverified for o in compared)} capabilities unverifiable; "
              f"not compared: {dict(skipped)}")
        for o in bad:
            print(format_problem(o))
    assert {o.command for o in bad} == set(KNOWN_DISAGREEMENTS) & set(cmds), \
        "\n".join(format_problem(o) for o in bad if o.command not in KNOWN_DISAGREEMENTS)
