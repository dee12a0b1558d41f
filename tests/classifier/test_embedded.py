"""sed and awk program scanners, and the option scanner they rely on."""

from __future__ import annotations

import pytest

from ringfence.classifier import data
from ringfence.classifier.analysis import scan_args, skip_options
from ringfence.classifier.embedded import (EXEC, IMPURE, OK, UNKNOWN, awk_program, awk_writes, sed_script,
                                 sed_writes)
from ringfence.classifier.parse import parse


@pytest.mark.parametrize("script,want", [
    ("s/a/b/g", OK), ("1,5p", OK), ("/x/d", OK), ("$!N;P;D", OK), ("1~3d", OK),
    ("0,/re/d", OK), ("s|a|b|2", OK), ("y/abc/xyz/", OK), ("/a/,/b/{s/x/y/;p}", OK),
    ("1!G;h;$!d", OK), ("s/(a)/\\1/I", OK), (":a;N;$!ba;s/\\n/ /g", OK), ("a\\\ntext", OK),
    ("q5", OK), ("# comment\np", OK),
    ("s/.*/id/e", EXEC), ("1e id", EXEC), ("e", EXEC), ("s/x/y/ge", EXEC),
    ("w out", IMPURE), ("s/x/y/w out", IMPURE), ("r /etc/passwd", IMPURE), ("1R f", IMPURE),
    ("s/unterminated", UNKNOWN), ("v", UNKNOWN), ("k", UNKNOWN),
])
def test_sed_script(script, want):
    assert sed_script(script) == want


@pytest.mark.parametrize("prog,want", [
    ("{print $1}", OK), ("$1 > 5", OK), ("NR==1", OK), ("/a|b/ {print}", OK),
    ("{print \"a|b\"}", OK), ("BEGIN{FS=\":\"} {print $2}", OK), ("{x = a / b; print x}", OK),
    ("{print tolower($0)}", OK), ("$1 == \"a\" || $2 == \"b\"", OK),
    ("{system(\"rm \" $1)}", EXEC), ("{print | \"sh\"}", EXEC),
    ("BEGIN{\"date\" | getline d}", EXEC), ("{print |& \"cat\"}", EXEC),
    ("{print > \"out\"}", IMPURE), ("{printf \"%s\", $1 >> \"log\"}", IMPURE),
    ("{getline line < \"f\"}", IMPURE),
    ("@include \"x\"", UNKNOWN), ("{print \"unterminated}", UNKNOWN),
])
def test_awk_program(prog, want):
    assert awk_program(prog) == want


def test_awk_environ_is_impure_only_for_decoration():
    assert awk_program('{print ENVIRON["HOME"]}') == OK
    assert awk_program('{print ENVIRON["HOME"]}', filter_only=True) == IMPURE


def _words(text: str):
    return parse(text).commands[0].words


def test_skip_options_stops_at_the_program():
    words = _words("timeout -s KILL --foreground -k5 10 make x")
    j, seen = skip_options(words, 1, data.WRAPPERS["timeout"].opts)
    assert words[j].value == "10"
    assert [o for o, _ in seen] == ["-s", "--foreground", "-k"]


def test_scan_args_permutes_and_reads_values():
    words = _words("sed -n file1 -es/a/b/ --expr=p -e q -- -i")[1:]
    spec = data.FILTERS["sed"]
    opts, operands = scan_args(words, spec.opts, spec.deny | spec.operand_opts)
    assert [(o, v.value if v else None) for o, v in opts] == [
        ("-n", None), ("-e", "s/a/b/"), ("--expression", "p"), ("-e", "q")]
    assert [w.value for w in operands] == ["file1", "-i"]


def test_scan_args_ambiguous_prefix_is_not_guessed():
    words = _words("sort --c x")[1:]
    spec = data.FILTERS["sort"]
    opts, _ = scan_args(words, spec.opts, spec.deny | frozenset({"--compress-program",
                                                                 "--check"}))
    assert opts[0][0] == "--c"


@pytest.mark.parametrize("script,want", [
    ("s/a/b/w out", ["out"]), ("w out", ["out"]), ("W  spaced.txt", ["spaced.txt"]),
    ("1,5w part", ["part"]), ("p;w x;p", ["x;p"]),          # GNU: the name runs to the newline
    ("w a\nw b", ["a", "b"]), ("s/x/y/gw log", ["log"]),
    ("s/a/b/w /dev/stdout", ["/dev/stdout"]),               # the caller decides what is harmless
    ("r /etc/passwd", []), ("1R f", []), ("s/a/b/g", []), ("/w/d", []), ("y/w/v/", []),
])
def test_sed_writes(script, want):
    assert sed_writes(script) == want


@pytest.mark.parametrize("prog,want", [
    ('{print > "f"}', ["f"]), ('{print >> "f"}', ["f"]), ('{printf "x" > "f"}', ["f"]),
    ('{printf("%d", a > b) > "o"}', ["o"]), ('{print > "/dev/stderr"}', ["/dev/stderr"]),
    ('{print $1 > $2 ".txt"}', ['$2 ".txt"']), ('{print > "a" "b"}', ['"a" "b"']),
    ('{print (a > b)}', []), ('$1 > 2 {print}', []), ('{print "x > y"}', []),
    ('{if ($1 > 5) print}', []), ('{getline line < "f"}', []),
    ('{print "unterminated}', []),                          # unreadable: RF110's business
])
def test_awk_writes(prog, want):
    assert awk_writes(prog) == want
