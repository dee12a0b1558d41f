"""Classifier speed: latency, throughput (in process and through the CLI), cold start.

    python bench/classify.py [--corpus DIR] [--runs N] [--json]

Every figure is measured in the same run as its baseline and reported as a
ratio, because this machine is shared and absolute numbers drift with load (the
load average is printed alongside). The functions are importable so that a
later ``bench/report.py`` can reuse them. See bench/README.md.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
DEFAULT_CORPUS = Path(os.environ.get("RINGFENCE_SHARED_CORPUS", ROOT.parent / "shared" / "corpus"))
CORPORA = ("nl2bash.cm", "agent-synthetic.jsonl")

# SPEC/issue 2 targets on the 2-core machine.
TARGET_JSONL_PER_S = 10_000
TARGET_JSON_COLD = 5.0
TARGET_HUMAN_COLD = 12.0
PROBE = "ls | head"


sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _timing import BASELINE_LABEL, baseline_python, real_python  # noqa: E402


def load_corpus(path: Path) -> list[str]:
    """Commands of a corpus file: ``.jsonl`` holds JSON strings, others one per line."""
    text = path.read_text(encoding="utf-8", errors="surrogateescape")
    if path.suffix == ".jsonl":
        return [json.loads(line) for line in text.splitlines() if line.strip()]
    return [line for line in text.splitlines() if line.strip()]


def latency(commands: list[str], classify) -> dict:
    """Per-command classify latency in microseconds (median, p99, max), one pass."""
    classify("true")                                   # warm: parser and tables
    ns = []
    clock = time.perf_counter_ns
    for cmd in commands:
        t = clock()
        classify(cmd)
        ns.append(clock() - t)
    ns.sort()
    return {"n": len(ns), "median_us": ns[len(ns) // 2] / 1e3,
            "p99_us": ns[min(len(ns) - 1, int(len(ns) * 0.99))] / 1e3,
            "max_us": ns[-1] / 1e3}


def _cpu(who: int) -> float:
    r = resource.getrusage(who)
    return r.ru_utime + r.ru_stime


def throughput_in_process(commands: list[str], classify, *, serialize: bool = False) -> dict:
    """Commands per second through ``classify`` (optionally + the JSON line).

    ``per_s`` is per wall second; ``cpu_per_s`` per CPU second of this process,
    which other jobs on a shared machine disturb far less.
    """
    classify("true")
    dumps = json.dumps
    c, t = _cpu(resource.RUSAGE_SELF), time.perf_counter()
    if serialize:
        for cmd in commands:
            dumps(classify(cmd).to_json(), ensure_ascii=False)
    else:
        for cmd in commands:
            classify(cmd)
    wall, cpu = time.perf_counter() - t, _cpu(resource.RUSAGE_SELF) - c
    return {"per_s": len(commands) / wall, "cpu_per_s": len(commands) / max(cpu, 1e-9)}


def ringfence_argv() -> list[str]:
    """The installed console script if present (what users run), else ``-m``."""
    script = Path(sys.executable).parent / "ringfence"
    return [str(script)] if script.exists() else [sys.executable, "-m", "ringfence"]


JSONL_MODES = {"default": [], "jobs1": ["--jobs", "1"]}


def throughput_cli(commands: list[str], argv: list[str] | None = None,
                   runs: int = 3) -> dict:
    """Commands per second through ``ringfence check --jsonl`` on the whole file.

    For each mode (default worker count, and ``--jobs 1``: one process), the
    median wall time of ``runs`` subprocesses, interleaved, start-up included.
    stdout goes to a file whose line count is checked, so a failing run cannot
    look fast.
    """
    base = (argv or ringfence_argv()) + ["check", "--jsonl"]
    walls: dict[str, list[float]] = {mode: [] for mode in JSONL_MODES}
    cpus: dict[str, list[float]] = {mode: [] for mode in JSONL_MODES}
    with tempfile.TemporaryDirectory() as tmp:
        src, dst = Path(tmp, "in.jsonl"), Path(tmp, "out.jsonl")
        src.write_text("".join(json.dumps(c) + "\n" for c in commands), encoding="ascii")
        for _ in range(runs):
            for mode, extra in JSONL_MODES.items():
                with src.open("rb") as fin, dst.open("wb") as fout:
                    c, t = _cpu(resource.RUSAGE_CHILDREN), time.perf_counter()
                    proc = subprocess.run(base + extra, stdin=fin, stdout=fout,
                                          stderr=subprocess.PIPE)
                    walls[mode].append(time.perf_counter() - t)
                    cpus[mode].append(_cpu(resource.RUSAGE_CHILDREN) - c)
                with dst.open("rb") as f:
                    lines = sum(1 for _ in f)
                if proc.returncode != 0 or lines != len(commands):
                    raise RuntimeError(
                        f"check --jsonl {' '.join(extra)} failed (exit {proc.returncode}, "
                        f"{lines} of {len(commands)} lines): {proc.stderr.decode()[-500:]}")
    out: dict = {"n": len(commands)}
    for mode, ts in walls.items():
        wall, cpu = statistics.median(ts), statistics.median(cpus[mode])
        out[mode] = {"seconds": wall, "per_s": len(commands) / wall,
                     "cpu_seconds": cpu, "cpu_per_s": len(commands) / max(cpu, 1e-9)}
    return out




def cold_starts(targets: dict[str, list[str]], runs: int) -> dict[str, float]:
    """Median wall seconds per target; runs are interleaved so load drift is shared."""
    times: dict[str, list[float]] = {name: [] for name in targets}
    for _ in range(runs):
        for name, argv in targets.items():
            t = time.perf_counter()
            proc = subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
            times[name].append(time.perf_counter() - t)
            if proc.returncode != 0:
                raise RuntimeError(f"{name}: exit {proc.returncode}: {proc.stderr.decode()[-300:]}")
    return {name: statistics.median(ts) for name, ts in times.items()}


def cold_start_targets() -> dict[str, list[str]]:
    rf = ringfence_argv()
    targets = {BASELINE_LABEL: [baseline_python(), "-c", "pass"],
               "python -c pass (bare binary, base site-packages)": [real_python(), "-c", "pass"]}
    shim = shutil.which("python3")
    if shim and os.path.realpath(shim) != real_python():
        targets["python3 -c pass (PATH python3)"] = [shim, "-c", "pass"]
    targets.update({
        f"ringfence check --json '{PROBE}'": rf + ["check", "--json", PROBE],
        f"ringfence check '{PROBE}'": rf + ["check", PROBE],
        f"ringfence explain '{PROBE}'": rf + ["explain", PROBE],
    })
    return targets


def run(corpus: Path, runs: int = 15) -> dict:
    """All measurements, as one JSON-able dict."""
    from ringfence.classifier import classify

    report: dict = {"python": baseline_python(), "ringfence": ringfence_argv(),
                    "loadavg_start": os.getloadavg(), "cpus": os.cpu_count(), "corpora": {}}
    for name in CORPORA:
        path = corpus / name
        if not path.is_file():
            report["corpora"][name] = {"missing": str(path)}
            continue
        commands = load_corpus(path)
        report["corpora"][name] = {
            "latency": latency(commands, classify),
            "in_process": throughput_in_process(commands, classify),
            "in_process_json": throughput_in_process(commands, classify, serialize=True),
            "cli_jsonl": throughput_cli(commands),
        }
    cold = cold_starts(cold_start_targets(), runs)
    base = cold[BASELINE_LABEL]
    report["cold_start_s"] = cold
    report["cold_start_ratio"] = {name: t / base for name, t in cold.items()}
    report["loadavg_end"] = os.getloadavg()
    return report


def verdicts(report: dict) -> list[tuple[str, bool]]:
    """(target description, met?) for each target that was measured."""
    out = []
    nl = report["corpora"].get("nl2bash.cm", {})
    if "cli_jsonl" in nl:
        out.append((f"check --jsonl on NL2Bash >= {TARGET_JSONL_PER_S:,}/s",
                    nl["cli_jsonl"]["default"]["per_s"] >= TARGET_JSONL_PER_S))
        out.append((f"check --jsonl --jobs 1 on NL2Bash >= {TARGET_JSONL_PER_S:,}/s",
                    nl["cli_jsonl"]["jobs1"]["per_s"] >= TARGET_JSONL_PER_S))
    ratio = report["cold_start_ratio"]
    out.append((f"check --json cold start <= {TARGET_JSON_COLD:g}x python",
                ratio[f"ringfence check --json '{PROBE}'"] <= TARGET_JSON_COLD))
    out.append((f"check (human) cold start <= {TARGET_HUMAN_COLD:g}x python",
                ratio[f"ringfence check '{PROBE}'"] <= TARGET_HUMAN_COLD))
    return out


def format_report(report: dict) -> str:
    lines = [f"python baseline: {report['python']} (ringfence's own interpreter, not a shim)",
             f"cpus: {report['cpus']}  load average at start {report['loadavg_start'][0]:.2f},"
             f" at end {report['loadavg_end'][0]:.2f}", ""]
    for name, r in report["corpora"].items():
        if "missing" in r:
            lines.append(f"{name}: not found at {r['missing']} (skipped)")
            continue
        lat, cli = r["latency"], r["cli_jsonl"]
        lines += [f"{name}  ({lat['n']:,} commands)",
                  f"  latency per command: median {lat['median_us']:.0f} us, "
                  f"p99 {lat['p99_us']:.0f} us, max {lat['max_us']:.0f} us",
                  "  in process, classify:             "
                  f"{r['in_process']['per_s']:>7,.0f} cmd/s wall  "
                  f"{r['in_process']['cpu_per_s']:>7,.0f} cmd/CPU-s",
                  "  in process, classify + JSON line: "
                  f"{r['in_process_json']['per_s']:>7,.0f} cmd/s wall  "
                  f"{r['in_process_json']['cpu_per_s']:>7,.0f} cmd/CPU-s"]
        for mode, label in (("default", "check --jsonl (default jobs):     "),
                            ("jobs1", "check --jsonl --jobs 1:           ")):
            m = cli[mode]
            lines.append(f"  {label}{m['per_s']:>7,.0f} cmd/s wall  "
                         f"{m['cpu_per_s']:>7,.0f} cmd/CPU-s  "
                         f"({m['seconds']:.2f} s wall, start-up included)")
        lines.append("")
    lines.append("cold start (median wall time, interleaved runs)")
    for name, t in report["cold_start_s"].items():
        lines.append(f"  {name:<42} {t * 1e3:7.1f} ms  {report['cold_start_ratio'][name]:5.2f}x")
    lines.append("")
    for target, met in verdicts(report):
        lines.append(f"  [{'met' if met else 'MISSED'}] {target}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0],
                                epilog="example: python bench/classify.py --runs 21")
    p.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS,
                   help=f"directory holding {' and '.join(CORPORA)} (default: {DEFAULT_CORPUS})")
    p.add_argument("--runs", type=int, default=15, help="cold-start runs per command (median)")
    p.add_argument("--json", action="store_true", help="print the raw report as JSON")
    args = p.parse_args(argv)
    if args.runs < 1:
        p.error("--runs must be at least 1")
    report = run(args.corpus, args.runs)
    print(json.dumps(report, indent=2) if args.json else format_report(report))
    return 0


if __name__ == "__main__":
    sys.exit(main())
