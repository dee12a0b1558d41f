"""Every classifier rule's documented examples are executed: `bad` must produce
its code, `good` must not (ShellCheck/ruff style)."""

from __future__ import annotations

import pytest

from ringfence.classifier import classify
from ringfence.rfcore.rules import REGISTRY

CLASSIFIER_RULES = [r for c, r in REGISTRY.items()
                    if c[:3] in ("RF0", "RF1", "RF2", "RF3") and r.status == "active"]


def _codes(command: str) -> set[str]:
    v = classify(command)
    return {f.code for f in v.findings} | {d.code for d in v.decorations}


@pytest.mark.parametrize("rule", CLASSIFIER_RULES, ids=[r.code for r in CLASSIFIER_RULES])
def test_bad_example_triggers_the_rule(rule):
    assert rule.code in _codes(rule.bad)


@pytest.mark.parametrize("rule", CLASSIFIER_RULES, ids=[r.code for r in CLASSIFIER_RULES])
def test_good_example_does_not(rule):
    assert rule.code not in _codes(rule.good)


@pytest.mark.parametrize("rule", CLASSIFIER_RULES, ids=[r.code for r in CLASSIFIER_RULES])
def test_forcing_families_make_the_bad_example_one_time(rule):
    # RF0xx and RF1xx force one-time; RF2xx/RF3xx never do on their own.
    v = classify(rule.bad)
    if rule.code[:3] in ("RF0", "RF1"):
        assert v.verdict == "one_time"
    else:
        assert v.verdict in ("helper", "capability")


def test_every_engine_code_is_registered():
    from ringfence.classifier.rules import (
        capability,
        decoration,
        effects,
        implied,
        launchers,
        onetime,
        failclosed as parse,
        values,
    )

    engine_codes = [code for fam in (parse.CHECKS, onetime.CHECKS, values.CHECKS, effects.CHECKS,
                                     launchers.CHECKS, capability.CHECKS, decoration.CHECKS)
                    for code, _, _ in fam]
    assert len(engine_codes) == len(set(engine_codes))
    # implied.py adds checks to codes the families own (a sed script in a file is RF111)
    assert {code for code, _, _ in implied.CHECKS} <= set(engine_codes)
    parse_problem_codes = {"RF001", "RF002", "RF005", "RF006", "RF007", "RF008", "RF009",
                           "RF010"}
    registered = {r.code for r in CLASSIFIER_RULES}
    assert set(engine_codes) | parse_problem_codes == registered
