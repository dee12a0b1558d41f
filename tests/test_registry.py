"""The one rule registry is well-formed."""

import re
import sys

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


def test_every_rules_file_is_a_family_module():
    # A new rules/*.py file must be listed in _MODULES, or its codes would be missing.
    import pathlib

    from ringfence.rfcore import rules

    files = {p.stem for p in pathlib.Path(rules.__file__).parent.glob("*.py")} - {"__init__"}
    assert {name for _, name in rules._MODULES} == files
    assert {fam for fam, _ in rules._MODULES} == set(FAMILIES)


def test_one_lookup_loads_only_its_family():
    import subprocess
    import sys

    code = ("import sys; from ringfence.rfcore.rules import REGISTRY, get\n"
            "print(REGISTRY['RF203'].name, get('rf301').code, 'RF131' in REGISTRY,\n"
            "      'RF999' in REGISTRY, REGISTRY.get('RF4'))\n"
            "print(sorted(m for m in sys.modules if m.startswith('ringfence.rfcore.rules.')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout.splitlines()
    assert out[0].split()[1:] == ["RF301", "True", "False", "None"]
    assert out[1] == str(["ringfence.rfcore.rules.capability", "ringfence.rfcore.rules.decoration",
                          "ringfence.rfcore.rules.effects", "ringfence.rfcore.rules.onetime"])
    # Iterating loads everything, in code order, as before.
    assert list(REGISTRY) == sorted(REGISTRY) and len(REGISTRY) == len(list(REGISTRY.values()))


def test_first_lookups_from_many_threads_load_each_family_once():
    """classify() runs in threads: a family's first load must not race (a second
    thread re-running the load saw its own rules as duplicates)."""
    import threading

    from ringfence.rfcore.rules import _Registry

    old = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    errors: list[str] = []
    try:
        for _ in range(20):
            reg = _Registry()
            gate = threading.Barrier(8)

            def look(reg=reg, gate=gate):
                gate.wait()
                try:
                    for code in ("RF101", "RF301", "RF601", "RF501"):
                        assert reg[code].code == code
                except Exception as exc:          # noqa: BLE001 - collected, asserted below
                    errors.append(repr(exc))

            threads = [threading.Thread(target=look) for _ in range(8)]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
            assert len(list(reg)) == len(REGISTRY)
    finally:
        sys.setswitchinterval(old)
    assert errors == []
