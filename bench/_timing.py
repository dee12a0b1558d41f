"""Timing helpers shared by the benchmarks: wall-clock runs of whole commands.

Speed is reported as ratios against baselines measured in the same run, never
asserted in tests.
"""

from __future__ import annotations

import os
import shutil
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


BASELINE_LABEL = "python -c pass (ringfence's interpreter)"


def baseline_python() -> str:
    """The interpreter ringfence's console script runs on: same binary, same site
    setup, so a ratio measures ringfence's own cost. Not the pyenv shim (a bash
    script, ~50 ms more), and not the bare binary, which also processes the base
    installation's site-packages (.pth hooks) that a venv skips."""
    return sys.executable


def real_python() -> str:
    """The real interpreter binary behind ``python3``.

    On pyenv machines ``python3`` on PATH is a bash shim that costs ~50 ms more
    than the interpreter; a fair baseline uses the binary itself.
    """
    return os.path.realpath(sys.executable if sys.base_prefix == sys.prefix
                            else os.path.join(sys.base_prefix, "bin", "python3"))


def ringfence_bin() -> str:
    """The ``ringfence`` console script of the environment running the bench."""
    cand = Path(sys.executable).with_name("ringfence")
    return str(cand) if cand.exists() else (shutil.which("ringfence") or "ringfence")


@dataclass
class Timing:
    label: str
    samples: list[float]          # seconds
    ok: bool = True
    note: str = ""

    @property
    def median(self) -> float:
        return statistics.median(self.samples) if self.samples else float("nan")

    @property
    def p99(self) -> float:
        if not self.samples:
            return float("nan")
        s = sorted(self.samples)
        return s[min(len(s) - 1, int(round(0.99 * (len(s) - 1))))]


def time_command(label: str, argv: list[str], *, runs: int = 20, warmup: int = 2,
                 env: dict | None = None, cwd: str | None = None,
                 expect_status: int | None = 0, stdin: bytes | None = None) -> Timing:
    """Median-friendly wall-clock samples of ``argv`` (stdout discarded)."""
    samples: list[float] = []
    for i in range(warmup + runs):
        t0 = time.perf_counter()
        proc = subprocess.run(argv, env=env, cwd=cwd, input=stdin,
                              stdin=None if stdin is not None else subprocess.DEVNULL,
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        dt = time.perf_counter() - t0
        if expect_status is not None and proc.returncode != expect_status:
            err = proc.stderr.decode(errors="replace").strip().splitlines()
            return Timing(label, [], ok=False,
                          note=f"exit {proc.returncode}: {err[-1] if err else ''}"[:160])
        if i >= warmup:
            samples.append(dt)
    return Timing(label, samples)


def ms(seconds: float) -> str:
    return "n/a" if seconds != seconds else f"{seconds * 1000:.1f} ms"


def ratio(a: Timing, b: Timing) -> str:
    if not (a.ok and b.ok and a.samples and b.samples):
        return "n/a"
    return f"{a.median / b.median:.2f}x"


def table(rows: list[list[str]], headers: list[str]) -> str:
    """A plain markdown table (also readable in a terminal)."""
    widths = [max(len(str(r[i])) for r in rows + [headers]) for i in range(len(headers))]
    line = lambda cells: "| " + " | ".join(str(c).ljust(w) for c, w in zip(cells, widths)) + " |"
    sep = "|" + "|".join("-" * (w + 2) for w in widths) + "|"
    return "\n".join([line(headers), sep, *(line(r) for r in rows)])
