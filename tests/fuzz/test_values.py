"""Issue 11 §2: any arithmetic operand that is not a literal integer is one_time,
whatever the quoting; literal integers in the same places are not."""

from __future__ import annotations

from hypothesis import given, settings

from . import strategies as S
from .conftest import PROFILE

FUZZ = settings(settings.get_profile(PROFILE))


def _classify(cmd: str):
    from ringfence.classifier.engine import classify

    return classify(cmd)


@FUZZ
@given(cmd=S.arith_with_variable())
def test_arithmetic_on_a_variable_is_one_time(cmd):
    v = _classify(cmd)
    assert v.verdict == "one_time", cmd
    assert {"RF140"} <= set(v.codes) or any(c.startswith("RF0") for c in v.codes), (cmd, v.codes)


@FUZZ
@given(cmd=S.arith_with_literal())
def test_arithmetic_on_literal_integers_is_not_one_time(cmd):
    v = _classify(cmd)
    # tree-sitter-bash rejects a few valid spellings (`i<0xA` in a `for (( ))`
    # header): RF001 fails closed, which is the parser's doing, not RF140's
    assert v.verdict != "one_time" or all(c.startswith("RF0") for c in v.codes), \
        (cmd, v.codes)
    assert not {"RF140", "RF141", "RF142"} & set(v.codes), (cmd, v.codes)
