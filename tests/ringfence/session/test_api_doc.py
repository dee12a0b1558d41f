"""docs/api.md's agent-loop example runs as written: it waits, a person decides in
another process (`ringfence approve ID --defer`), and the loop prints the command's
real output (issue 24)."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys

import pytest

from tests.compiler.sandbox_util import CLI
from tests.conftest import ROOT

pytestmark = [
    pytest.mark.sandbox,
    pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap is not installed"),
]


def example() -> str:
    text = (ROOT / "docs" / "api.md").read_text(encoding="utf-8")
    section = text.split("## Example: an agent loop", 1)[1]
    return re.search(r"```python\n(.*?)```", section, re.S).group(1)


def test_the_agent_loop_example_waits_and_resumes_with_real_output(box):
    env = box.env()
    env.pop("RINGFENCE_SESSION", None)
    proc = subprocess.Popen([sys.executable, "-c", example()], cwd=box.ws, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    lines = []
    try:
        for line in proc.stdout:
            lines.append(line)
            m = re.match(r"waiting for a person: (ringfence approve (ap_\w+) --defer)", line)
            if m and sum("waiting for a person" in x for x in lines) == 1:
                d = subprocess.run([*CLI, "approve", m.group(2), "--defer"], cwd=box.ws,
                                   env=env, capture_output=True, text=True, timeout=60)
                assert d.returncode == 0, d.stderr
        proc.wait(120)
    finally:
        if proc.poll() is None:
            proc.kill()
    out = "".join(lines)
    assert proc.returncode == 0, proc.stderr.read()
    assert "ls -> completed (exit 0)" in out and "README" in out
    assert "git push origin HEAD -> failed" in out
    # git's own words, from inside the sandbox, reached this caller after the resume.
    tail = out.split("git push origin HEAD -> failed", 1)[1]
    assert "fatal" in tail or "error" in tail
