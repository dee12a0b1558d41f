"""docs/profiles.md documents every schema key and every lint code."""

from pathlib import Path

from ringfence.profiles.schema import all_keys
from ringfence.rfcore.rules import REGISTRY

DOC = (Path(__file__).resolve().parents[2] / "docs" / "profiles.md").read_text(encoding="utf-8")


def test_every_schema_key_is_documented():
    missing = [k for k in all_keys() if f"| `{k}` |" not in DOC]
    assert missing == []


def test_every_lint_code_is_documented_with_its_name():
    for code, rule in REGISTRY.items():
        if code.startswith("RF5"):
            assert f"| {code} | {rule.name} |" in DOC, code
