"""The projects and the stand-in home that bench/real_work.py times its jobs on.

Everything is generated, deterministic and self-contained (no registry, no
network): npm tarballs, a pytest suite, a git tree, a no-deps crate and Go
module, and a home set up as a user's (identity, registry, index, fake secrets).
"""

from __future__ import annotations

import io
import json
import os
import pwd
import shutil
import tarfile
from pathlib import Path

FNS = 40                           # cargo / go: functions per module


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


FAKE_TOKEN = "npm_" + "BenchFakeToken0123456789abcdefghijkl"


def stand_in_home(home: Path) -> None:
    """A user's home as the jobs read it: git identity, npm registry, pip index,
    each beside a (fake) secret that the masked home must not show."""
    home.mkdir()
    (home / ".gitconfig").write_text(
        "[user]\n\tname = Bench User\n\temail = bench@example.invalid\n"
        "[credential]\n\thelper = store\n[init]\n\tdefaultBranch = main\n")
    (home / ".npmrc").write_text("registry=https://registry.npmjs.org/\n"
                                 f"//registry.npmjs.org/:_authToken={FAKE_TOKEN}\n")
    (home / ".config" / "pip").mkdir(parents=True)
    (home / ".config" / "pip" / "pip.conf").write_text(
        f"[global]\nindex-url = https://__token__:{FAKE_TOKEN}@pypi.example.invalid/simple\n")


def rust_env() -> dict[str, str] | None:
    """Where rustup's toolchains and cargo are (the environment's RUSTUP_HOME /
    CARGO_HOME, else the account's ~/.rustup and ~/.cargo), or None without cargo."""
    home = pwd.getpwuid(os.getuid()).pw_dir
    cargo_home = os.environ.get("CARGO_HOME") or os.path.join(home, ".cargo")
    rustup = os.environ.get("RUSTUP_HOME") or os.path.join(home, ".rustup")
    if os.access(os.path.join(cargo_home, "bin", "cargo"), os.X_OK):
        path, bin_dir = os.environ.get("PATH", ""), os.path.join(cargo_home, "bin")
        env = {"CARGO_HOME": cargo_home, "PATH": path if bin_dir in path.split(":")
               else f"{bin_dir}:{path}"}
        return {**env, "RUSTUP_HOME": rustup} if os.path.isdir(rustup) else env
    return None if shutil.which("cargo") is None else {}


def crate(ws: Path, mods: int) -> None:
    src = ws / "crate" / "src"
    src.mkdir(parents=True)
    (ws / "crate" / "Cargo.toml").write_text('[package]\nname = "bench"\nversion = "0.1.0"\n'
                                             'edition = "2021"\n\n[dependencies]\n')
    calls = []
    for m in range(mods):
        body = "".join(f"pub fn f{k}(x: u64) -> u64 {{ x.wrapping_mul({k + 3}) ^ {m} }}\n"
                       for k in range(FNS))
        body += "pub fn all(x: u64) -> u64 { " + " + ".join(
            f"f{k}(x)" for k in range(FNS)) + " }\n"
        (src / f"m{m:02d}.rs").write_text(body)
        calls.append(f"m{m:02d}::all(1)")
    (src / "main.rs").write_text("".join(f"mod m{m:02d};\n" for m in range(mods))
                                 + 'fn main() { println!("{}", ' + " + ".join(calls) + "); }\n")


def go_module(ws: Path, pkgs: int) -> None:
    d = ws / "gomod"
    d.mkdir()
    (d / "go.mod").write_text("module example.invalid/bench\n\ngo 1.19\n")
    imports, calls = [], []
    for p in range(pkgs):
        (d / f"p{p:02d}").mkdir()
        body = f"package p{p:02d}\n\n" + "".join(
            f"func F{k}(x uint64) uint64 {{ return x*{k + 3} ^ {p} }}\n" for k in range(FNS))
        body += "\nfunc All(x uint64) uint64 { return " + " + ".join(
            f"F{k}(x)" for k in range(FNS)) + " }\n"
        (d / f"p{p:02d}" / f"p{p:02d}.go").write_text(body)
        imports.append(f'\t"example.invalid/bench/p{p:02d}"\n')
        calls.append(f"p{p:02d}.All(1)")
    (d / "main.go").write_text('package main\n\nimport (\n\t"fmt"\n' + "".join(imports)
                               + ")\n\nfunc main() { fmt.Println(" + " + ".join(calls) + ") }\n")
