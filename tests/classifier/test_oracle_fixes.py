"""Regressions found by the bash oracle (docs/differential.md findings 6-8).

Expected argvs here were checked against bash 5.2 itself (a
`command_not_found_handle` that prints its arguments, PATH empty), and the
differential test keeps them honest: these commands are in
corpus/oracle-regressions.jsonl, which it runs through the oracle.
"""

from __future__ import annotations

import pytest

from ringfence.classifier import classify
from ringfence.classifier.parse import parse
from ringfence.classifier.words import ansi_c_end, plain_tail, unterminated_quote

B = "\\"


# --- finding 8: ANSI-C strings with an escaped backslash before a quote -------

def test_ansi_c_end_counts_an_escaped_backslash_as_one_escape():
    assert ansi_c_end("$'" + B + B + "'" + B + "'") == 5      # $'\\' then \'
    assert ansi_c_end("$'a" + B + "'b' x") == 7                # \' is an escaped quote
    assert ansi_c_end("$'" + B + B + B + "''") == 7            # \\ then \' then '
    assert ansi_c_end("$'" + B + "'") is None


def test_plain_tail_accepts_escapes_only():
    assert plain_tail(B + "'") == "'"
    assert plain_tail(B + "a" + B + "'") == "a'"
    assert plain_tail(B + "''") is None            # a live quote
    assert plain_tail(B + "' x'") is None          # a blank
    assert plain_tail("a$b") is None               # an expansion
    assert plain_tail("a" + B) is None             # would escape what follows


def test_unterminated_quote_follows_bash_quoting():
    assert unterminated_quote("'")
    assert unterminated_quote(B + "''")
    assert not unterminated_quote(B + "'" + B + "'")
    assert not unterminated_quote("'a' \"b" + B + "\"c\" $'d" + B + "'e'")
    assert unterminated_quote("\"a" + B + "\"")
    assert unterminated_quote("$'" + B + "'")


@pytest.mark.parametrize("cmd,argv", [
    ("make x$'" + B + B + "'" + B + "'", ["make", "x" + B + "'"]),
    ("make x$'" + B + B + "' y", ["make", "x" + B, "y"]),
    ("make x$'" + B + B + "'" + B + "a" + B + "'", ["make", "x" + B + "a'"]),
    ("make $'a" + B + "'b'", ["make", "a'b"]),
])
def test_ansi_c_words_match_bash(cmd, argv):
    s = parse(cmd)
    assert s.problems == []
    assert s.argvs() == [argv]


def test_ansi_c_string_bash_rejects_fails_closed_as_a_parse_error():
    v = classify("make $'" + B + B + "'" + B + "''")
    assert (v.verdict, v.codes, v.capabilities) == ("one_time", ("RF001",), ())


# --- finding 7: GNU time's -o writes a file; the keyword time does not ----------

@pytest.mark.parametrize("cmd", [
    B + "time -o t.log ls", B + "time --output=t.log ls", B + "time --out t.log ls",
    B + "time --o=t.log ls", B + "time -ao t.log ls", B + "time -vaot.log ls",
    "command time -o t.log ls", "env time -o t.log ls", "nice time -o t.log ls",
    "timeout 5 time -o t.log ls", "A=1 time -o t.log ls", "cat x | time -o t.log ls",
    ">/dev/null time -o t.log ls", "'time' -o t.log ls", "/usr/bin/time -o t.log ls",
])
def test_gnu_time_output_file_is_one_time_and_ls_stays_a_capability(cmd):
    v = classify(cmd)
    assert v.verdict == "one_time"
    assert "RF129" in v.codes
    assert v.keys[-1] == "ls"
    assert v.capabilities[-1].argv == ("ls",)


def test_the_finding_names_the_file():
    v = classify(B + "time -a -o build.log make")
    [f] = [f for f in v.findings if f.code == "RF129"]
    assert f.message == "`time -o build.log` writes a file"
    assert v.command[f.span[0]:f.span[1]] == B + "time -a -o build.log"


@pytest.mark.parametrize("cmd,keys", [
    ("time -p ls", ("ls",)),
    ("time -p -- ls", ("ls",)),
    ("time -- ls", ("ls",)),
    ("time ! ls", ("ls",)),
    ("time -p ! time -p ls", ("ls",)),
    # bash's keyword takes only -p: the next word is the program it runs
    ("time -o t.log ls", ("-o",)),
    ("time -p -p ls", ("-p",)),
    ("time '-p' ls", ("-p",)),
    (B + "time -o /dev/null ls", ("ls",)),
    (B + "time -f %e -p ls", ("ls",)),
])
def test_keyword_time_and_harmless_program_time(cmd, keys):
    v = classify(cmd)
    assert v.verdict == "capability", v.findings
    assert v.keys == keys


def test_program_time_in_a_later_stage_is_not_the_keyword():
    # `x | time -p cat` runs GNU time, which reads -p as --portability: key cat
    v = classify("ls | time -p cat")
    assert (v.verdict, v.keys) == ("capability", ("ls", "cat"))


# --- finding 6: a launcher's wrapper with no program left -----------------------

@pytest.mark.parametrize("cmd", [
    "find . | xargs command", "find . -print0 | xargs -0 command", "xargs builtin",
    "xargs exec", "xargs env", "xargs env LANG=C", "xargs nohup", "xargs time",
    "xargs timeout 5", "xargs nice -n 5", "xargs stdbuf -oL", "xargs xargs",
    "xargs -I{} command", "xargs " + B + "time -p",
])
def test_xargs_wrapper_without_program_runs_a_program_from_stdin(cmd):
    v = classify(cmd)
    assert v.verdict == "one_time"
    assert "RF003" in v.codes
    # the stdin-fed stage never becomes a key of its own
    assert not set(v.keys) & {"command", "builtin", "exec", "env", "nohup", "time", "timeout",
                              "nice", "stdbuf", "xargs"}
    [f] = [f for f in v.findings if f.code == "RF003"]
    assert "read from standard input" in f.message


def test_xargs_sudo_without_program_is_also_escalation():
    assert classify("xargs sudo").codes == ("RF003", "RF123")


def test_wrappers_with_a_program_or_outside_xargs_are_unchanged():
    assert classify("xargs command ls").keys == ("ls",)
    assert classify("xargs env LANG=C sort").keys == ("sort",)
    assert classify("find . | xargs command -v").keys == ("find", "command")
    assert classify("watch -x command").keys == ("command",)
    assert classify("find . -exec nohup \\;").keys == ("find", "nohup")
    assert classify("env").keys == ("env",)
    for cmd in ("time", "exec 3>&-", "command"):
        assert classify(cmd).keys == ()
