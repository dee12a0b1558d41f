"""Warm calls (issue 24): `Session.run("true")` and a warm `ringfence mcp` server's
`shell` call of `true`, against bare bwrap and a cold `ringfence run`, side by side.

    bwrap --ro-bind / / true                  (bare bubblewrap, the floor)
    Session.run("true")      -p strict|build  (in process, after a warm-up call)
    MCP shell {"command": "true"} -p strict|build  (one server per profile, started
                                               once; the SDK's client over stdio)
    ringfence run -p strict -- true           (cold: a fresh interpreter per command)

The samples are interleaved round by round, so load drift on a shared machine hits
every row alike. The target is <= 5x bare bwrap for the warm rows.

Usage: python bench/warm_session.py [--runs N] [--json]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _timing import ROOT, Timing, ms, ratio, ringfence_bin, table  # noqa: E402

PROFILES = ("strict", "build")


def measure(runs: int) -> dict[str, Timing]:
    import anyio

    return anyio.run(_measure, runs)


async def _measure(runs: int) -> dict[str, Timing]:
    from contextlib import AsyncExitStack

    from mcp import Client
    from mcp.client.stdio import StdioServerParameters

    import ringfence

    samples: dict[str, list[float]] = {"bwrap": [], "cold": []}
    labels = {"bwrap": "bwrap --ro-bind / / true", "cold": "ringfence run -p strict -- true"}
    with tempfile.TemporaryDirectory(prefix="rf-bench-warm-") as tmp:
        ws = os.path.join(tmp, "ws")
        os.mkdir(ws)
        os.environ["RINGFENCE_HOME"] = os.path.join(tmp, "state")
        env = dict(os.environ)
        sessions = {p: ringfence.Session(profile=p, workspace=ws, session="bench")
                    for p in PROFILES}
        async with AsyncExitStack() as stack:
            clients = {}
            for p in PROFILES:
                params = StdioServerParameters(
                    command=sys.executable, args=["-m", "ringfence", "mcp", "-p", p, "-w", ws],
                    env=env, cwd=ws)
                clients[p] = await stack.enter_async_context(Client(params, mode="legacy"))
            for p in PROFILES:
                samples[f"session-{p}"], samples[f"mcp-{p}"] = [], []
                labels[f"session-{p}"] = f'Session.run("true") -p {p} (warm)'
                labels[f"mcp-{p}"] = f'MCP shell "true" -p {p} (warm server)'
            jobs = {"bwrap": lambda: _check(subprocess.run(
                        ["bwrap", "--ro-bind", "/", "/", "true"]).returncode),
                    "cold": lambda: _check(subprocess.run(
                        [ringfence_bin(), "run", "-p", "strict", "-w", ws, "--", "true"],
                        env=env, cwd=ws, stdin=subprocess.DEVNULL,
                        stdout=subprocess.DEVNULL).returncode)}
            for p in PROFILES:
                jobs[f"session-{p}"] = (lambda s: lambda: _state(s.run("true").state))(
                    sessions[p])
            for round_ in range(runs + 2):                 # two warm-up rounds
                for key, job in jobs.items():
                    t0 = time.perf_counter()
                    job()
                    dt = time.perf_counter() - t0
                    if round_ >= 2:
                        samples[key].append(dt)
                for p in PROFILES:
                    t0 = time.perf_counter()
                    r = await clients[p].call_tool("shell", {"command": "true"})
                    dt = time.perf_counter() - t0
                    _state(r.structured_content["state"])
                    if round_ >= 2:
                        samples[f"mcp-{p}"].append(dt)
    return {k: Timing(labels[k], v) for k, v in samples.items()}


def _check(code: int) -> None:
    if code != 0:
        raise SystemExit(f"warm_session: a baseline exited {code}")


def _state(state: str) -> None:
    if state != "completed":
        raise SystemExit(f"warm_session: a warm call ended {state}, not completed")


def report(results: dict[str, Timing]) -> str:
    bw = results["bwrap"]
    rows = []
    for key, t in results.items():
        met = ""
        if key.startswith(("session-", "mcp-")) and t.samples and bw.samples:
            met = "yes" if t.median / bw.median <= 5 else "no"
        rows.append([t.label, ms(t.median), ms(t.p99), ratio(t, bw), met])
    return table(rows, ["command", "median", "p99", "x bwrap", "<= 5x"])


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    load = os.getloadavg()[0]
    results = measure(args.runs)
    if args.json:
        print(json.dumps({k: {"label": t.label, "median_s": t.median, "p99_s": t.p99}
                          for k, t in results.items()}, indent=2))
    else:
        print(report(results))
        print(f"\nload average: {load:.2f} at start, {os.getloadavg()[0]:.2f} at end; "
              f"{args.runs} interleaved rounds; {ROOT}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
