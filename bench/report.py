"""Every benchmark in one go: one table, ratios measured side by side in this run.

Writes the table to stdout and to bench/RESULTS.md, stamped with the machine and
the date. Rows:

- classifier latency and throughput, in process and through `check --jsonl`, on
  NL2Bash and the agent corpus (../shared/corpus, or --corpus DIR);
- cold start of `check --json`, `check`, `explain` and `hook claude-code` against
  `python -c pass` (the real interpreter binary);
- `run` overhead per profile against bare bwrap, `codex sandbox` and `srt`;
- the proxy's added latency for one allowed request to a loopback server;
- `run -- true` in workspaces of 100 to 300k files (workspace_scaling.py), and
  write-heavy real work bare vs under Build (real_work.py).

Usage: python bench/report.py [--corpus DIR] [--runs N] [--quick] [--no-write]
       (--quick: workspaces of 100 and 10k files only, a third of the real work)
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))

import classify as classify_bench  # noqa: E402
import proxy_latency  # noqa: E402
import real_work  # noqa: E402
import run_overhead  # noqa: E402
import workspace_scaling  # noqa: E402
from _timing import BASELINE_LABEL, baseline_python, ms, ringfence_bin, table, time_command  # noqa: E402

HOOK_PAYLOAD = {"session_id": "bench", "hook_event_name": "PreToolUse", "tool_name": "Bash",
                "tool_use_id": "toolu_bench",
                "tool_input": {"command": "git status 2>&1 | head -20"}}


def machine() -> str:
    cpu = ""
    try:
        for line in open("/proc/cpuinfo", encoding="utf-8"):
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return (f"{platform.system()} {platform.release()} {platform.machine()}, "
            f"{os.cpu_count()} CPUs{', ' + cpu if cpu else ''}, Python {platform.python_version()}")


def hook_cold_start(runs: int) -> dict[str, tuple[float, float]]:
    """Median seconds of the hook and of `python -c pass`, interleaved, in two states:
    before any ledger exists, and the everyday case: a ledger holding a grant for the
    session (the hook then reads grants from SQLite)."""
    from ringfence.ledger import grants
    from ringfence.ledger.store import Ledger

    out = {}
    with tempfile.TemporaryDirectory(prefix="rf-bench-hook-") as tmp:
        env = {**os.environ, "RINGFENCE_HOME": os.path.join(tmp, "state")}
        env.pop("RINGFENCE_SESSION", None)
        payload = json.dumps({**HOOK_PAYLOAD, "cwd": tmp}).encode()
        argv = [ringfence_bin(), "hook", "claude-code", "--profile", "build"]
        for state in ("no ledger yet", "ledger with a session grant",
                      "ledger with 200 grants, 5,000 hook decisions"):
            if state == "ledger with a session grant":
                with Ledger(env=env) as led:
                    grants.add_grants(led, ["git status"], "session", "claude-bench")
            elif state != "no ledger yet":
                from ringfence.ledger.hook_rows import record_event

                with Ledger(env=env) as led:
                    grants.add_grants(led, [f"tool{i}" for i in range(199)], "session",
                                      "claude-bench")
                    for i in range(5000):
                        record_event(led, event="PreToolUse", session="bench",
                                     tool_use_id=f"t{i}", command="ls", decision="allow")
            hook = time_command("hook", argv, runs=runs, env=env, cwd=tmp, stdin=payload)
            py = time_command("python", [baseline_python(), "-c", "pass"], runs=runs)
            out[state] = (hook.median, py.median)
    return out

def build_rows(cls: dict, hook: dict[str, tuple[float, float]], run: dict, proxy: dict) -> list[list[str]]:
    rows: list[list[str]] = []

    def row(area, what, value, baseline="", ratio="", target="", met=None):
        rows.append([area, what, value, baseline, ratio, target,
                     "" if met is None else ("yes" if met else "**no**")])

    for name, c in cls["corpora"].items():
        short = "NL2Bash" if name.startswith("nl2bash") else "agent"
        if "missing" in c:
            row("classifier", f"{short}: corpus missing", c["missing"])
            continue
        lat = c["latency"]
        row("classifier", f"{short} ({lat['n']:,}): latency median / p99",
            f"{lat['median_us']:.0f} µs / {lat['p99_us']:.0f} µs")
        row("classifier", f"{short}: in process", f"{c['in_process']['per_s']:,.0f} cmd/s")
        for mode, res in c["cli_jsonl"].items():
            if not isinstance(res, dict):
                continue                   # "n"
            target = ">= 10,000 cmd/s" if short == "NL2Bash" else ""
            row("classifier", f"{short}: `check --jsonl` ({mode})", f"{res['per_s']:,.0f} cmd/s",
                target=target, met=(res["per_s"] >= 10_000) if target else None)
    cold, base = cls["cold_start_s"], cls["cold_start_s"][BASELINE_LABEL]
    targets = {"check --json": 5, "check '": 12}
    for name, t in cold.items():
        if name.startswith("python"):
            row("cold start", name, ms(t))
            continue
        limit = next((v for k, v in targets.items() if k in name), None)
        row("cold start", name, ms(t), ms(base), f"{t / base:.2f}x",
            f"<= {limit}x" if limit else "", (t / base <= limit) if limit else None)
    for state, (h, hp) in hook.items():
        row("cold start", f"ringfence hook claude-code ({state})", ms(h), ms(hp),
            f"{h / hp:.2f}x", "<= 5x", h / hp <= 5)
    bw, codex = run["bwrap"], run["codex"]
    for prof in ("strict", "build"):
        t, srt = run[f"rf-{prof}"], run[f"srt-{prof}"]
        if not t.ok:
            row("run", f"ringfence run -p {prof} -- true", f"failed: {t.note}")
            continue
        row("run", f"ringfence run -p {prof} -- true", ms(t.median), f"bwrap {ms(bw.median)}",
            f"{t.median / bw.median:.1f}x", "<= 10x bwrap (moonshot)", t.median <= 10 * bw.median)
        if codex.ok:
            row("run", f"  vs codex sandbox", ms(t.median), ms(codex.median),
                f"{t.median / codex.median:.2f}x", "<= 1x codex", t.median <= codex.median)
        else:
            row("run", "  vs codex sandbox", "n/a", codex.note)
        if srt.ok:
            row("run", f"  vs srt ({prof} settings)", ms(t.median), ms(srt.median),
                f"srt {srt.median / t.median:.1f}x slower", ">= 3x faster than srt",
                srt.median >= 3 * t.median)
        else:
            row("run", f"  vs srt ({prof} settings)", "n/a", srt.note)
    row("proxy", f"one allowed GET to loopback (median of {proxy['requests']})",
        f"+{proxy['added_s'] * 1e3:.2f} ms", f"direct {proxy['direct_median_s'] * 1e3:.2f} ms",
        f"{proxy['ratio']:.2f}x")
    return rows


def scaling_rows(rows: list[list[str]], scaling: list[dict], real: list[dict]) -> None:
    """Workspace-size scaling and real work, appended to the report's rows."""
    first = scaling[0] if scaling else None
    for r in scaling:
        for prof in ("strict", "build"):
            t, base = r[prof], first[prof]
            if not t.ok:
                rows.append(["workspace", f"run -p {prof} -- true, {r['files']:,} files",
                             f"failed: {t.note}", "", "", "", ""])
                continue
            x = t.median / base.median if base.ok else float("nan")
            last = r is scaling[-1] and r is not first
            met = "" if not last else ("yes" if x <= workspace_scaling.TARGET else "**no**")
            rows.append(["workspace", f"run -p {prof} -- true, {r['files']:,} files "
                         f"({r['dirs']:,} dirs)", ms(t.median),
                         f"{first['files']:,} files {ms(base.median)}", f"{x:.2f}x",
                         f"<= {workspace_scaling.TARGET}x" if last else "", met])
        rows.append(["workspace", f"  bare bwrap / python -c pass, {r['files']:,} files",
                     f"{ms(r['bwrap'].median)} / {ms(r['python'].median)}", "", "", "", ""])
        rows.append(["workspace", f"  Strict's secrets walk alone (cached), {r['files']:,} files",
                     ms(r["walk"].median), "", "", "", ""])
    for r in real:
        x = real_work.ratio(r)
        base = real_work.BASELINE.get(r["name"])
        if x is None:
            rows.append(["real work", r["name"], "n/a", r["note"], "", "", ""])
            continue
        import statistics
        limit = base * 1.1 if base else None
        rows.append(["real work", f"{r['name']}: bare vs run -p build",
                     f"{statistics.median(r['build']):.2f} s",
                     f"bare {statistics.median(r['bare']):.2f} s", f"{x:.2f}x",
                     f"<= {limit:.2f}x (main {base:.2f}x + 10%)" if limit else "",
                     "" if limit is None else ("yes" if x <= limit else "**no**")])
    st = real_work.short_task(real)
    if st is not None:
        rows.append(["real work", "git commit overhead (build - bare) vs the fixed cost",
                     f"{st['git_overhead'] * 1000:.0f} ms",
                     f"run -p build -- true - true {st['fixed_cost'] * 1000:.0f} ms",
                     f"{st['git_overhead'] / st['fixed_cost']:.2f}x" if st["fixed_cost"] > 0
                     else "", "<= 1.00x", "yes" if st["within"] else "**no**"])


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--corpus", type=Path, default=HERE.parent.parent / "shared" / "corpus")
    ap.add_argument("--runs", type=int, default=15)
    ap.add_argument("--no-write", action="store_true", help="print only; do not write RESULTS.md")
    ap.add_argument("--quick", action="store_true",
                    help="skip the 100k and 300k-file workspaces; a third of the real work")
    args = ap.parse_args(argv)
    steps = ("classifier", "hook", "run overhead", "proxy", "workspace scaling", "real work")
    say = lambda i, what: print(f"[{i}/{len(steps)}] {what} ...", file=sys.stderr, flush=True)
    load_start = os.getloadavg()
    say(1, steps[0]); cls = classify_bench.run(args.corpus, args.runs)
    say(2, steps[1]); hook = hook_cold_start(args.runs)
    say(3, steps[2]); run = run_overhead.measure(args.runs)
    say(4, steps[3]); proxy = proxy_latency.measure(300)
    say(5, steps[4]); scaling = workspace_scaling.measure(
        max(5, args.runs // 2),
        workspace_scaling.QUICK_SIZES if args.quick else workspace_scaling.SIZES)
    say(6, steps[5]); real = real_work.measure(3, quick=args.quick)
    load_end = os.getloadavg()
    rows = build_rows(cls, hook, run, proxy)
    scaling_rows(rows, scaling, real)
    stamp = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    text = "\n".join([
        "# ringfence benchmark results", "",
        f"Measured {stamp} on {machine()}.",
        f"Load average {load_start[0]:.2f} at start, {load_end[0]:.2f} at end; "
        f"{args.runs} runs per cold-start figure (medians). Every ratio compares figures "
        "taken in this same run. Regenerate with `make bench`.", "",
        table(rows, ["area", "measurement", "value", "baseline", "ratio", "target", "met"]), "",
        "Baselines: `python -c pass` runs the interpreter ringfence itself runs on "
        f"(`{baseline_python()}`: same binary, same site setup), not a shim; the bare binary, "
        "which also loads the base installation's site-packages, is listed for reference; "
        "bare bwrap is `bwrap --ro-bind / / true`; srt runs "
        "with the settings ringfence exports for the same profile "
        "(`ringfence profile compile P --format srt`); codex is `codex sandbox -P :workspace`.",
        ""])
    print(text)
    if not args.no_write:
        (HERE / "RESULTS.md").write_text(text, encoding="utf-8")
        print(f"written to {HERE / 'RESULTS.md'}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
