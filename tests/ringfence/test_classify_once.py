"""The run path classifies once: the runner reuses the governor's verdict, but only
for exactly the same text (a verdict for another command is never trusted)."""

from __future__ import annotations

import pytest

classifier = pytest.importorskip("ringfence.classifier.engine")

from ringfence.classifier import classify  # noqa: E402
from ringfence.session import governor as G  # noqa: E402
from ringfence.session import runner  # noqa: E402


def test_prepare_reuses_a_verdict_for_the_same_text(tmp_path):
    v = classify("ls | head")
    p = runner.prepare(command="ls | head", profile="strict", workspace=str(tmp_path),
                       env={"PATH": "/usr/bin:/bin"}, verdict=v)
    assert p.verdict is v


def test_prepare_reclassifies_when_the_verdict_is_for_another_text(tmp_path):
    # A helper verdict handed in for a destructive command must not decide for it.
    helper = classify("ls")
    p = runner.prepare(command="git push --force", profile="strict",
                       workspace=str(tmp_path), env={"PATH": "/usr/bin:/bin"}, verdict=helper)
    assert p.verdict is not helper
    assert p.verdict.command == "git push --force"
    assert p.verdict == classify("git push --force")


def test_default_deps_hand_the_governor_verdict_to_the_runner(monkeypatch):
    seen = {}

    def fake_run(argv=None, *, command=None, verdict=None, **kwargs):
        seen.update(argv=argv, command=command, verdict=verdict)
        return "ran"

    monkeypatch.setattr(runner, "run", fake_run)
    deps = G.default_deps()
    v = deps.classify("echo 'a b'")
    assert deps.classify("echo 'a b'") is v          # classified once
    assert deps.run_sandbox(["echo", "a b"], profile=None) == "ran"
    assert seen == {"argv": ["echo", "a b"], "command": None, "verdict": v}
    deps.run_sandbox(None, command="echo other")     # never classified by the governor
    assert seen["verdict"] is None
