"""ringfence.views.render: people-facing views built from hand-made Verdicts.

These do not need the classifier engine: they pin what the renderer does with a
given Verdict (exact span styling, markers, tree shape, rule sections) and that
untrusted text can never become terminal control sequences or rich markup.
"""

from __future__ import annotations

import io

from rich.console import Console
from rich.tree import Tree

from ringfence.classifier.verdict import Capability, Decoration, Finding, Verdict
import pytest

from ringfence.rfcore.rules import REGISTRY, Rule
from ringfence.views import render, render_rules

MISSION = "longbridge news FIG.US 2>&1 | head -30"
MISSION_VERDICT = Verdict(
    MISSION, "capability",
    (Capability("longbridge", "longbridge", ("longbridge", "news", "FIG.US"), (0, 27)),),
    (Decoration("RF301", "2>&1", (23, 27)), Decoration("RF310", "| head -30", (28, 38))),
)
EVIL = "echo \x1b[2J\x1b]0;pwned\x07 [bold red]x[/] \u202eabc\x00 $(id)"
EVIL_VERDICT = Verdict(EVIL, "one_time",
                       (Capability("echo", "echo", ("echo",), (0, len(EVIL))),), (),
                       (Finding("RF101", "command substitution", (len(EVIL) - 5, len(EVIL))),))



@pytest.fixture(autouse=True)
def _private_registry(monkeypatch):
    """Tests here edit the registry render reads; give them a private copy so the
    shared registry (its order included) is never touched."""
    monkeypatch.setattr(render, "REGISTRY", dict(render.REGISTRY))

def plain(renderable, width: int = 120) -> str:
    buf = io.StringIO()
    Console(file=buf, width=width, color_system=None, force_terminal=False).print(renderable)
    return buf.getvalue()


def ansi(renderable, width: int = 120) -> str:
    buf = io.StringIO()
    Console(file=buf, width=width, color_system="truecolor", force_terminal=True).print(renderable)
    return buf.getvalue()


def test_highlight_styles_exact_character_spans():
    text = render.highlight(MISSION_VERDICT)
    assert text.plain == MISSION
    got = sorted((s.start, s.end, str(s.style)) for s in text.spans)
    assert got == [(0, 27, render.SPAN_STYLE["capability"]),
                   (23, 27, render.SPAN_STYLE["decoration"]),
                   (28, 38, render.SPAN_STYLE["decoration"])]


def test_highlight_uses_character_not_byte_offsets():
    cmd = "echo héllo → $(id)"
    v = Verdict(cmd, "one_time", findings=(Finding("RF101", "subst", (13, 18)),))
    text = render.highlight(v)
    (span,) = text.spans
    assert text.plain[span.start:span.end] == "$(id)"


def test_marker_lines_mark_each_kind_and_follow_lines():
    assert render.marker_lines(MISSION_VERDICT) == [
        (MISSION, "-" * 23 + "~" * 4 + " " + "~" * 10)]
    cmd = "cat <<EOF\n$(id)\nEOF"
    v = Verdict(cmd, "one_time", findings=(Finding("RF104", "heredoc", (4, 9)),
                                           Finding("RF101", "subst", (10, 15))))
    assert render.marker_lines(v) == [("cat <<EOF", "    ^^^^^"), ("$(id)", "^^^^^"), ("EOF", "")]


def test_marker_lines_count_terminal_cells_for_wide_characters():
    cmd = "echo 漢字 $(x)"
    v = Verdict(cmd, "one_time", findings=(Finding("RF101", "subst", (8, 12)),))
    ((line, marks),) = render.marker_lines(v)
    assert line == cmd
    assert marks == " " * 10 + "^^^^"        # each CJK character is two cells wide


def test_visible_replaces_controls_one_for_one():
    assert render.visible("a\x1b[31mb\x07\x00\x7f\x85\u202ec\ud800") == \
        "a\u241b[31mb\u2407\u2400\u2421\ufffd\ufffdc\ufffd"
    assert render.visible("a\nb") == "a\u240ab"
    assert render.visible("a\nb", keep_newlines=True) == "a\nb"
    assert render.visible("plain ascii") == "plain ascii"


def test_untrusted_command_never_reaches_the_terminal_raw():
    for view in (render.verdict_view(EVIL_VERDICT), render.explain_view(EVIL_VERDICT)):
        for out in (plain(view), ansi(view)):
            assert "\x1b[2J" not in out and "\x1b]0;" not in out and "\x07" not in out
            assert "\x00" not in out and "\u202e" not in out
            # rich markup in the command is shown literally, not interpreted
            assert "[bold red]x[/]" in out


