"""Every command of ../shared/corpus goes through classify(): none may crash,
every verdict is valid, every span lies inside the command."""

from __future__ import annotations

import pytest

from ringfence.classifier import classify
from ringfence.rfcore.rules import REGISTRY
from tests.conftest import read_shared_corpus


def _check(cmd: str) -> None:
    v = classify(cmd)
    assert v.command == cmd
    assert v.verdict in ("helper", "capability", "one_time")
    assert v.parser == "tree-sitter-bash"
    n = len(cmd)
    spans = [c.span for c in v.capabilities] + [d.span for d in v.decorations] + \
            [f.span for f in v.findings]
    for s, e in spans:
        assert 0 <= s <= e <= n, (cmd, s, e)
    for d in v.decorations:
        assert d.code.startswith("RF3") and d.code in REGISTRY
        assert d.text == cmd[d.span[0]:d.span[1]]
    for f in v.findings:
        assert f.code in REGISTRY and f.code[:3] in ("RF0", "RF1", "RF2") and f.message
    forced = any(f.code[:3] in ("RF0", "RF1") for f in v.findings)
    assert (v.verdict == "one_time") == forced
    if v.verdict == "capability":
        assert v.capabilities and all(c.key for c in v.capabilities)
    if v.verdict == "helper":
        assert not v.capabilities
    v.to_json()


@pytest.mark.parametrize("name", ["nl2bash.cm", "agent-synthetic.jsonl"])
def test_shared_corpus_never_crashes(name):
    cmds = read_shared_corpus(name)
    assert len(cmds) > 1000
    for cmd in cmds:
        _check(cmd)


def test_agent_corpus_classes_are_plausible(agent_corpus):
    # Sanity on the distribution (not a label set): agent commands are mostly
    # approvable capabilities, and heredocs/substitutions are one-time.
    verdicts = [classify(c) for c in agent_corpus]
    for cmd, v in zip(agent_corpus, verdicts):
        if "<<" in cmd and "<<<" not in cmd:
            assert v.verdict == "one_time", cmd
    caps = sum(v.verdict == "capability" for v in verdicts)
    assert caps > len(verdicts) // 2
