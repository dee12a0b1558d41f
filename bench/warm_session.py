"""Warm calls (issue 24): `Session.run("true")` and a warm `ringfence mcp` server's
`shell` call of `true`, against bare bwrap and a cold `ringfence run`, side by side.

    bwrap --ro-bind / / true                  (bare bubblewrap, the floor)
    Session.run("true")      -p strict|build  (in process, after a warm-up call)
    MCP shell {"command": "true"} -p strict|build  (one server per profile, started
                                               once; the SDK's client over stdio)
    ringfence run -p strict -- true           (cold: a fresh interpreter per command)

Each warm row runs twice: with the Session's spare sandbox (compiler/spare.py, the
default) and without it (``spare=False`` / ``RINGFENCE_SPARE=0`` for the server).
Each call follows an untimed 100 ms pause (an agent's think time; the spare of the
previous call is made then, not while another row is timed). A "spare" row says
how many of its calls really ran in a spare: a call finds none
when a path the sandbox mounts, or one of its ancestors, changed in the last
RACY_NS (2 s), which on a busy shared /tmp is often. ``--base`` puts the workspace
somewhere quiet.

The samples are interleaved round by round, so load drift on a shared machine hits
every row alike. The target is <= 5x bare bwrap for the warm rows.

Usage: python bench/warm_session.py [--runs N] [--base DIR] [--json]
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
PAUSE = 0.1     # untimed, before each call: an agent's think time (a spare is made then)


def measure(runs: int, base: str | None = None) -> dict[str, Timing]:
    import anyio

    return anyio.run(_measure, runs, base)


async def _measure(runs: int, base: str | None = None) -> dict[str, Timing]:
    from contextlib import AsyncExitStack

    from mcp import Client
    from mcp.client.stdio import StdioServerParameters

    import ringfence

    samples: dict[str, list[float]] = {"bwrap": [], "cold": []}
    labels = {"bwrap": "bwrap --ro-bind / / true", "cold": "ringfence run -p strict -- true"}
    hits: dict[str, int] = {}
    with tempfile.TemporaryDirectory(prefix="rf-bench-warm-", dir=base) as tmp:
        ws = os.path.join(tmp, "ws")
        os.mkdir(ws)
        os.environ["RINGFENCE_HOME"] = os.path.join(tmp, "state")
        env = dict(os.environ)
        kinds = {"": True, "-nospare": False}
        sessions = {(p, k): ringfence.Session(profile=p, workspace=ws, session="bench",
                                              spare=on)
                    for p in PROFILES for k, on in kinds.items()}
        async with AsyncExitStack() as stack:
            clients = {}
            for p in PROFILES:
                for k, on in kinds.items():
                    params = StdioServerParameters(
                        command=sys.executable,
                        args=["-m", "ringfence", "mcp", "-p", p, "-w", ws],
                        env={**env, "RINGFENCE_SPARE": "1" if on else "0"}, cwd=ws)
                    clients[(p, k)] = await stack.enter_async_context(
                        Client(params, mode="legacy"))
            for p in PROFILES:
                for k, on in kinds.items():
                    tag = "with spare" if on else "no spare"
                    samples[f"session-{p}{k}"], samples[f"mcp-{p}{k}"] = [], []
                    labels[f"session-{p}{k}"] = f'Session.run("true") -p {p} (warm, {tag})'
                    labels[f"mcp-{p}{k}"] = f'MCP shell "true" -p {p} (warm server, {tag})'
            jobs = {"bwrap": lambda: _check(subprocess.run(
                        ["bwrap", "--ro-bind", "/", "/", "true"]).returncode),
                    "cold": lambda: _check(subprocess.run(
                        [ringfence_bin(), "run", "-p", "strict", "-w", ws, "--", "true"],
                        env=env, cwd=ws, stdin=subprocess.DEVNULL,
                        stdout=subprocess.DEVNULL).returncode)}
            for (p, k), sess in sessions.items():
                jobs[f"session-{p}{k}"] = (lambda s: lambda: _state(s.run("true")))(sess)
            for round_ in range(runs + 2):                 # two warm-up rounds
                for key, job in jobs.items():
                    time.sleep(PAUSE)
                    t0 = time.perf_counter()
                    used = job()
                    dt = time.perf_counter() - t0
                    if round_ >= 2:
                        samples[key].append(dt)
                        hits[key] = hits.get(key, 0) + bool(used)
                for (p, k), client in clients.items():
                    time.sleep(PAUSE)
                    t0 = time.perf_counter()
                    r = await client.call_tool("shell", {"command": "true"})
                    dt = time.perf_counter() - t0
                    used = _state(r.structured_content)
                    if round_ >= 2:
                        samples[f"mcp-{p}{k}"].append(dt)
                        hits[f"mcp-{p}{k}"] = hits.get(f"mcp-{p}{k}", 0) + bool(used)
        for sess in sessions.values():
            sess.close()
    for key in samples:
        if key.startswith(("session-", "mcp-")) and not key.endswith("-nospare"):
            labels[key] += f" [{hits.get(key, 0)}/{runs} in a spare]"
    return {k: Timing(labels[k], v) for k, v in samples.items()}


def _check(code: int) -> None:
    if code != 0:
        raise SystemExit(f"warm_session: a baseline exited {code}")


def _state(r) -> bool:
    """The call completed (else exit); did it run in a spare?"""
    state, spare = (r["state"], r.get("spare")) if isinstance(r, dict) else (r.state, r.spare)
    if state != "completed":
        raise SystemExit(f"warm_session: a warm call ended {state}, not completed")
    return bool(spare)


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
    ap.add_argument("--base", default=None,
                    help="where the workspace is made (default: the temp dir)")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    load = os.getloadavg()[0]
    results = measure(args.runs, args.base)
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
