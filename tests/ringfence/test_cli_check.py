"""The real CLI, as a subprocess: check (human, --json, --jsonl), explain, rule, rules."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.conftest import ROOT
from ringfence.rfcore.rules import REGISTRY
from ringfence.views import render, render_rules
from ringfence.fast import check as fast

def needs_engine(test):
    """Marks tests that use the real classifier (they fail, never skip, without it)."""
    return test
MISSION = "longbridge news FIG.US 2>&1 | head -30"
CONTRACT_KEYS = ["command", "verdict", "capabilities", "decorations", "findings", "parser"]


def rf(*args: str, stdin: bytes | None = None) -> subprocess.CompletedProcess:
    env = dict(os.environ, COLUMNS="200", NO_COLOR="1", PYTHONIOENCODING="utf-8")
    env.pop("RINGFENCE_DEBUG", None)
    return subprocess.run([sys.executable, "-m", "ringfence", *args], input=stdin,
                          capture_output=True, cwd=ROOT, env=env, timeout=120)


def text(proc: subprocess.CompletedProcess) -> tuple[str, str]:
    return proc.stdout.decode("utf-8"), proc.stderr.decode("utf-8")


def assert_clean_failure(proc, code: int, message: str) -> None:
    out, err = text(proc)
    assert proc.returncode == code, (proc.returncode, out, err)
    assert message in out + err
    assert "Traceback" not in out + err


# --- help -------------------------------------------------------------------

@pytest.mark.parametrize("args", [["check"], ["explain"], ["rule"], ["rules"],
                                  ["check", "--json"], ["check", "--jsonl"], []])
def test_help_of_every_command_has_an_example(args):
    proc = rf(*args, "--help")
    out, err = text(proc)
    assert proc.returncode == 0, err
    assert "example" in out.lower()
    assert "ringfence " in out


# --- bad usage and bad input: exit 2, a message, never a traceback ------------

@pytest.mark.parametrize("args,message", [
    (["check"], "missing the command to check"),
    (["check", "--json"], "--json needs the command to check"),
    (["check", "--jsonl", "ls"], "--jsonl reads commands from stdin and takes no COMMAND"),
    (["check", "--json", "--jsonl", "ls"], "not allowed with argument --json"),
    (["check", "--json", "--bogus", "ls"], "unrecognized arguments: --bogus"),
    (["rule", "RF999"], "unknown rule code 'RF999'"),
    (["rule", "not-a-rule"], "unknown rule code 'not-a-rule'"),
    (["explain"], "missing the command to explain"),
])
def test_bad_usage_exits_2_with_a_message(args, message):
    assert_clean_failure(rf(*args), 2, message)


def test_jsonl_bad_lines_get_error_objects_in_place_and_exit_2():
    stdin = b'42\nnot json\n\xff\xfe\n["a"]\n\n{"cmd": "ls"}\r\nnull'
    proc = rf("check", "--jsonl", stdin=stdin)
    out, err = text(proc)
    assert proc.returncode == 2, err
    assert "Traceback" not in err
    assert "7 bad input line(s)" in err
    objs = [json.loads(line) for line in out.splitlines()]
    assert [o["line"] for o in objs] == [1, 2, 3, 4, 5, 6, 7]
    assert [o["error"] for o in objs] == [
        "line is a JSON int, expected a JSON string",
        "line is not JSON: Expecting value: line 1 column 1 (char 0)",
        "line is not valid UTF-8 (byte 0)",
        "line is a JSON list, expected a JSON string",
        "line is empty, expected a JSON string",
        "line is a JSON dict, expected a JSON string",
        "line is a JSON NoneType, expected a JSON string",
    ]


@pytest.mark.parametrize("args", [["check", "--json"], ["check"]])
def test_unknown_profile_is_a_usage_error(args):
    assert_clean_failure(rf(*args, "--profile", "no-such-profile", "ls"), 2,
                         'unknown profile "no-such-profile"')


# --- rule / rules ------------------------------------------------------------

def test_rules_json_is_the_registry():
    proc = rf("rules", "--json")
    assert proc.returncode == 0
    got = json.loads(proc.stdout)
    assert [r["code"] for r in got] == list(REGISTRY)
    for row in got:
        rule = REGISTRY[row["code"]]
        assert (row["name"], row["family"], row["summary"], row["status"], row["bad"],
                row["good"]) == (rule.name, rule.family, rule.summary, rule.status,
                                 rule.bad, rule.good)


def test_rules_table_lists_every_code():
    out, _ = text(rf("rules"))
    assert "ringfence rules" in out
    for code, rule in REGISTRY.items():
        assert code in out and rule.name in out


def _first_of_each_family() -> list[str]:
    firsts: dict[str, str] = {}
    for code, rule in REGISTRY.items():
        firsts.setdefault(rule.family, code)
    return list(firsts.values())


# Every rule's rendering is checked in process (test_render.py); the real CLI is
# exercised on one rule per family, in each spelling, to keep the suite fast.
@pytest.mark.parametrize("code", _first_of_each_family() or
                         [pytest.param("-", marks=pytest.mark.skip("registry is empty"))])
def test_rule_prints_ruff_sections(code):
    rule = REGISTRY[code]
    for spelling in (code, code.lower(), rule.name):
        proc = rf("rule", spelling)
        out, err = text(proc)
        assert proc.returncode == 0, err
        assert out.splitlines()[0].startswith(f"{code} {rule.name}")
        positions = [out.index(s) for s in render_rules.SECTIONS]
        assert positions == sorted(positions)
        for example in (rule.bad, rule.good):
            shown = render.visible(render_rules.shorten(example), keep_newlines=True)
            assert shown.splitlines()[0] in out


# --- the fast path's JSONL framing (unit level, fake classifier) --------------

def _fake_classify(command: str):
    from ringfence.classifier.verdict import Verdict

    return Verdict(command, "helper")


def _stream(data: bytes) -> tuple[list[dict], int]:
    chunks: list[bytes] = []
    with tempfile.TemporaryFile() as f:     # a pipe would block beyond 64 KiB
        f.write(data)
        f.seek(0)
        bad = fast.run_jsonl(f.fileno(), chunks.append, _fake_classify)
    return [json.loads(line) for line in b"".join(chunks).decode().splitlines()], bad


def test_run_jsonl_keeps_order_crlf_and_a_final_unterminated_line():
    objs, bad = _stream(b'"a"\r\n"b b"\n"\\u00e9\\n2"\n"last"')
    assert bad == 0
    assert [o["command"] for o in objs] == ["a", "b b", "\u00e9\n2", "last"]


def test_run_jsonl_spans_chunk_boundaries():
    cmds = [f"echo {i} " + "x" * (i % 97) for i in range(3000)]   # > one 64 KiB read
    data = "".join(json.dumps(c) + "\n" for c in cmds).encode()
    assert len(data) > 2 * fast._CHUNK
    objs, bad = _stream(data)
    assert bad == 0 and [o["command"] for o in objs] == cmds


def _batches(data: bytes) -> list:
    with tempfile.TemporaryFile() as f:
        f.write(data)
        f.seek(0)
        return list(fast._read_batches(f.fileno()))


@settings(max_examples=300, deadline=None)
@given(data=st.lists(st.sampled_from([b"a", b"bc", b"\n", b"\r", b"xyzxyzxyz"]),
                     max_size=40).map(b"".join),
       chunk=st.integers(1, 12), max_line=st.integers(1, 20))
def test_read_batches_splits_lines_like_split_and_drops_overlong_ones(data, chunk, max_line):
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(fast, "_CHUNK", chunk)
        mp.setattr(fast, "_MAX_LINE", max_line)
        batches = _batches(data)
    expected = data.split(b"\n")
    if expected[-1] == b"":
        expected.pop()                      # a final newline ends the last line
    expected = [line if len(line) <= max_line else None for line in expected]
    got, next_line = [], 1
    for first, lines, _full in batches:
        assert first == next_line
        got += lines
        next_line += len(lines)
    assert got == expected


def test_overlong_line_gets_an_error_object_and_the_rest_goes_on(monkeypatch):
    monkeypatch.setattr(fast, "_MAX_LINE", 10)
    objs, bad = _stream(b'"ok"\n"' + b"x" * 50 + b'"\n"fine"\n')
    assert bad == 1
    assert objs[1] == {"error": "line is longer than 10 bytes", "line": 2}
    assert [objs[0]["command"], objs[2]["command"]] == ["ok", "fine"]


def test_parallel_workers_keep_the_input_order():
    cmds = [f"echo {i}" for i in range(20000)]                # many 64 KiB reads
    data = "".join(json.dumps(c) + "\n" for c in cmds).encode() + b"7\n"
    chunks: list[bytes] = []
    with tempfile.TemporaryFile() as f:
        f.write(data)
        f.seek(0)
        bad = fast.run_jsonl(f.fileno(), chunks.append, _fake_classify, jobs=2)
    objs = [json.loads(line) for line in b"".join(chunks).decode().splitlines()]
    assert bad == 1
    assert [o["command"] for o in objs[:-1]] == cmds
    assert objs[-1] == {"error": "line is a JSON int, expected a JSON string", "line": 20001}


@pytest.mark.parametrize("value", ["0", "-1", "x", "65"])
def test_bad_jobs_is_a_usage_error(value):
    assert_clean_failure(rf("check", "--jsonl", "--jobs", value), 2,
                         "--jobs takes a whole number from 1 to 64")


def test_lone_surrogates_are_written_as_valid_json_escapes():
    objs, bad = _stream(b'"rm \\ud800 x"\n')
    assert bad == 0 and objs[0]["command"] == "rm \ud800 x"


# --- with the engine ------------------------------------------------------------

@needs_engine
def test_json_mission_case_is_the_exact_contract():
    from ringfence.classifier import classify

    proc = rf("check", "--json", MISSION)
    out, err = text(proc)
    assert proc.returncode == 0, err
    assert out.endswith("\n") and out.count("\n") == 1
    obj = json.loads(out)
    assert list(obj) == CONTRACT_KEYS
    assert obj["command"] == MISSION and obj["verdict"] == "capability"
    assert [c["key"] for c in obj["capabilities"]] == ["longbridge"]
    assert obj["capabilities"][0]["argv"] == ["longbridge", "news", "FIG.US"]
    assert obj["findings"] == []
    # the decorations are exactly the stripped `2>&1` and the `head -30` stage,
    # and every span points at its own text
    texts = [d["text"] for d in obj["decorations"]]
    assert len(texts) == 2 and texts[0] == "2>&1" and "head -30" in texts[1]
    for d in obj["decorations"]:
        assert d["code"].startswith("RF3")
        start, end = d["span"]
        assert MISSION[start:end] == d["text"]
    # the CLI prints exactly what the library's Verdict serialises to
    assert out == json.dumps(classify(MISSION).to_json(), ensure_ascii=False) + "\n"


@needs_engine
@pytest.mark.parametrize("profile,cmd,decision", [
    ("strict", "git push origin main 2>&1 | tail -3", "deny"),
    ("build", "git push origin main", "ask"),
    ("build", "cd src && pwd", "allow"),
])
def test_json_with_profile_adds_the_gate_decision(profile, cmd, decision):
    from ringfence.classifier import classify
    from ringfence.profiles.load import load_profile
    from ringfence.session.gate import decide

    proc = rf("check", "--json", "--profile", profile, cmd)
    out, err = text(proc)
    assert proc.returncode == 0, err
    obj = json.loads(out)
    assert list(obj) == CONTRACT_KEYS + ["decision", "reasons"]
    assert obj["decision"] == decision and obj["reasons"]
    expected = decide(classify(cmd), load_profile(profile, workspace=None),
                      grants=frozenset(), context="host").to_json()
    assert {k: obj[k] for k in ("decision", "reasons")} == expected
    # the human views show the same decision
    human, _ = text(rf("check", "--profile", profile, cmd))
    assert f"decision: {decision}" in human
    if decision == "deny":
        explained, _ = text(rf("explain", "--profile", profile, cmd))
        assert f"decision: {decision}" in explained


@needs_engine
def test_json_keeps_non_ascii_unescaped():
    proc = rf("check", "--json", "echo héllo")
    assert proc.returncode == 0
    assert "héllo" in proc.stdout.decode("utf-8")


@needs_engine
def test_jsonl_is_in_order_and_matches_check_json():
    from ringfence.classifier import classify

    cmds = [MISSION, "ls | head", "cat <<EOF\nhi\nEOF", "echo $(id)", "git push origin main",
            "cd src && make 2>&1 | tail -5", "l\\ongbridge news", "héllo wörld"]
    stdin = b"".join(json.dumps(c).encode() + b"\n" for c in cmds)
    proc = rf("check", "--jsonl", stdin=stdin)
    out, err = text(proc)
    assert proc.returncode == 0, err
    assert out.splitlines() == [json.dumps(classify(c).to_json(), ensure_ascii=False)
                                for c in cmds]


@needs_engine
def test_jsonl_workers_give_the_same_output_as_one_process(tmp_path):
    cmds = [MISSION, "ls | head", "cat <<EOF\nhi\nEOF", "echo $(id)", "git -C x push",
            "rm \ud800", "for f in *; do wc -l \"$f\"; done"] * 1500   # > 64 KiB
    stdin = b"".join(json.dumps(c).encode() + b"\n" for c in cmds)
    assert len(stdin) > 2 * fast._CHUNK
    one, two = rf("check", "--jsonl", "--jobs", "1", stdin=stdin), \
        rf("check", "--jsonl", "--jobs", "2", stdin=stdin)
    assert one.returncode == two.returncode == 0
    assert one.stdout == two.stdout
    assert one.stdout.count(b"\n") == len(cmds)


@needs_engine
def test_jsonl_mixes_error_objects_with_verdicts_in_place():
    proc = rf("check", "--jsonl", stdin=b'"ls"\n7\n"pwd"\n')
    out, _ = text(proc)
    assert proc.returncode == 2
    objs = [json.loads(line) for line in out.splitlines()]
    assert objs[0]["command"] == "ls" and objs[2]["command"] == "pwd"
    assert objs[1] == {"error": "line is a JSON int, expected a JSON string", "line": 2}


@needs_engine
def test_check_human_output_names_class_keys_and_codes():
    from ringfence.classifier import classify

    verdict = classify(MISSION)
    proc = rf("check", MISSION)
    out, err = text(proc)
    assert proc.returncode == 0, err
    assert f"verdict: {verdict.verdict}" in out
    assert "longbridge" in out
    for d in verdict.decorations:
        assert d.code in out


@needs_engine
def test_check_human_exit_0_for_one_time_too():
    proc = rf("check", "echo $(id)")
    out, err = text(proc)
    assert proc.returncode == 0, err
    assert "verdict: one_time" in out


@needs_engine
def test_explain_shows_highlighted_command_tree_and_every_code_explained():
    from ringfence.classifier import classify

    cmd = 'cd src && git -C . push origin main 2>&1 | tail -5; echo "done: $(date)"'
    verdict = classify(cmd)
    proc = rf("explain", cmd)
    out, err = text(proc)
    assert proc.returncode == 0, err
    lines = out.splitlines()
    assert lines[0] == "command" and lines[1] == cmd
    # the marker line: one mark per character of each span; findings are drawn
    # over decorations, which are drawn over capabilities. RF2xx findings only
    # explain a key (`git push`), so they are not drawn as problems.
    expected = [" "] * len(cmd)
    problems = [f for f in verdict.findings if not f.code.startswith("RF2")]
    assert len(problems) < len(verdict.findings)      # the command has an RF2xx
    for mark, items in (("-", verdict.capabilities), ("~", verdict.decorations),
                        ("^", problems)):
        for item in items:
            expected[item.span[0]:item.span[1]] = mark * (item.span[1] - item.span[0])
    assert lines[2] == "".join(expected).rstrip()
    assert {"-", "~", "^"} <= set(lines[2])
    assert "legend:" in out and "invocations" in out and "bash -c" in out
    codes = {d.code for d in verdict.decorations} | {f.code for f in verdict.findings}
    assert codes, "this command must produce codes"
    for code in codes:
        assert code in out
        rule = REGISTRY.get(code)
        if rule is not None:
            first_words = " ".join(rule.explanation.split()[:4])
            assert first_words in " ".join(out.split())


@needs_engine
def test_non_utf8_argv_gets_a_verdict_not_a_crash():
    proc = subprocess.run([sys.executable, "-m", "ringfence", "check", "--json", b"ls \xff"],
                          capture_output=True, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr
    obj = json.loads(proc.stdout)
    assert obj["verdict"] == "one_time"


@needs_engine
def test_typer_check_json_delegates_to_the_fast_path(capfd):
    # `ringfence.cli.main` is reachable without the dispatcher (e.g. the Python
    # API or a future entry point): --json there must print the same contract.
    from ringfence import cli

    assert cli.main(["check", "--json", MISSION]) == 0
    via_typer = capfd.readouterr().out
    assert via_typer == text(rf("check", "--json", MISSION))[0]
    assert cli.main(["check", "--json"]) == 2
    assert "--json needs the command to check" in capfd.readouterr().err
