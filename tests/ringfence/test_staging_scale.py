"""The change record is exact at 100k files and with 20 concurrent runs.

The tree is generated in the test with plain os calls and removed after.
"""

from __future__ import annotations

import os
import shutil
import subprocess

import pytest

from tests.compiler.sandbox_util import CLI, make_box

pytestmark = [
    pytest.mark.sandbox,
    pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap is not installed"),
]
FILES = 100_000
RUNS = 20


@pytest.fixture(scope="module")
def big():
    b = make_box()
    for d in range(FILES // 1000):
        top = b.ws / "node_modules" / f"pkg{d}"
        top.mkdir(parents=True)
        for f in range(1000):
            os.close(os.open(top / f"f{f}.js", os.O_CREAT | os.O_WRONLY, 0o644))
    for i in range(RUNS):
        (b.ws / f"pre-{i}").write_text("x\n")
    (b.ws / "top-delete").write_text("x\n")
    yield b
    shutil.rmtree(b.root, ignore_errors=True)


def _changes(box, run_id: str) -> dict:
    from ringfence.ledger.store import Ledger

    with Ledger(box.state / "ledger.db") as led:
        return led.get_run(run_id).result("changes")


def _run_ids(box) -> dict[str, str]:
    from ringfence.ledger.store import Ledger

    with Ledger(box.state / "ledger.db") as led:
        return {r.command: r.id for r in led.list_runs(None)}


def test_top_level_create_and_delete_in_a_100k_tree(big):
    r = big.run("strict", "-c", "touch newtop; rm top-delete; echo m >> node_modules/pkg7/f3.js")
    assert r.returncode == 0, r.stderr
    ch = _changes(big, _run_ids(big)["touch newtop; rm top-delete; echo m >> node_modules/pkg7/f3.js"])
    assert (ch["created"], ch["modified"], ch["deleted"], ch["capped"]) == (
        ["newtop"], ["node_modules/pkg7/f3.js"], ["top-delete"], False)
    assert (big.ws / "newtop").exists() and not (big.ws / "top-delete").exists()


def test_concurrent_runs_each_record_exactly_their_own(big):
    procs = []
    for i in range(RUNS):
        cmd = f"touch own-{i}-a own-{i}-b; mkdir dir-{i}; touch dir-{i}/x; rm pre-{i}"
        procs.append((i, cmd, subprocess.Popen(
            [*CLI, "run", "-p", "strict", "-w", str(big.ws), "-c", cmd], cwd=big.ws,
            env=big.env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)))
    for i, cmd, p in procs:
        out, err = p.communicate(timeout=300)
        assert p.returncode == 0, err
    ids = _run_ids(big)
    for i, cmd, _ in procs:
        ch = _changes(big, ids[cmd])
        assert ch["created"] == [f"dir-{i}/x", f"own-{i}-a", f"own-{i}-b"], ch
        assert (ch["modified"], ch["deleted"]) == ([], [f"pre-{i}"])
        assert (big.ws / f"dir-{i}" / "x").exists() and not (big.ws / f"pre-{i}").exists()
    assert big.stages() == []
