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
  task whose cost is mostly the fixed cost of a run;
- true: `true` bare against `ringfence run -p build -- true`: the fixed cost of a
  run, measured TRUE_REPS times as often (it is short and noisy).

The git overhead (build - bare) is printed against that fixed cost (issue 19
item 10: a short task costs no more than `run -- true`).

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
                                 [--against RINGFENCE] [--json]
"""

from __future__ import annotations

import argparse
import io
import json
import os
import shutil
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _timing import ROOT, real_python, ringfence_bin, table  # noqa: E402

WHEELS_DIR = ROOT / "bench" / ".cache" / "wheels"
WHEELS = ["six==1.16.0", "idna==3.7", "attrs==23.2.0", "packaging==24.0",
          "iniconfig==2.0.0", "pluggy==1.5.0"]
PACKAGES, FILES = 150, 24          # npm: 150 packages x 24 files = 3,600 files
MODULES, TESTS = 150, 20           # pytest: 3,000 tests
GIT_FILES = 200                    # git: 200 files in 10 dirs
TRUE_REPS = 5                      # the fixed-cost row: 5 samples per run
NPM, NPM_WS = "npm install", "npm install, cache in the workspace"
BASELINE = {NPM_WS: 1.27, "venv + pip install": 1.22, "pytest": 1.07}
TARGET = 1.15          # issue 19 item 10: real work within 1.15x bare
TARGETED = (NPM, NPM_WS, "venv + pip install", "pytest")


def make_tarballs(where: Path, packages: int, files: int) -> list[str]:
    """npm tarballs (package/ prefix, like `npm pack`), deterministic."""
    where.mkdir(parents=True)
    out = []
    for i in range(packages):
        name = f"bench-pkg-{i:04d}"
        path = where / f"{name}-1.0.0.tgz"
        with tarfile.open(path, "w:gz") as tar:
            members = {"package/package.json":
                       json.dumps({"name": name, "version": "1.0.0", "main": "index.js"})}
            members["package/index.js"] = "module.exports = require('./lib/f0.js');\n"
            for k in range(files - 2):
                members[f"package/lib/f{k}.js"] = f"exports.v = {k};\n" * 4
            for member, text in members.items():
                data = text.encode()
                info = tarfile.TarInfo(member)
                info.size, info.mtime, info.mode = len(data), 0, 0o644
                tar.addfile(info, io.BytesIO(data))
        out.append(path.name)
    return out


def npm_project(ws: Path, packages: int, files: int) -> None:
    tarballs = make_tarballs(ws / "tarballs", packages, files)
    proj = ws / "project"
    proj.mkdir()
    deps = {t.rsplit("-1.0.0", 1)[0]: f"file:../tarballs/{t}" for t in tarballs}
    (proj / "package.json").write_text(json.dumps({"name": "bench", "version": "1.0.0",
                                                   "private": True, "dependencies": deps}))


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


def test_suite(ws: Path, modules: int, tests: int) -> None:
    d = ws / "suite"
    d.mkdir()
    for m in range(modules):
        body = "".join(f"def test_{m}_{t}():\n    assert {t} + {m} == {m + t}\n\n"
                       for t in range(tests))
        (d / f"test_m{m:04d}.py").write_text(body)


def git_tree(ws: Path, files: int) -> None:
    d = ws / "gitwork"
    for i in range(files):
        f = d / f"d{i % 10}" / f"f{i:04d}.txt"
        f.parent.mkdir(parents=True, exist_ok=True)
        f.write_text(f"file {i}\n" * 8)


GIT = ("cd gitwork && git init -q && git add -A && git -c user.name=bench "
       "-c user.email=bench@example.invalid -c commit.gpgsign=false commit -q -m bench")


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
    out.append({"name": "true (fixed cost)", "argv": ["true"], "clean": [],
                "reps": TRUE_REPS})
    return out


def _clean(ws: Path, rels: list[str], grave: Path | None) -> None:
    """Move what a run wrote out of the way (untimed), into ``grave``, removed when
    every job is done: deleting thousands of files just before the next run would
    charge that run for it on a journal-less ext4, which will not reuse an inode
    freed in the last minute and scans past each one on every create.
    ``grave=None`` (--delete): delete it now, as this bench did before."""
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
            delete: bool = False, against: str | None = None) -> list[dict]:
    """Medians need ``runs`` >= 1. ``delete``: remove what a run wrote between runs
    instead of moving it aside. ``against``: another ``ringfence`` (say main's),
    run under Build too, interleaved with this one (column ``other``)."""
    rf = ringfence_bin()
    tmp = tempfile.mkdtemp(prefix="rf-bench-real-", dir=base_dir or "/var/tmp")
    results = []
    try:
        ws, grave = Path(tmp) / "ws", None if delete else Path(tmp) / "removed"
        ws.mkdir()
        base_env = {**os.environ, "RINGFENCE_HOME": os.path.join(tmp, "state")}
        base_env.pop("RINGFENCE_SESSION", None)
        for job in jobs(ws, quick):
            row = {"name": job["name"], "bare": [], "build": [], "note": job.get("skip", "")}
            if "skip" in job:
                results.append(row)
                continue
            env = {**base_env, **{k: os.path.join(tmp, "npm-cache") if v == "CACHE" else v
                                  for k, v in job.get("env", {}).items()}}
            sandboxed = ["run", "-p", "build", "--workspace", str(ws), "--", *job["argv"]]
            modes = {"bare": (job["argv"], env), "build": ([rf, *sandboxed], env)}
            if against:
                # its own state dir: another version may keep another ledger schema
                row["other"] = []
                modes["other"] = ([against, *sandboxed],
                                  {**env, "RINGFENCE_HOME": os.path.join(tmp, "state-other")})
            prime = job.get("prime", ())
            for key in [k for k in modes if k in prime or (k == "other" and "build" in prime)]:
                _clean(ws, job["clean"], grave)          # fill a cache once, untimed
                _time(modes[key][0], ws, modes[key][1])
            keys = list(modes)
            for i in range(runs * job.get("reps", 1)):
                for key in keys[i % len(keys):] + keys[:i % len(keys)]:
                    _clean(ws, job["clean"], grave)
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
    return {"git_overhead": over, "fixed_cost": fixed, "within": over <= fixed}


def report(rows: list[dict]) -> str:
    other = any("other" in r for r in rows)
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
        out.append(cells + [f"{base:.2f}x" if base else "", r["note"]])
    text = table(out, ["job", "bare", "ringfence run -p build", "ratio", f"<= {TARGET}x"]
                 + (["--against", "its ratio"] if other else [])
                 + ["issue 12 (main)", "note"])
    for key, who in (("build", ""), ("other", " (--against)")) if other else (("build", ""),):
        st = short_task(rows, key)
        if st is not None:
            text += (f"\n\ngit commit overhead{who} (build - bare): "
                     f"{st['git_overhead'] * 1000:.0f} ms; fixed cost of a run "
                     f"(run -p build -- true - true): {st['fixed_cost'] * 1000:.0f} ms: "
                     + ("within it" if st["within"] else
                        f"{(st['git_overhead'] - st['fixed_cost']) * 1000:.0f} ms over it"))
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
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    if args.runs < 1:
        ap.error("--runs must be at least 1")
    if args.against and not os.access(args.against, os.X_OK):
        ap.error(f"--against {args.against}: not an executable")
    rows = measure(args.runs, args.quick, args.dir, args.delete, args.against)
    load = os.getloadavg()
    if args.json:
        print(json.dumps({"rows": [{**r, "ratio": ratio(r)} for r in rows],
                          "short_task": short_task(rows), "load_end": load[0]}, indent=2))
    else:
        print(report(rows))
        print(f"load average at the end: {load[0]:.2f} (2 cores shared: compare ratios)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
