"""Property-based invariants of the classifier (issue 6, SPEC §2).

Each property is one small test over grammar-generated shell (strategies.py).
A failure is a classifier bug: hypothesis shrinks it to a minimal command.
"""

from __future__ import annotations

import time

import pytest
from hypothesis import Phase, given, settings
from hypothesis import strategies as st

from . import strategies as S
from .conftest import PROFILE

FUZZ = settings(settings.get_profile(PROFILE))
SLOW_MS = 50.0


@pytest.fixture(scope="module")
def classify(slow_counter):
    # A plain import: a classifier that fails to import is a failure, not a skip.
    from ringfence.classifier.engine import classify as engine_classify

    def timed(cmd: str):
        start = time.perf_counter()
        verdict = engine_classify(cmd)
        ms = (time.perf_counter() - start) * 1000
        slow_counter["calls"] += 1
        slow_counter["worst_ms"] = max(slow_counter["worst_ms"], ms)
        if ms > SLOW_MS:
            slow_counter["slow"] += 1
        return verdict

    return timed


@FUZZ
@given(cmd=st.one_of(S.any_text, S.compound(), S.with_live_construct()))
def test_never_crashes(classify, cmd):
    verdict = classify(cmd)
    assert verdict.command == cmd
    assert verdict.verdict in ("helper", "capability", "one_time")
    if verdict.verdict == "one_time":
        assert verdict.findings, "one_time without a finding to say why"
    if verdict.verdict == "capability":
        assert verdict.capabilities
    for cap in verdict.capabilities:
        assert 0 <= cap.span[0] <= cap.span[1] <= len(cmd)


@FUZZ
@given(cmd=S.with_live_construct())
def test_live_substitution_heredoc_or_inline_code_is_one_time(classify, cmd):
    assert classify(cmd).verdict == "one_time", cmd


@FUZZ
@given(cmd=S.compound(), deco=S.decoration)
def test_appending_decoration_keeps_the_keys(classify, cmd, deco):
    base = classify(cmd)
    decorated = classify(f"{cmd} {deco}")
    assert decorated.keys == base.keys
    assert decorated.verdict == base.verdict


@FUZZ
@given(words=S.simple_words(), data=st.data())
def test_requoting_a_word_keeps_the_keys(classify, words, data):
    styles = data.draw(st.lists(S.quote_style, min_size=len(words), max_size=len(words)))
    plain = classify(S.render(words))
    requoted = classify(S.render(words, styles))
    assert requoted.keys == plain.keys
    assert requoted.verdict == plain.verdict
    # And the argv is exactly bash's words after quote removal.
    assert [c.argv for c in requoted.capabilities] == [tuple(words)]


JOINERS = ("{a} && {b}", "{a} || {b}", "{a}; {b}", "{a} | {b}", "if {a}; then {b}; fi",
           "( {a} ) && {{ {b}; }}", "while {a}; do {b}; done", "{a} 2>&1 | {b}")


@FUZZ
@given(a=S.simple_words(), b=S.simple_words(), joiner=st.sampled_from(JOINERS), data=st.data())
def test_requoting_inside_compound_commands_keeps_the_keys(classify, a, b, joiner, data):
    styles_a = data.draw(st.lists(S.quote_style, min_size=len(a), max_size=len(a)))
    styles_b = data.draw(st.lists(S.quote_style, min_size=len(b), max_size=len(b)))
    plain = classify(joiner.format(a=S.render(a), b=S.render(b)))
    requoted = classify(joiner.format(a=S.render(a, styles_a), b=S.render(b, styles_b)))
    assert requoted.keys == plain.keys
    assert requoted.verdict == plain.verdict
    assert (sorted(c.argv for c in requoted.capabilities)
            == sorted(c.argv for c in plain.capabilities))


@FUZZ
@given(words=S.simple_words(), wrap=S.wrapper, tail=st.sampled_from(("", " | head -n 5", " && ls")))
def test_wrapping_never_hides_a_capability(classify, words, wrap, tail):
    plain = classify(S.render(words) + tail)
    wrapped = classify(f"{wrap} {S.render(words)}{tail}")
    assert set(plain.keys) <= set(wrapped.keys), (plain.keys, wrapped.keys)
    assert wrapped.verdict != "helper"


@FUZZ
@given(words=S.simple_words(), dead=S.dead_word)
def test_dead_substitution_is_just_a_word(classify, words, dead):
    plain = classify(S.render(words) + " x")
    quoted = classify(S.render(words) + " " + dead)
    assert quoted.keys == plain.keys
    assert quoted.verdict == plain.verdict, (quoted.command, quoted.codes)


@pytest.mark.sandbox
# No shrinking: every step would cost a sandbox run, and the failure message
# already names each disagreeing command with both sides.
@settings(FUZZ, max_examples=12 if PROFILE == "ci" else 200,
          phases=(Phase.explicit, Phase.reuse, Phase.generate))
@given(cmds=st.lists(S.tricky_command, min_size=40, max_size=40))
def test_classifier_words_equal_bash_words(classify, cmds):
    """Differential fuzzing: tricky quoting, checked against the bash oracle.

    One example is a batch of 40 commands, so one oracle sandbox answers them
    all. A capability's argv must be exactly the words bash executes.
    """
    from tests.conftest import NO_BWRAP, have_bwrap
    from tests.differential.compare import compare, format_problem
    from tests.differential.oracle import run_oracle

    if not have_bwrap():
        pytest.skip(NO_BWRAP)
    bad = []
    for cmd, seen in zip(cmds, run_oracle(cmds, passes=(0,))):
        outcome = compare(classify(cmd), seen)
        if outcome.problems:
            bad.append(format_problem(outcome))
    assert not bad, "\n".join(bad)


@FUZZ
@given(words=S.simple_words(), op=st.sampled_from(S.OUTPUT_OPS), style=S.quote_style,
       target=st.sampled_from(S.EXEMPT_TARGETS + S.WRITE_TARGETS))
def test_output_redirection_is_one_time_unless_exempt(classify, words, op, style, target):
    # Whatever the quoting of the target: a write to a real file (or a
    # /dev/tcp socket) is one_time; /dev/null, /dev/stdout, /dev/stderr are
    # decoration and keep the command's keys and class.
    plain = classify(S.render(words))
    redirected = classify(f"{S.render(words)} {op}{S.requote(target, style)}")
    if target in S.EXEMPT_TARGETS:
        assert (redirected.verdict, redirected.keys) == (plain.verdict, plain.keys)
    else:
        assert redirected.verdict == "one_time", redirected.command


@FUZZ
@given(words=S.one_time_words, data=st.data())
def test_requoting_never_evades_one_time(classify, words, data):
    styles = data.draw(st.lists(S.quote_style, min_size=len(words), max_size=len(words)))
    assert classify(S.render(words)).verdict == "one_time", words
    requoted = classify(S.render(words, styles))
    assert requoted.verdict == "one_time", requoted.command
