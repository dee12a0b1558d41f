"""Hostile inputs: the classifier returns a fail-closed verdict, never a crash,
a RecursionError or a hang (no timing assertions: deep inputs are rejected by
a pre-scan before parsing and the walker is iterative)."""

from __future__ import annotations

import pytest

from ringfence.classifier import classify
from ringfence.classifier.parse import MAX_BYTES, parse


def codes(cmd: str) -> list[str]:
    return sorted({f.code for f in classify(cmd).findings})


def test_5000_deep_command_substitution():
    v = classify("echo " + "$(" * 5000 + "x" + ")" * 5000)
    assert v.verdict == "one_time" and [f.code for f in v.findings] == ["RF010"]


def test_5000_deep_backtick_free_nesting_of_subshells_and_groups():
    assert codes("(" * 5000 + "ls" + ")" * 5000) == ["RF010"]
    assert codes("{ " * 5000 + "ls; " + "}; " * 5000) == ["RF010"]


def test_deep_nesting_just_below_the_limit_is_walked():
    v = classify("echo " + "$(" * 200 + "id" + ")" * 200)
    assert v.verdict == "one_time"
    # the outermost name is itself a substitution (RF003); each level is RF101
    assert {f.code for f in v.findings} == {"RF003", "RF101"}
    assert sum(f.code == "RF101" for f in v.findings) == 200


def test_10000_stage_pipe():
    v = classify(" | ".join(["cat"] * 10000))
    assert v.verdict == "capability"
    assert v.keys == ("cat",)
    assert len(v.decorations) == 9999
    assert all(d.code == "RF305" for d in v.decorations)


def test_6000_item_and_list_is_left_nested_but_walked_iteratively():
    v = classify(" && ".join(["true"] * 6000) + " && make")
    assert v.verdict == "capability" and v.keys == ("make",)


def test_long_xargs_chain_is_unwrapped_without_recursion():
    v = classify("xargs " * 3000 + "rm")
    assert v.keys == ("rm",)


def test_64_kib_plus_one():
    cmd = "echo " + "a" * (MAX_BYTES - 4)
    assert len(cmd.encode()) == MAX_BYTES + 1
    assert codes(cmd) == ["RF009"]
    ok = "echo " + "a" * (MAX_BYTES - 5)
    assert classify(ok).verdict == "capability" or classify(ok).verdict == "helper"


def test_64_kib_counts_bytes_not_characters():
    cmd = "echo " + "é" * (MAX_BYTES // 2)           # 2 bytes each
    assert codes(cmd) == ["RF009"]


@pytest.mark.parametrize("cmd,code", [
    ("echo a\0b", "RF006"),
    ("echo a\x01b", "RF007"),
    ("echo a\x1bb", "RF007"),
    ("echo a\rb", "RF007"),
    ("echo a\x0bb", "RF007"),
    ("echo a\x0cb", "RF007"),
    ("echo a\x7fb", "RF007"),
    ("echo a\x85b", "RF007"),
    ("echo a\u202eb", "RF007"),
    ("echo a\ufeffb", "RF007"),
    ("echo \udcff", "RF008"),
    ("echo \ud800", "RF008"),
    (b"echo \xff\xfe".decode("utf-8", "surrogateescape"), "RF008"),
])
def test_bad_characters_fail_closed_before_parsing(cmd, code):
    v = classify(cmd)
    assert v.verdict == "one_time"
    assert code in {f.code for f in v.findings}
    assert v.capabilities == ()
    for f in v.findings:
        assert 0 <= f.span[0] < f.span[1] <= len(cmd)


def test_tab_and_newline_are_fine():
    assert classify("echo a\tb\necho c").verdict == "helper"


@pytest.mark.parametrize("cmd", [
    "python3 - <<EOF\nprint(1)\nEOF",         # tree-sitter drops the `-`
    "echo \\ x",                               # escaped space dropped
    "ec\\\nho hi",                             # backslash-newline inside a word
    "rm \\ -rf",
])
def test_dropped_input_fails_closed(cmd):
    v = classify(cmd)
    assert [f.code for f in v.findings][:1] == ["RF002"]
    assert v.capabilities == ()


def test_backslash_newline_between_words_is_a_line_continuation():
    v = classify("ls \\\n  -la")
    assert v.verdict == "capability"
    assert v.capabilities[0].argv == ("ls", "-la")


def test_python_dash_heredoc_is_one_time_even_without_the_dash():
    # RF002 reports the dropped `-`; with the dash quoted the parse is trusted
    v = classify("python3 '-' <<EOF\nprint(1)\nEOF")
    assert {f.code for f in v.findings} == {"RF103", "RF116"}


def test_never_str_a_tree_and_parse_returns_problems_only():
    s = parse("echo " + "$(" * 400 + ")" * 400)
    assert [p.code for p in s.problems] == ["RF010"] and s.commands == []


def test_non_str_input_is_a_type_error():
    with pytest.raises(TypeError):
        classify(b"ls")  # type: ignore[arg-type]


def test_classify_is_safe_from_threads():
    # one tree-sitter Parser per thread: concurrent callers get their own
    from concurrent.futures import ThreadPoolExecutor

    cmds = ["git push origin main", "bash -c id", "ls | head -3", "echo hi"] * 50
    with ThreadPoolExecutor(4) as pool:
        got = list(pool.map(lambda c: classify(c).verdict, cmds))
    assert got == [classify(c).verdict for c in cmds]
    assert set(got) == {"capability", "one_time", "helper"}
