"""How `ringfence run -- true` scales with the number of files in the workspace.

One workspace is grown with bench/gen_tree.py (node_modules-shaped: package
dirs with package.json, index.js, lib/*.js, nested node_modules) through each
size in turn, so 300k files are written once. At each size, side by side:

    ringfence run -p strict -- true
    ringfence run -p build  -- true
    bwrap --ro-bind / / true        (bare bubblewrap, the floor)
    python -c pass                  (ringfence's interpreter)

Each row prints its medians and its ratio to the first row (issue 12's
requirement: 300k files cost at most 1.3x of 100). `--shape src` puts the same
tree under `src/` instead of `node_modules/`, for a walk that skips
node_modules. The "secrets walk" column times Strict's workspace-secrets
walk alone, in process, cache warm. The tree goes into a temporary directory under /var/tmp (ringfence refuses a
workspace under /dev, so /dev/shm is out; writing 300k small files to this
machine's disk takes about a minute) and is removed afterwards.

Usage: python bench/workspace_scaling.py [--runs N] [--sizes 100,10000,...]
       [--quick] [--shape node_modules|src] [--dir DIR] [--json]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import gen_tree  # noqa: E402
from _timing import Timing, baseline_python, ms, ringfence_bin, table, time_command  # noqa: E402

SIZES = (100, 10_000, 100_000, 300_000)
QUICK_SIZES = (100, 10_000)
TARGET = 1.3


def default_dir() -> str:
    return "/var/tmp"


def measure(runs: int, sizes=SIZES, shape: str = "node_modules",
            base_dir: str | None = None) -> list[dict]:
    rf, py = ringfence_bin(), baseline_python()
    rows: list[dict] = []
    tmp = tempfile.mkdtemp(prefix="rf-bench-ws-", dir=base_dir or default_dir())
    try:
        ws = os.path.join(tmp, "ws")
        env = {**os.environ, "RINGFENCE_HOME": os.path.join(tmp, "state")}
        env.pop("RINGFENCE_SESSION", None)
        state = None
        os.makedirs(ws)
        for size in sorted(sizes):
            t0 = time.perf_counter()
            state = gen_tree.generate(ws, size, shape, resume=state)
            gen_s = time.perf_counter() - t0
            # Strict's secrets cache does not keep directories changed in the last
            # 2 s (compiler/secretmasks.py RACY_NS): a real tree is older than that.
            time.sleep(2.1)
            row = {"files": state["files"], "dirs": state["dirs"], "gen_s": gen_s}
            for prof in ("strict", "build"):
                t = time_command(f"run -p {prof}", [rf, "run", "-p", prof, "--workspace", ws,
                                                    "--", "true"],
                                 runs=runs, env=env, cwd=ws)
                row[prof] = t
            row["walk"] = secrets_walk(ws, os.path.join(tmp, "walk-cache"), runs)
            row["bwrap"] = time_command("bwrap", ["bwrap", "--ro-bind", "/", "/", "true"],
                                        runs=runs)
            row["python"] = time_command("python", [py, "-c", "pass"], runs=runs)
            rows.append(row)
            print(f"  {state['files']:,} files: strict {ms(row['strict'].median)}, "
                  f"build {ms(row['build'].median)}", file=sys.stderr, flush=True)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return rows


def secrets_walk(ws: str, cache: str, runs: int) -> Timing:
    """Strict's workspace-secrets walk alone, in process, with its cache warm:
    the part of a Strict run that depends on the workspace (compiler/secretmasks.py)."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from ringfence.compiler import secretmasks

    items = [(f"{ws}/**/{n}", n) for n in (".env*", "*.pem", "*.key", "id_*")]
    secretmasks.find(ws, items, cache)                 # fill the cache
    samples = []
    for _ in range(runs):
        t0 = time.perf_counter()
        secretmasks.find(ws, items, cache)
        samples.append(time.perf_counter() - t0)
    return Timing("secrets walk", samples)


def _ratio(t: Timing, base: Timing) -> float | None:
    if not (t.ok and base.ok and t.samples and base.samples):
        return None
    return t.median / base.median


def report(rows: list[dict]) -> str:
    first = rows[0]
    out = []
    for r in rows:
        cells = [f"{r['files']:,}", f"{r['dirs']:,}"]
        for key in ("strict", "build"):
            t = r[key]
            x = _ratio(t, first[key])
            cells += [ms(t.median) if t.ok else f"failed: {t.note}",
                      "n/a" if x is None else f"{x:.2f}x"]
        cells += [ms(r["walk"].median), ms(r["bwrap"].median), ms(r["python"].median)]
        out.append(cells)
    return table(out, ["files", "dirs", "strict", "x first row", "build",
                       "x first row", "secrets walk (cached)", "bare bwrap",
                       "python -c pass"])


def verdicts(rows: list[dict]) -> dict[str, float | None]:
    """Largest row's ratio to the first, per profile (target <= 1.3)."""
    return {p: _ratio(rows[-1][p], rows[0][p]) for p in ("strict", "build")}


def to_json(rows: list[dict]) -> list[dict]:
    return [{k: ({"median_s": v.median, "ok": v.ok, "note": v.note}
                 if isinstance(v, Timing) else v) for k, v in r.items()} for r in rows]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--sizes", default=",".join(map(str, SIZES)))
    ap.add_argument("--quick", action="store_true", help=f"only {QUICK_SIZES}")
    ap.add_argument("--shape", default="node_modules", help="top directory of the tree")
    ap.add_argument("--dir", default=None, help="where to create the tree")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    sizes = QUICK_SIZES if args.quick else tuple(int(s) for s in args.sizes.split(","))
    rows = measure(args.runs, sizes, args.shape, args.dir)
    if args.json:
        print(json.dumps(to_json(rows), indent=2))
        return 0
    print(report(rows))
    for prof, x in verdicts(rows).items():
        met = "n/a" if x is None else ("met" if x <= TARGET else "NOT met")
        print(f"{prof}: {rows[-1]['files']:,} files = "
              f"{'n/a' if x is None else f'{x:.2f}x'} of {rows[0]['files']:,} "
              f"(target <= {TARGET}x): {met}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
