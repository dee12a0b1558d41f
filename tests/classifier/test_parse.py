"""The tree-sitter front end: IR words after quote removal, spans, structure."""

from __future__ import annotations

import pytest

from ringfence.classifier import classify
from ringfence.classifier.parse import parse
from ringfence.classifier.words import decode_ansi_c, live_substitution_in_double, unquote_double


def argvs(cmd: str) -> list[list[str]]:
    s = parse(cmd)
    assert s.problems == []
    return s.argvs()


@pytest.mark.parametrize("cmd,argv", [
    ("l\\ongbridge news", ["longbridge", "news"]),
    ("'rm' x", ["rm", "x"]),
    ("r''m x", ["rm", "x"]),
    ("$'rm' x", ["rm", "x"]),
    ("$'\\x72\\155' x", ["rm", "x"]),
    ('"a\\"b" "c\\d" "e\\$f"', ['a"b', "c\\d", "e$f"]),
    ("echo 'a'\"b\"c", ["echo", "abc"]),
    ("echo a\\ b", ["echo", "a b"]),
    ('echo "multi\nline"', ["echo", "multi\nline"]),
    ("echo $\"hi\"", ["echo", "hi"]),
    ("echo a#b #c", ["echo", "a#b"]),
    ("find . -exec rm {} \\;", ["find", ".", "-exec", "rm", "{}", ";"]),
    ("find . -exec rmdir {}\\;", ["find", ".", "-exec", "rmdir", "{};"]),
    ("head -200>/dev/null", ["head", "-200"]),
    ("echo $'a\\0b'", ["echo", "a"]),
])
def test_quote_removal_matches_bash(cmd, argv):
    assert argvs(cmd)[0] == argv


def test_words_know_what_is_dynamic():
    s = parse('echo "$x" \'$y\' "$(id)" ${z:-w} *.py {a,b} x{1..3} {} /tmp/$$')
    words = s.commands[0].words
    flags = [(w.value, w.dynamic, w.glob, w.subst) for w in words[1:]]
    assert flags[0][1:] == (True, False, False)         # "$x"
    assert flags[1] == ("$y", False, False, False)      # '$y' is text
    assert flags[2][1:] == (True, False, True)          # "$(id)" is live
    assert flags[3][1:] == (True, False, False)
    assert flags[4] == ("*.py", False, True, False)
    assert flags[5][2] is True and flags[6][2] is True  # brace expansions
    assert flags[7] == ("{}", False, False, False)      # {} stays literal
    assert flags[8][1] is True                          # $$


def test_pipeline_stages_and_redirect_owners():
    s = parse("a 2>&1 | b > out | c < in")
    assert [(c.words[0].value, c.stage, c.stages) for c in s.commands] == \
        [("a", 0, 3), ("b", 1, 3), ("c", 2, 3)]
    assert [(r.op, r.fd, r.target.value, r.owner) for r in s.redirects] == \
        [(">&", 2, "1", 0), (">", None, "out", 1), ("<", None, "in", 2)]


def test_redirect_on_a_pipeline_binds_to_its_last_stage():
    s = parse("a | b > f")
    assert s.redirects[0].owner == 1


def test_heredoc_continuation_is_a_later_stage():
    s = parse("cat <<EOF | sh\nx\nEOF")
    assert [(c.words[0].value, c.stage) for c in s.commands] == [("cat", None), ("sh", 1)]
    assert s.redirects[0].heredoc_body == "x\n" and not s.redirects[0].heredoc_quoted
    assert parse("cat <<'EOF'\nx\nEOF").redirects[0].heredoc_quoted


def test_structure_is_flattened():
    s = parse("if a; then b; elif c; then d; else e; fi; for i in f; do g; done; "
              "while h; do i; done; case x in y) j;; esac; (k); { l; }; ! m")
    assert [c.words[0].value for c in s.commands if c.kind != "loop"] == \
        list("abcdeg") + list("hijklm")
    # the loop variable is an assignment of a value the loop decides (issue 20b)
    loop = [c for c in s.commands if c.kind == "loop"]
    assert [(a.name, a.value.dynamic) for c in loop for a in c.assignments] == [("i", True)]


def test_substitutions_are_walked_and_marked():
    s = parse('echo "$(a "$(b)")" `c` <(d) ${x:-$(e)}')
    names = sorted(c.words[0].value for c in s.commands if c.in_subst)
    assert names == ["a", "b", "c", "d", "e"]
    kinds = sorted(k.kind for k in s.constructs)
    assert kinds == ["command-substitution"] * 4 + ["process-substitution"]


def test_spans_are_characters_not_bytes():
    cmd = "echo é € 😀 | grep 😀 > /dev/null"
    v = classify(cmd)
    for d in v.decorations:
        assert d.text == cmd[d.span[0]:d.span[1]]
    assert [d.text for d in v.decorations] == ["echo é € 😀", "| grep 😀 > /dev/null",
                                               "> /dev/null"] or \
        {d.text for d in v.decorations} >= {"echo é € 😀", "> /dev/null"}
    s = parse(cmd)
    assert [cmd[w.span[0]:w.span[1]] for w in s.commands[0].words] == ["echo", "é", "€", "😀"]


def test_background_and_comments_are_constructs():
    s = parse("a & b # c")
    assert [(k.kind, k.text) for k in s.constructs] == [("background", "a &"), ("comment", "# c")]


def test_word_helpers():
    assert unquote_double('a\\"b\\n\\\\') == 'a"b\\n\\'
    assert live_substitution_in_double("x $(y)") and live_substitution_in_double("`y`")
    assert not live_substitution_in_double("x \\$(y)")
    assert decode_ansi_c("\\t\\e\\cA\\u00e9\\'") == "\t\x1b\x01é'"


def test_parse_problems_carry_character_spans():
    cmd = "é; python3 - <<EOF\nx\nEOF"
    s = parse(cmd)
    assert [(p.code, cmd[p.span[0]:p.span[1]]) for p in s.problems] == [("RF002", "-")]
