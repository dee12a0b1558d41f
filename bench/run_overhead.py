"""`ringfence run` overhead against bare bwrap, Codex's sandbox and Anthropic's srt.

Every figure is measured in this run, side by side, and reported as a ratio:

    ringfence run -p strict -- true        (no network: no proxy, no relay)
    ringfence run -p build  -- true        (proxy thread + in-sandbox relay)
    bwrap --ro-bind / / true               (bare bubblewrap, the floor)
    srt -s <settings> true                 (settings = `ringfence profile compile P --format srt`)
    codex sandbox -P :workspace -C WS -- true
    python3 -c pass                        (the real interpreter binary, not a shim)

srt and codex are npm packages; they are installed into bench/.cache/npm on first
use (srt needs ripgrep: installed with apt-get when running as root). A baseline
that cannot be installed here is reported as n/a with the reason, never faked.

Usage: python bench/run_overhead.py [--runs N] [--json]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _timing import (ROOT, Timing, baseline_python, ms, ratio, ringfence_bin, table,  # noqa: E402
                     time_command)

NPM_DIR = ROOT / "bench" / ".cache" / "npm"
NPM_PACKAGES = ["@anthropic-ai/sandbox-runtime@0.0.83", "@openai/codex@0.171.0"]


def npm_tools() -> tuple[str | None, str | None, str]:
    """Paths of srt and codex, installing them on first use. Returns a note on failure."""
    bindir = NPM_DIR / "node_modules" / ".bin"
    if not (bindir / "srt").exists() or not (bindir / "codex").exists():
        if not shutil.which("npm"):
            return None, None, "npm not found"
        NPM_DIR.mkdir(parents=True, exist_ok=True)
        proc = subprocess.run(["npm", "install", "--no-audit", "--no-fund", "--prefix",
                               str(NPM_DIR), *NPM_PACKAGES], capture_output=True, text=True)
        if proc.returncode != 0:
            return None, None, f"npm install failed: {proc.stderr.strip()[-200:]}"
    if not shutil.which("rg") and os.geteuid() == 0 and shutil.which("apt-get"):
        subprocess.run(["apt-get", "install", "-y", "-qq", "ripgrep"], capture_output=True)
    srt = bindir / "srt"
    codex = bindir / "codex"
    note = "" if shutil.which("rg") else "srt needs ripgrep (rg), which is missing"
    return (str(srt) if srt.exists() else None, str(codex) if codex.exists() else None, note)


def srt_settings(profile: str, workspace: str) -> str:
    """An srt settings file equivalent to `profile`, produced by our own exporter."""
    out = subprocess.run([ringfence_bin(), "profile", "compile", profile, "--format", "srt",
                          "--workspace", workspace], capture_output=True, text=True, check=True)
    path = Path(workspace).parent / f"srt-{profile}.json"
    path.write_text(out.stdout)
    return str(path)


def measure(runs: int) -> dict:
    rf = ringfence_bin()
    py = baseline_python()
    results: dict[str, Timing] = {}
    with tempfile.TemporaryDirectory(prefix="rf-bench-") as tmp:
        ws = os.path.join(tmp, "ws")
        os.mkdir(ws)
        env = {**os.environ, "RINGFENCE_HOME": os.path.join(tmp, "state")}
        results["python"] = time_command("python3 -c pass", [py, "-c", "pass"], runs=runs)
        results["bwrap"] = time_command("bwrap --ro-bind / / true",
                                        ["bwrap", "--ro-bind", "/", "/", "true"], runs=runs)
        for prof in ("strict", "build"):
            results[f"rf-{prof}"] = time_command(
                f"ringfence run -p {prof} -- true",
                [rf, "run", "-p", prof, "--workspace", ws, "--", "true"],
                runs=runs, env=env, cwd=ws)
        srt, codex, note = npm_tools()
        for prof in ("strict", "build"):
            if srt:
                settings = srt_settings(prof, ws)
                results[f"srt-{prof}"] = time_command(f"srt ({prof} settings) true",
                                                      [srt, "-s", settings, "true"],
                                                      runs=runs, cwd=ws)
                if note:
                    results[f"srt-{prof}"].note = note
            else:
                results[f"srt-{prof}"] = Timing(f"srt ({prof} settings) true", [], False, note)
        if codex:
            results["codex"] = time_command("codex sandbox -P :workspace -- true",
                                            [codex, "sandbox", "-P", ":workspace", "-C", ws,
                                             "--", "true"], runs=runs, cwd=ws)
        else:
            results["codex"] = Timing("codex sandbox", [], False, note)
    return results


def report(results: dict[str, Timing]) -> str:
    bw, py, codex = results["bwrap"], results["python"], results["codex"]
    rows = []
    for key, t in results.items():
        srt = results["srt-build" if key == "rf-build" else "srt-strict"]
        rows.append([t.label, ms(t.median), ms(t.p99), ratio(t, bw), ratio(t, py),
                     ratio(t, codex), ratio(srt, t) if key.startswith("rf-") else "",
                     t.note])
    return table(rows, ["command", "median", "p99", "x bwrap", "x python", "x codex",
                        "srt is Nx slower", "note"])


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    results = measure(args.runs)
    if args.json:
        print(json.dumps({k: {"label": t.label, "median_s": t.median, "p99_s": t.p99,
                              "ok": t.ok, "note": t.note} for k, t in results.items()},
                         indent=2))
    else:
        print(report(results))
    return 0


if __name__ == "__main__":
    sys.exit(main())
