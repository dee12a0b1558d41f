"""Properties of the option-effects table, privilege escalation and ringfence's
own control commands (issue 11 §1, §3, §4), generated from the tables.

- any row of classifier/effects_data.py, with any quoting, any operands around
  it, under any transparent wrapper, is one-time with the row's code and its
  effect in the capability's `effects`;
- every form of sudo/doas/pkexec/run0/su is RF123;
- a ringfence control command, however reached, is RF134 and the gate denies it
  in every context; a read-only one never is.
"""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from ringfence.classifier import classify
from ringfence.classifier.effects_data import KIND_CODES, TOOLS
from ringfence.classifier.selfcontrol import READ_ONLY, READ_ONLY_GROUPS

from . import strategies as S
from .conftest import PROFILE

FUZZ = settings(settings.get_profile(PROFILE))

# (program words, option, kind, takes a value, target, operands may come first).
# Rows whose value is judged by what it says (``judge:``: `pytest -p no:x`,
# `--rootdir=.`) are one-time only for some values: tests/classifier/test_code_options.py
# names both sides.
ROWS = [(key.split(), opt, row.kind, opt in tool.value, row.target, tool.options_until < 0)
        for key, tool in TOOLS.items() if tool.style == "getopt"
        for row in tool.rows for opt in sorted(row.options)
        if not row.target.startswith("judge:")]
operand = S.word_text


@st.composite
def effect_command(draw):
    words, opt, kind, takes, target, permutes = draw(st.sampled_from(ROWS))
    before = draw(st.lists(operand, max_size=2 if permutes else 0))
    after = draw(st.lists(operand, min_size=2 if target == "operands" else 0, max_size=3))
    value = draw(operand)
    if takes:
        forms = [[opt, value]]
        forms.append([f"{opt}={value}"] if opt.startswith("--") else [f"{opt}{value}"])
        option_words = draw(st.sampled_from(forms))
    else:
        option_words = [opt]
    styles = draw(st.lists(S.quote_style, min_size=len(option_words),
                           max_size=len(option_words)))
    argv = [*words, *before, *(S.requote(w, s) for w, s in zip(option_words, styles)), *after]
    wrap = draw(st.sampled_from(("",) + S.WRAPPERS))
    tail = draw(st.sampled_from(("", " 2>&1 | head -n 5", " && echo done")))
    return (f"{wrap} " if wrap else "") + " ".join(argv) + tail, KIND_CODES[kind], kind


@FUZZ
@given(case=effect_command())
def test_every_listed_option_is_one_time_with_its_code_and_effect(case):
    cmd, code, kind = case
    v = classify(cmd)
    assert v.verdict == "one_time", cmd
    assert code in v.codes, (cmd, v.codes)
    assert any(e.startswith(f"{kind}:") for c in v.capabilities for e in c.effects), cmd


@FUZZ
@given(words=S.simple_words(), style=S.quote_style,
       prefix=st.sampled_from(("", "-i ", "-s ", "--login ", "-u root ", "-E ", "-l ", "-")),
       prog=st.sampled_from(("sudo", "doas", "pkexec", "run0", "su", "/usr/bin/sudo")),
       alone=st.booleans())
def test_privilege_escalation_is_one_time_in_every_form(words, style, prefix, prog, alone):
    if prefix == "-" and prog != "su":
        prefix = ""
    cmd = f"{S.requote(prog, style)} {prefix}" + ("" if alone else S.render(words))
    v = classify(cmd.strip())
    assert v.verdict == "one_time" and "RF123" in v.codes, cmd


CONTROL = ("approve ap_k3j5x7q2mn", "deny ap_x", "grants revoke --all", "hook claude-code",
           "init", "ledger prune", "run --host -- ls", "run --sandbox off -c ls",
           "run --sandbox=off -c ls", "run -p host -- ls", "run --profile ./p.toml -- ls",
           "run -w /home -c ls", "profile edit x", "frobnicate")
READS = tuple(sorted(READ_ONLY)) + tuple(f"{g} {s}" for g, subs in READ_ONLY_GROUPS.items()
                                         for s in sorted(subs)) + ("run -c ls",
                                                                   "run -p strict -- ls")
HOW = ("ringfence", "./ringfence", ".venv/bin/ringfence", "/usr/local/bin/ringfence",
       "python3 -m ringfence", "python -m ringfence", "env ringfence", "uvx ringfence",
       "nice ringfence", "timeout 5 ringfence")


@FUZZ
@given(how=st.sampled_from(HOW), sub=st.sampled_from(CONTROL), style=S.quote_style,
       context=st.sampled_from(("host", "sandbox")),
       profile=st.sampled_from(("build", "strict", "observe", "host")))
def test_ringfence_control_is_denied_everywhere(how, sub, style, context, profile):
    from ringfence.session.gate import decide
    from ringfence.profiles.load import load_profile

    first, _, rest = sub.partition(" ")
    cmd = f"{how} {S.requote(first, style)} {rest}".strip()
    v = classify(cmd)
    assert "RF134" in v.codes, cmd
    d = decide(v, load_profile(profile), grants=frozenset(v.keys), context=context)
    assert d.decision == "deny" and any("person's act" in r for r in d.reasons), cmd


@FUZZ
@given(how=st.sampled_from(HOW), sub=st.sampled_from(READS), style=S.quote_style)
def test_ringfence_read_only_commands_are_never_control(how, sub, style):
    first, _, rest = sub.partition(" ")
    cmd = f"{how} {S.requote(first, style)} {rest}".strip()
    assert "RF134" not in classify(cmd).codes, cmd
