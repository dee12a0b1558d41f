"""Write-heavy real work, bare and under `ringfence run -p build`, side by side.

Five jobs and one fixed-cost row, each run in a fresh workspace state (the
cleanup between runs is not timed), bare and sandboxed alternately so that load
drift hits both alike:

- npm install: a project depending on PACKAGES local tarballs (generated here,
  each a package of FILES files), installed with `npm install --offline`:
  thousands of files written, no registry involved. npm's cache is where npm
  keeps it, outside the workspace (bare: a cache dir beside it; under Build:
  ringfence's tooling cache), each filled once before timing;
- npm install, cache in the workspace: the same with `--cache ../.npm-cache`
  inside the workspace (npm appends to 150 of its index files and unpacks every
  package into its tmp dir first: all of it staged);
- venv + pip: `python -m venv` (ensurepip writes pip itself, about a thousand
  files) and `pip install --no-index` of a few small wheels downloaded once
  from PyPI into bench/.cache/wheels;
- pytest: a generated suite (MODULES modules of TESTS tests), run with the
  checkout's pytest; it writes __pycache__ for each module;
- git: `git init && git add -A && git commit` of GIT_FILES small files, a short
  task whose cost is mostly the fixed cost of a run; the identity comes from the
  stand-in home's ~/.gitconfig (below), as a user's does;
- cargo build: `cargo build --offline` (debug) of a generated crate of CRATE_MODS
  modules, no dependencies, its target dir in the workspace and removed before
  each run (a full build each time); skipped when cargo is absent;
- go build: `go build -o app .` of a generated module of GO_PKGS packages, no
  dependencies, with an empty build cache each run (bare: GOCACHE beside the
  workspace; under a profile: the tooling dir's go-build, where the profile's env
  points GOCACHE); skipped when go is absent;
- true: `true` bare against `ringfence run -p build -- true`: the fixed cost of a
  run, measured TRUE_REPS times as often (it is short and noisy).

The git overhead (build - bare) is printed against that fixed cost (issue 19
item 10: a short task costs no more than `run -- true`).

Every mode runs with HOME set to a generated stand-in home (never the real one),
set up as a user's: ~/.gitconfig with [user] and a credential helper, ~/.npmrc
with a registry and a fake `_authToken`, ~/.config/pip/pip.conf whose index-url
carries a fake token. Under Build that home is masked and those three files are
served with their secrets removed. Rust's toolchain stays where it is installed:
RUSTUP_HOME / CARGO_HOME from the environment, else the account's ~/.rustup and
~/.cargo (as the Rust images set them). --home-visible runs every job under a
generated profile too, `extends = "build"` with `mask_home = false` (Build with
the home visible: the home as before issue 21), interleaved with the others.

What a run wrote is moved aside before the next run and removed when every job
is done: on a journal-less ext4 (this machine's disk) deleting thousands of files
makes the next minute's file creations near them slow (ext4 will not reuse an
inode freed in the last minute and scans past each one), which would charge one
run for the cleanup of the one before.

The ratio is sandboxed / bare (issue 12's figures on main, cache in the
workspace, on tmpfs: npm 1.27x, venv + pip 1.22x, pytest 1.07x). The workspace is
a temporary directory under /var/tmp (not /tmp, which is private in the sandbox,
and not /dev/shm, which ringfence refuses as a workspace: it is under /dev);
--dir picks another. Removed afterwards.

Usage: python bench/real_work.py [--runs N] [--quick] [--dir DIR] [--delete]
                                 [--against RINGFENCE] [--home-visible]
                                 [--only NAMES] [--json]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _real_work_gen import (crate, git_tree, go_module, npm_project,  # noqa: E402
                            rust_env, stand_in_home, test_suite)
from _timing import ROOT, real_python, ringfence_bin, table  # noqa: E402

WHEELS_DIR = ROOT / "bench" / ".cache" / "wheels"
WHEELS = ["six==1.16.0", "idna==3.7", "attrs==23.2.0", "packaging==24.0",
          "iniconfig==2.0.0", "pluggy==1.5.0"]
PACKAGES, FILES = 150, 24          # npm: 150 packages x 24 files = 3,600 files
MODULES, TESTS = 150, 20           # pytest: 3,000 tests
GIT_FILES = 200                    # git: 200 files in 10 dirs
CRATE_MODS, GO_PKGS = 12, 12        # cargo / go: 12 modules of 40 functions
TRUE_REPS = 5                      # the fixed-cost row: 5 samples per run
NPM, NPM_WS = "npm install", "npm install, cache in the workspace"
BASELINE = {NPM_WS: 1.27, "venv + pip install": 1.22, "pytest": 1.07}
TARGET = 1.15          # issue 19 item 10: real work within 1.15x bare
TARGETED = (NPM, NPM_WS, "venv + pip install", "pytest")


def wheels() -> tuple[bool, str]:
    """Download the wheels once (PyPI). (ok, note)."""
    stamp = WHEELS_DIR / ".complete"
    if stamp.exists():
        return True, ""
    WHEELS_DIR.mkdir(parents=True, exist_ok=True)
    proc = subprocess.run([real_python(), "-m", "pip", "download", "-q", "--no-deps",
                           "--only-binary=:all:", "-d", str(WHEELS_DIR), *WHEELS],
                          capture_output=True, text=True)
    if proc.returncode != 0:
        return False, f"pip download failed: {proc.stderr.strip()[-160:]}"
    stamp.write_text("\n".join(WHEELS))
    return True, ""


GIT = ("cd gitwork && git init -q && git add -A && git -c commit.gpgsign=false "
       "commit -q -m bench")
VISIBLE_PROFILE = 'extends = "build"\n\n[filesystem]\nmask_home = false\n'


def jobs(ws: Path, quick: bool) -> list[dict]:
    """name, argv (run with cwd=ws), clean (paths removed before each run)."""
    py = real_python()
    pkgs = PACKAGES // 3 if quick else PACKAGES
    npm_project(ws, pkgs, FILES)
    test_suite(ws, MODULES // 3 if quick else MODULES, TESTS)
    npm = ("cd project && npm install --offline --no-audit --no-fund --loglevel=error "
           "{cache}>/dev/null")
    nm = ["project/node_modules", "project/package-lock.json"]
    # npm's cache where npm keeps it: outside the workspace (bare: a cache dir beside
    # it, npm_config_cache; under Build: ringfence's tooling cache, which the profile
    # names). Each is filled once, by an untimed run of its own.
    out = [{"name": NPM, "files": pkgs * FILES, "argv": ["sh", "-c", npm.format(cache="")],
            "clean": nm, "prime": ("bare", "build"), "env": {"npm_config_cache": "CACHE"}},
           {"name": NPM_WS, "files": pkgs * FILES,
            "argv": ["sh", "-c", npm.format(cache="--cache ../.npm-cache ")],
            "clean": nm, "prime": ("bare",)}]
    ok, note = wheels()
    if ok:
        names = [w.split("==")[0] for w in WHEELS]
        out.append({"name": "venv + pip install",
                    "argv": ["sh", "-c", f"{py} -m venv venv && venv/bin/python -m pip "
                             f"install -q --no-index --find-links {WHEELS_DIR} "
                             f"{' '.join(names)}"],
                    "clean": ["venv"]})
    else:
        out.append({"name": "venv + pip install", "skip": note})
    out.append({"name": "pytest",
                "argv": [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                         "suite"],
                "clean": ["suite/__pycache__"]})
    git_tree(ws, GIT_FILES)
    out.append({"name": "git init + add + commit", "files": GIT_FILES,
                "argv": ["sh", "-c", GIT], "clean": ["gitwork/.git"]})
    rust = rust_env()
    if rust is None:
        out.append({"name": "cargo build", "skip": "cargo is not installed"})
    else:
        crate(ws, CRATE_MODS // 3 if quick else CRATE_MODS)
        out.append({"name": "cargo build", "env": rust, "clean": ["crate/target"],
                    "argv": ["sh", "-c", "cd crate && cargo build --offline -q"]})
    if shutil.which("go") is None:
        out.append({"name": "go build", "skip": "go is not installed (apt-get install "
                    "golang-go)"})
    else:
        go_module(ws, GO_PKGS // 3 if quick else GO_PKGS)
        # An empty build cache each run: bare GOCACHE (beside the workspace), and under
        # a profile the tooling dir's go-build, where the profile points GOCACHE.
        out.append({"name": "go build", "env": {"GOCACHE": "GOCACHE"},
                    "clean": ["gomod/app"], "clean_state": ["cache/tooling/go-build"],
                    "argv": ["sh", "-c", "cd gomod && go build -o app ."]})
    out.append({"name": "true (fixed cost)", "argv": ["true"], "clean": [],
                "reps": TRUE_REPS})
    return out


def _clean(ws: Path, rels: list[str], grave: Path | None) -> None:
    """Move what a run wrote out of the way (untimed), into ``grave``, removed when
    every job is done: deleting thousands of files just before the next run would
    charge that run for it on a journal-less ext4, which will not reuse an inode
    freed in the last minute and scans past each one on every create.
    ``grave=None`` (--delete): delete it now, as this bench did before. An
    absolute path (a cache outside the workspace) is taken as it is."""
    for rel in rels:
        p = ws / rel
        if grave is None:
            if p.is_dir() and not p.is_symlink():
                shutil.rmtree(p)
            elif p.exists() or p.is_symlink():
                p.unlink()
        elif p.exists() or p.is_symlink():
            grave.mkdir(exist_ok=True)
            os.rename(p, grave / f"{len(os.listdir(grave))}")


def _time(argv, ws: Path, env: dict) -> tuple[float, str]:
    t0 = time.perf_counter()
    proc = subprocess.run(argv, cwd=ws, env=env, stdin=subprocess.DEVNULL,
                          stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    dt = time.perf_counter() - t0
    if proc.returncode != 0:
        err = proc.stderr.decode(errors="replace").strip().splitlines()
        return dt, f"exit {proc.returncode}: {err[-1] if err else ''}"[:160]
    return dt, ""


def measure(runs: int = 3, quick: bool = False, base_dir: str | None = None,
            delete: bool = False, against: str | None = None,
            home_visible: bool = False, only: tuple[str, ...] = ()) -> list[dict]:
    """Medians need ``runs`` >= 1. ``delete``: remove what a run wrote between runs
    instead of moving it aside. ``against``: another ``ringfence`` (say main's),
    run under Build too, interleaved with this one (column ``other``).
    ``home_visible``: every job under Build with ``mask_home = false`` too
    (column ``visible``). ``only``: the jobs whose name starts with one of these
    (``("git", "true")``: the short task and the fixed cost)."""
    rf = ringfence_bin()
    tmp = tempfile.mkdtemp(prefix="rf-bench-real-", dir=base_dir or "/var/tmp")
    results = []
    try:
        ws, grave = Path(tmp) / "ws", None if delete else Path(tmp) / "removed"
        ws.mkdir()
        stand_in_home(Path(tmp) / "home")
        base_env = {**os.environ, "RINGFENCE_HOME": os.path.join(tmp, "state"),
                    "HOME": os.path.join(tmp, "home")}
        for var in ("RINGFENCE_SESSION", "XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_CACHE_HOME",
                    "XDG_STATE_HOME", "GIT_CONFIG_GLOBAL", "NPM_CONFIG_USERCONFIG",
                    "PIP_CONFIG_FILE", "GOCACHE", "GOPATH"):
            base_env.pop(var, None)          # nothing of the real home's config
        visible = Path(tmp) / "build-home-visible.toml"
        visible.write_text(VISIBLE_PROFILE)
        places = {"CACHE": os.path.join(tmp, "npm-cache"),
                  "GOCACHE": os.path.join(tmp, "go-cache")}
        for job in jobs(ws, quick):
            if only and not job["name"].startswith(tuple(only)):
                continue
            row = {"name": job["name"], "bare": [], "build": [], "note": job.get("skip", "")}
            if "skip" in job:
                results.append(row)
                continue
            env = {**base_env, **{k: places.get(v, v) for k, v in job.get("env", {}).items()}}
            sandboxed = ["run", "-p", "build", "--workspace", str(ws), "--", *job["argv"]]
            modes = {"bare": (job["argv"], env), "build": ([rf, *sandboxed], env)}
            if against:
                # its own state dir: another version may keep another ledger schema
                row["other"] = []
                modes["other"] = ([against, *sandboxed],
                                  {**env, "RINGFENCE_HOME": os.path.join(tmp, "state-other")})
            if home_visible:
                row["visible"] = []
                modes["visible"] = ([rf, "run", "-p", str(visible), *sandboxed[3:]],
                                    {**env, "RINGFENCE_HOME": os.path.join(tmp, "state-visible")})
            prime = job.get("prime", ())
            sandboxes = ("build", "other", "visible")
            for key in [k for k in modes if k in prime or (k in sandboxes and "build" in prime)]:
                _clean(ws, job["clean"], grave)          # fill a cache once, untimed
                _time(modes[key][0], ws, modes[key][1])
            keys = list(modes)
            for i in range(runs * job.get("reps", 1)):
                for key in keys[i % len(keys):] + keys[:i % len(keys)]:
                    _clean(ws, job["clean"] + _state_paths(job, modes[key][1], places),
                           grave)
                    dt, err = _time(modes[key][0], ws, modes[key][1])
                    if err:
                        row["note"] = f"{key}: {err}"
                    row[key].append(dt)
            results.append(row)
            print(f"  {job['name']}: " + ", ".join(
                f"{k} {statistics.median(row[k]):.2f} s" for k in keys),
                file=sys.stderr, flush=True)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return results


def _state_paths(job: dict, env: dict, places: dict) -> list[str]:
    """Absolute paths a job empties before each run outside the workspace: under
    a profile, in that run's state dir (the tooling dir); bare, the cache dirs it
    named in its env."""
    out = [os.path.join(env["RINGFENCE_HOME"], rel) for rel in job.get("clean_state", ())]
    out += [places[v] for v in job.get("env", {}).values()
            if v in places and v != "CACHE" and job.get("clean_state")]
    return out


def ratio(row: dict, key: str = "build") -> float | None:
    if not row["bare"] or not row.get(key) or row["note"]:
        return None
    return statistics.median(row[key]) / statistics.median(row["bare"])


def _median(row: dict, key: str) -> float | None:
    return statistics.median(row[key]) if row.get(key) and not row.get("note") else None


def short_task(rows: list[dict], key: str = "build") -> dict | None:
    """The git job's overhead (``key`` - bare) against the fixed cost of a run
    (`run -p build -- true` - `true`), in seconds; None when either is missing."""
    by = {r["name"]: r for r in rows}
    git, true = by.get("git init + add + commit"), by.get("true (fixed cost)")
    if git is None or true is None:
        return None
    vals = [_median(git, key), _median(git, "bare"), _median(true, key),
            _median(true, "bare")]
    if None in vals:
        return None
    over, fixed = vals[0] - vals[1], vals[2] - vals[3]
    # the same at each row's lower quartile: on a shared machine a load spike lands
    # in one sample of one row and moves a median of a few ms task by as much
    low = [_lower_quartile(git[key]), _lower_quartile(git["bare"]),
           _lower_quartile(true[key]), _lower_quartile(true["bare"])]
    return {"git_overhead": over, "fixed_cost": fixed, "within": over <= fixed,
            "over_lower_quartile": (low[0] - low[1]) - (low[2] - low[3])}


def _lower_quartile(values: list[float]) -> float:
    return statistics.quantiles(values, n=4)[0] if len(values) >= 4 else min(values)


def _over(seconds: float) -> str:
    return (f"{-seconds * 1000:.0f} ms within" if seconds <= 0 else
            f"{seconds * 1000:.0f} ms over")


def masked_over_visible(row: dict) -> float | None:
    """Build (home masked) / Build with the home visible: the mask's own cost."""
    if not row.get("visible") or not row["build"] or row["note"]:
        return None
    return statistics.median(row["build"]) / statistics.median(row["visible"])


def report(rows: list[dict]) -> str:
    other = any("other" in r for r in rows)
    visible = any("visible" in r for r in rows)
    out = []
    for r in rows:
        x = ratio(r)
        base = BASELINE.get(r["name"])
        cells = [r["name"],
                 f"{statistics.median(r['bare']):.2f} s" if r["bare"] else "n/a",
                 f"{statistics.median(r['build']):.2f} s" if r["build"] else "n/a",
                 "n/a" if x is None else f"{x:.2f}x",
                 "" if r["name"] not in TARGETED or x is None else
                 ("yes" if x <= TARGET else "no")]
        if other:
            y = ratio(r, "other")
            cells += [f"{statistics.median(r['other']):.2f} s" if r.get("other") else "n/a",
                      "n/a" if y is None else f"{y:.2f}x"]
        if visible:
            y, z = ratio(r, "visible"), masked_over_visible(r)
            cells += [f"{statistics.median(r['visible']):.2f} s" if r.get("visible") else "n/a",
                      "n/a" if y is None else f"{y:.2f}x", "n/a" if z is None else f"{z:.2f}x"]
        out.append(cells + [f"{base:.2f}x" if base else "", r["note"]])
    text = table(out, ["job", "bare", "ringfence run -p build", "ratio", f"<= {TARGET}x"]
                 + (["--against", "its ratio"] if other else [])
                 + (["home visible", "its ratio", "masked / visible"] if visible else [])
                 + ["issue 12 (main)", "note"])
    keys = [("build", "")] + ([("other", " (--against)")] if other else []) \
        + ([("visible", " (home visible)")] if visible else [])
    for key, who in keys:
        st = short_task(rows, key)
        if st is not None:
            text += (f"\n\ngit commit overhead{who} ({key} - bare): "
                     f"{st['git_overhead'] * 1000:.0f} ms; fixed cost of a run "
                     f"(its run -- true - true): {st['fixed_cost'] * 1000:.0f} ms: "
                     + ("within it" if st["within"] else
                        f"{(st['git_overhead'] - st['fixed_cost']) * 1000:.0f} ms over it")
                     + f" (at the lower quartiles: {_over(st['over_lower_quartile'])})")
    return text


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--quick", action="store_true", help="a third of the files and tests")
    ap.add_argument("--dir", default=None, help="where to create the workspace")
    ap.add_argument("--delete", action="store_true",
                    help="delete what a run wrote between runs (the bench before issue 19 "
                         "item 10) instead of moving it aside")
    ap.add_argument("--against", metavar="RINGFENCE", default=None,
                    help="another ringfence executable (say main's .venv/bin/ringfence), "
                         "run under Build too, interleaved: before/after in one run")
    ap.add_argument("--home-visible", action="store_true",
                    help="every job also under Build with mask_home = false (a generated "
                         "profile), interleaved: the masked home's own cost")
    ap.add_argument("--only", default="", metavar="NAMES",
                    help="comma-separated job name prefixes to run (git,true: the short "
                         "task against the fixed cost)")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    if args.runs < 1:
        ap.error("--runs must be at least 1")
    if args.against and not os.access(args.against, os.X_OK):
        ap.error(f"--against {args.against}: not an executable")
    only = tuple(n.strip() for n in args.only.split(",") if n.strip())
    rows = measure(args.runs, args.quick, args.dir, args.delete, args.against,
                   args.home_visible, only)
    if only and not rows:
        ap.error(f"--only {args.only}: no job's name starts with that")
    load = os.getloadavg()
    if args.json:
        print(json.dumps({"rows": [{**r, "ratio": ratio(r), **({
                              "ratio_visible": ratio(r, "visible"),
                              "masked_over_visible": masked_over_visible(r)}
                              if "visible" in r else {})} for r in rows],
                          "short_task": short_task(rows),
                          **({"short_task_visible": short_task(rows, "visible")}
                             if args.home_visible else {}),
                          "load_end": load[0]}, indent=2))
    else:
        print(report(rows))
        print(f"load average at the end: {load[0]:.2f} (2 cores shared: compare ratios)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
