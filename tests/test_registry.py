"""The one rule registry is well-formed."""

import re

from ringfence.rfcore.rules import FAMILIES, REGISTRY, Rule


def test_codes_are_unique_well_formed_and_in_a_family():
    for code, rule in REGISTRY.items():
        assert isinstance(rule, Rule)
        assert code == rule.code
        assert re.fullmatch(r"RF[0-6]\d\d", code), code
        assert code[:3] in FAMILIES
        assert re.fullmatch(r"[a-z0-9]+(-[a-z0-9]+)*", rule.name), rule.name


def test_every_active_rule_is_documented():
    for rule in REGISTRY.values():
        if rule.status == "active":
            assert rule.summary and rule.explanation, rule.code
            assert rule.bad and rule.good, rule.code
            assert rule.bad != rule.good, rule.code


def test_rule_names_are_unique():
    names = [r.name for r in REGISTRY.values()]
    assert len(names) == len(set(names))
