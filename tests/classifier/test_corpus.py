"""Every labeled case in corpus/*.jsonl is asserted exactly: class, keys (in
first-seen order), finding codes and decoration codes (sorted, distinct)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ringfence.classifier import classify
from ringfence.rfcore.rules import REGISTRY

CORPUS = Path(__file__).resolve().parents[2] / "corpus"


def _cases() -> list[tuple[str, int, dict]]:
    out = []
    for path in sorted(CORPUS.glob("*.jsonl")):
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if line.strip():
                out.append((path.name, n, json.loads(line)))
    return out


CASES = _cases()


@pytest.mark.parametrize("case", [c[2] for c in CASES],
                         ids=[f"{c[0]}:{c[1]}" for c in CASES])
def test_corpus_case(case):
    v = classify(case["cmd"])
    got = {
        "class": v.verdict,
        "capabilities": list(v.keys),
        "codes": sorted(set(v.codes)),
        "decorations": sorted({d.code for d in v.decorations}),
    }
    want = {k: case[k] for k in got}
    assert got == want, case.get("note", "")


def test_corpus_is_large_and_well_formed():
    assert len(CASES) >= 300
    keys = {"cmd", "class", "capabilities", "codes", "decorations", "note"}
    for name, n, case in CASES:
        assert set(case) == keys, f"{name}:{n}"
        assert case["class"] in ("helper", "capability", "one_time"), f"{name}:{n}"
        assert case["codes"] == sorted(set(case["codes"])), f"{name}:{n}"


def test_corpus_covers_every_classifier_rule():
    seen = set()
    for _, _, case in CASES:
        seen.update(case["codes"], case["decorations"])
    wanted = {c for c, r in REGISTRY.items() if c[:3] in ("RF0", "RF1", "RF2", "RF3")
              and r.status == "active"}
    assert wanted - seen == set()


def test_mission_seed():
    v = classify("longbridge news FIG.US 2>&1 | head -30")
    assert v.verdict == "capability"
    assert v.keys == ("longbridge",)
    assert [(d.code, d.text) for d in v.decorations] == [("RF301", "2>&1"),
                                                         ("RF305", "| head -30")]
    assert v.findings == ()
    assert v.capabilities[0].argv == ("longbridge", "news", "FIG.US")