def test_verdict_view_lists_class_keys_decorations_and_findings():
    out = plain(render.verdict_view(MISSION_VERDICT))
    assert "verdict: capability" in out
    assert "longbridge news FIG.US" in out
    assert "RF301" in out and "RF310" in out and "2>&1" in out and "| head -30" in out
    assert "[23, 27)" in out
    assert "findings" not in out
    out = plain(render.verdict_view(EVIL_VERDICT, {"decision": "ask", "reasons": ["one-time"]}))
    assert "verdict: one_time" in out and "decision: ask" in out and "- one-time" in out
    assert "RF101" in out and "command substitution" in out


def _labels(tree: Tree, depth: int = 0) -> list[tuple[int, str]]:
    out = [(depth, tree.label.plain)]
    for child in tree.children:
        out += _labels(child, depth + 1)
    return out


def test_invocation_tree_nests_by_span_and_shows_joiners(monkeypatch):
    for code in ("RF101", "RF301", "RF305", "RF306", "RF310"):
        monkeypatch.delitem(render.REGISTRY, code, raising=False)
    cmd = "time git -C x push 2>&1 | tail -5 && echo $(date)"
    v = Verdict(cmd, "one_time",
                (Capability("git push", "git", ("git", "-C", "x", "push"), (0, 23)),
                 Capability("echo", "echo", ("echo", "$(date)"), (37, 49))),
                (Decoration("RF301", "2>&1", (19, 23)), Decoration("RF310", "tail -5", (26, 33))),
                (Finding("RF101", "command substitution", (42, 49)),))
    labels = _labels(render.invocation_tree(v))
    assert labels == [
        (0, "bash -c  (one_time)"),
        (1, "pipeline (2 stages)"),
        (2, "capability git push  program git"),
        (3, "argv"), (4, "git"), (4, "-C"), (4, "x"), (4, "push"),
        (3, "decoration RF301 unregistered code  2>&1"),
        (2, "| decoration RF310 unregistered code  tail -5"),
        (1, "&& capability echo"),
        (2, "argv"), (3, "echo"), (3, "$(date)"),
        (2, "finding RF101 unregistered code  command substitution"),
    ]


def test_invocation_tree_keeps_a_trailing_redirect_with_its_command(monkeypatch):
    for code in ("RF105", "RF301", "RF305"):
        monkeypatch.delitem(render.REGISTRY, code, raising=False)
    cmd = "git push 2>&1 | tail -5; echo hi > out.txt\nls 2>&1"
    v = Verdict(cmd, "one_time",
                (Capability("git push", "git", ("git", "push"), (0, 8)),
                 Capability("echo", "echo", ("echo", "hi"), (25, 32)),
                 Capability("ls", "ls", ("ls",), (43, 45))),
                (Decoration("RF301", "2>&1", (9, 13)), Decoration("RF305", "| tail -5", (14, 23)),
                 Decoration("RF301", "2>&1", (46, 50))),
                (Finding("RF105", "writes out.txt", (33, 42)),))
    for item in v.capabilities + v.decorations:
        assert cmd[item.span[0]:item.span[1]] in (" ".join(getattr(item, "argv", ())),
                                                  getattr(item, "text", None))
    labels = [(d, t) for d, t in _labels(render.invocation_tree(v)) if d <= 3 and t != "argv"
              and not t.isalpha()]
    assert labels == [
        (0, "bash -c  (one_time)"),
        (1, "pipeline (2 stages)"),
        (2, "capability git push  program git"),
        (3, "decoration RF301 unregistered code  2>&1"),
        (2, "decoration RF305 unregistered code  | tail -5"),
        (1, "; capability echo"),
        (2, "finding RF105 unregistered code  writes out.txt"),
        (1, "capability ls"),
        (2, "decoration RF301 unregistered code  2>&1"),
    ]


def test_invocation_tree_pipe_inside_a_decoration_span_and_lists(monkeypatch):
    for code in ("RF305", "RF306"):
        monkeypatch.delitem(render.REGISTRY, code, raising=False)
    cmd = "ls | head; make\npwd"
    v = Verdict(cmd, "capability",
                (Capability("ls", "ls", ("ls",), (0, 2)),
                 Capability("make", "make", ("make",), (11, 15))),
                (Decoration("RF305", "| head", (3, 9)), Decoration("RF306", "pwd", (16, 19))))
    labels = [(d, t) for d, t in _labels(render.invocation_tree(v)) if d <= 2]
    assert labels == [
        (0, "bash -c  (capability)"),
        (1, "pipeline (2 stages)"),
        (2, "capability ls"), (2, "decoration RF305 unregistered code  | head"),
        (1, "; capability make"), (2, "argv"),
        (1, "decoration RF306 unregistered code  pwd"),
    ]


