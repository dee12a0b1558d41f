"""Shared fixtures.

``../shared/corpus`` (beside the checkout) holds unlabeled third-party command
corpora. CI always has it; a user's clone does not, so tests that need it skip
with a clear reason instead of failing.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SHARED_CORPUS = Path(os.environ.get("RINGFENCE_SHARED_CORPUS", ROOT.parent / "shared" / "corpus"))
NO_SHARED = (f"shared corpus not found at {SHARED_CORPUS} (it sits beside the checkout "
             "in CI; set RINGFENCE_SHARED_CORPUS to point elsewhere)")


def read_shared_corpus(name: str) -> list[str]:
    """Commands of one shared corpus file: NL2Bash (.cm, one per line) or JSONL strings."""
    path = SHARED_CORPUS / name
    if not path.is_file():
        pytest.skip(NO_SHARED)
    text = path.read_text(encoding="utf-8", errors="surrogateescape")
    if name.endswith(".jsonl"):
        return [json.loads(line) for line in text.splitlines() if line.strip()]
    return [line for line in text.splitlines() if line.strip()]


@pytest.fixture
def nl2bash() -> list[str]:
    return read_shared_corpus("nl2bash.cm")


@pytest.fixture
def agent_corpus() -> list[str]:
    return read_shared_corpus("agent-synthetic.jsonl")


NO_BWRAP = ("bwrap is not installed: `make test` installs bubblewrap with apt-get when "
            "run as root; without it ringfence refuses every sandboxed run (exit 125)")


def have_bwrap() -> bool:
    return shutil.which("bwrap") is not None


@pytest.fixture
def box():
    """A throw-away sandbox test box (workspace, HOME, state dirs; see
    tests/compiler/sandbox_util.make_box), removed after the test. A test module
    that needs more in its box defines its own ``box`` fixture."""
    from tests.compiler.sandbox_util import make_box

    b = make_box()
    yield b
    shutil.rmtree(b.root, ignore_errors=True)
