"""The replay's promises (bench/hook_replay.py): after one yes to a capability its
decorated variants are `allow`; no `one_time` command ever becomes `allow` through
a grant; grants need fewer prompts than today's hook."""

from __future__ import annotations

import sys

import pytest

from tests.conftest import ROOT, SHARED_CORPUS

sys.path.insert(0, str(ROOT / "bench"))
import hook_replay  # noqa: E402

SESSION = [
    "longbridge quote AAPL.US",
    "longbridge quote TSLA.US | tail -5",
    "longbridge news FIG.US 2>&1 | head -30",
    "./longbridge quote X",                              # another key: asks
    "pytest -q",
    "pytest -q tests/x 2>&1 | tail -20",
    "echo $(longbridge quote X)",                        # one_time: asks every time
    "echo $(longbridge quote X)",
    "cat <<'EOF' | longbridge import\nA\nEOF",
    "cat <<'EOF' | longbridge import\nA\nEOF",
    "git push origin main",
    "git push origin feature",
]


def test_one_yes_then_variants_allow_and_one_time_never(tmp_path):
    result = hook_replay.replay([SESSION])
    [row] = result["sessions"]
    assert row["one_time_allowed"] == []
    # asks: longbridge, ./longbridge, pytest, 2x echo $(..), 2x heredoc, and both pushes:
    # a yes to `git push origin main` never covers another push (issue 20)
    assert row["ringfence_with_grants"] == 9
    assert row["ringfence_without_grants"] == len(SESSION)
    assert row["variants_allowed_by_grant"] == 3     # 2 longbridge, 1 pytest
    assert row["claude_one_time_unasked"] == 2       # the repeated $(..) and heredoc


def test_replay_of_the_shared_corpus_keeps_the_promises():
    commands = hook_replay.load_corpus(SHARED_CORPUS / "agent-synthetic.jsonl")
    if commands is None:
        pytest.skip(f"shared corpus not found at {SHARED_CORPUS}")
    result = hook_replay.replay(hook_replay.sessions(commands, 1, 80))
    [row] = result["sessions"]
    assert row["one_time_allowed"] == []
    assert row["ringfence_with_grants"] < row["ringfence_without_grants"]
    assert row["variants_allowed_by_grant"] > 0


def test_realistic_session_with_the_settings_init_writes():
    """Issue 20 §9: no more prompts than stock Claude Code, and no irreversible
    variant allowed after a yes to `git push origin main`."""
    r = hook_replay.realistic()
    assert r["calls"] == 50
    stock = r["stock_claude_code"]["prompts"]
    assert r["wrap"]["prompts"] <= stock and r["no_wrap"]["prompts"] <= stock
    assert r["wrap"]["irreversible_variants_allowed"] == []
    assert r["no_wrap"]["irreversible_variants_allowed"] == []
    for mode in ("wrap", "no_wrap"):
        assert {"git push --force origin main", "git push --delete origin old-feature",
                "git -C ../other push -f"} <= set(r[mode]["asked"])
        assert r[mode]["asked"].count("git push origin main") == 1   # the exact one: once
    assert r["stock_claude_code"]["irreversible_variants_allowed"] > 0