def test_explain_view_has_command_legend_tree_and_code_explanations(monkeypatch):
    rule = Rule("RF101", "command-substitution", "Command substitution runs a command",
                "A $(...) runs a program that no capability names.", "echo $(id)", "echo id")
    monkeypatch.setitem(render.REGISTRY, "RF101", rule)
    out = plain(render.explain_view(EVIL_VERDICT))
    lines = out.splitlines()
    assert lines[0] == "command"
    assert lines[2].endswith("^^^^^") and lines[2].startswith("-----")
    assert "legend: - capability  ~ decoration  ^ finding" in out
    assert "invocations" in out and "bash -c  (one_time)" in out
    assert "RF101 command-substitution  (forced one-time)" in out
    assert "A $(...) runs a program that no capability names." in out


def test_explain_view_says_when_a_code_is_not_registered(monkeypatch):
    monkeypatch.delitem(render.REGISTRY, "RF999", raising=False)
    v = Verdict("x", "one_time", findings=(Finding("RF999", "mystery", (0, 1)),))
    assert "RF999  (not in the rule registry)" in plain(render.explain_view(v))


def test_rule_view_uses_ruffs_sections_in_order():
    rule = Rule("RF104", "heredoc", "A heredoc feeds inline text to a program",
                "Heredoc bodies are code.", "cat <<EOF\nhi\nEOF", "cat file",
                known_problems="Quoted delimiters are still one-time.")
    out = plain(render_rules.rule_view(rule))
    assert out.splitlines()[0] == "RF104 heredoc  (forced one-time; active)"
    positions = [out.index(title) for title in render_rules.SECTIONS]
    assert positions == sorted(positions)
    assert "    cat <<EOF\n    hi\n    EOF" in out
    assert "Quoted delimiters are still one-time." in out
    bare = Rule("RF105", "x-y", "s", "e", "b", "g")
    assert "None known." in plain(render_rules.rule_view(bare))


def test_rules_table_has_one_row_per_rule():
    rules = [Rule("RF001", "parse-error", "Parse error", "e", "b", "g"),
             Rule("RF002", "old-rule", "Old", "e", "b", "g", status="retired")]
    out = plain(render_rules.rules_table(rules))
    row1 = next(line for line in out.splitlines() if "RF001" in line)
    row2 = next(line for line in out.splitlines() if "RF002" in line)
    assert "parse-error" in row1 and "parse / fail-closed" in row1 and "active" in row1
    assert "old-rule" in row2 and "retired" in row2


@pytest.mark.parametrize("code", list(REGISTRY))
def test_every_registered_rule_renders_all_sections(code):
    rule = REGISTRY[code]
    out = plain(render_rules.rule_view(rule), width=400)
    assert out.splitlines()[0] == f"{code} {rule.name}  ({rule.family}; {rule.status})"
    positions = [out.index(title) for title in render_rules.SECTIONS]
    assert positions == sorted(positions)
    for example in (rule.bad, rule.good):
        shown = render.visible(render_rules.shorten(example), keep_newlines=True)
        first = shown.splitlines()[0]
        assert "    " + first in out
    assert " ".join(rule.explanation.split()) in " ".join(out.split())


def test_shorten_says_how_much_was_left_out():
    assert render_rules.shorten("abc", limit=3) == "abc"
    assert render_rules.shorten("abcdef", limit=3) == "abc… (3 more characters)"


def test_huge_verdicts_are_capped_for_people_with_a_pointer_to_json():
    n = render.MAX_ROWS + 50
    cmd = "|".join(["ls"] * n)
    caps = tuple(Capability("ls", "ls", ("ls",), (3 * i, 3 * i + 2)) for i in range(n))
    v = Verdict(cmd, "capability", caps)
    labels = _labels(render.invocation_tree(v))
    assert labels[1] == (1, f"pipeline ({n} stages)")
    stages = [t for d, t in labels if d == 2]
    assert len(stages) == render.MAX_ROWS + 1
    assert stages[-1] == "… and 50 more stages (ringfence check --json lists all)"
    out = plain(render.verdict_view(v), width=400)
    assert sum(line.startswith("│ ls ") for line in out.splitlines()) == render.MAX_ROWS
    assert "… and 50 more capabilities (ringfence check --json lists all)" in out
