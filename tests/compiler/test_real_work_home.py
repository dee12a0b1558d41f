"""Issue 21 item 5: real work still works under the masked home.

The stand-in home of ``test_credentials_hidden.cbox`` holds a ``~/.gitconfig``
with an identity beside credential helpers and token URLs, a ``~/.npmrc`` with a
registry and an ``_authToken``, and a ``pip.conf`` whose index URL carries a token
(and every location of the credential table, planted). Under Build, for real:
git commit takes the identity, npm and pip see their registry and index but never
the token, and ``cargo build --offline`` / ``go build`` of a no-deps project work,
the binary reaching the host. Each tool missing here skips with the reason.
"""

from __future__ import annotations

import os
import pwd
import shutil
import subprocess
from pathlib import Path

import pytest

from .sandbox_util import INNER_PY
from .test_credentials_hidden import MARK, TOKEN, cbox  # noqa: F401 - the fixture

pytestmark = pytest.mark.sandbox


def _git_log(ws: Path, fmt: str) -> str:
    return subprocess.run(["git", "-C", str(ws), "log", "-1", f"--format={fmt}"],
                          capture_output=True, text=True, check=True).stdout.strip()


def test_git_commit_takes_the_identity_from_the_masked_homes_gitconfig(cbox):
    """The workspace lies outside the home, which is masked: only the served copy of
    ~/.gitconfig can give git its identity (no -c user.name, no GIT_AUTHOR_*)."""
    r = cbox.run("build", "-c", "git add README && git commit -qm 'from the sandbox' && "
                 "git config --global --list; exit 0")
    assert r.returncode == 0, r.stderr
    assert _git_log(cbox.ws, "%an <%ae>|%s") == "Rf Tester <rf@example.com>|from the sandbox"
    assert TOKEN not in r.stdout and "helper" not in r.stdout


@pytest.mark.skipif(shutil.which("npm") is None, reason="npm is not installed")
def test_npm_sees_the_registry_of_npmrc_but_not_its_token(cbox):
    r = cbox.run("build", "-c", "npm config get registry; npm config get @corp:registry; "
                 "npm config list; exit 0")
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert lines[:2] == ["https://registry.npmjs.org/", "https://npm.corp.example/"], r.stdout
    # npm never prints a token, but lists one it holds as
    # "//registry.npmjs.org/:_authToken = (protected)": here it holds none.
    assert "_authToken" not in r.stdout and "protected" not in r.stdout
    assert TOKEN not in r.stdout + r.stderr and MARK not in r.stdout


def test_pip_sees_the_index_of_pip_conf_but_not_its_token(cbox):
    r = cbox.run("build", "-c", f"{INNER_PY} -m pip config list; exit 0")
    assert r.returncode == 0, r.stderr
    assert "global.index-url='https://pypi.corp.example/simple'" in r.stdout, r.stdout
    assert "global.timeout='9'" in r.stdout
    assert TOKEN not in r.stdout + r.stderr and "__token__" not in r.stdout


def _rust_env() -> dict[str, str] | None:
    """RUSTUP_HOME / CARGO_HOME of a rustup install this user can read (the run's
    own, else the account's ~/.rustup and ~/.cargo): the stand-in home has none, as
    in the Rust images (RUSTUP_HOME=/usr/local/rustup, CARGO_HOME=/usr/local/cargo)."""
    home = pwd.getpwuid(os.getuid()).pw_dir
    rustup = os.environ.get("RUSTUP_HOME") or os.path.join(home, ".rustup")
    cargo = os.environ.get("CARGO_HOME") or os.path.join(home, ".cargo")
    if os.access(os.path.join(cargo, "bin", "cargo"), os.X_OK) and os.path.isdir(rustup):
        return {"RUSTUP_HOME": rustup, "CARGO_HOME": cargo,
                "PATH": os.path.join(cargo, "bin") + ":" + os.environ["PATH"]}
    return None


def _crate(ws: Path) -> None:
    (ws / "Cargo.toml").write_text('[package]\nname = "demo"\nversion = "0.1.0"\n'
                                   'edition = "2021"\n\n[dependencies]\n')
    src = ws / "src"
    src.mkdir()
    (src / "main.rs").write_text("mod a;\nmod b;\nfn main() { println!(\"demo {}\", "
                                 "a::f() + b::g()); }\n")
    (src / "a.rs").write_text("pub fn f() -> u32 { 40 }\n")
    (src / "b.rs").write_text("pub fn g() -> u32 { 2 }\n")


@pytest.mark.skipif(_rust_env() is None, reason="no rustup cargo this user can read "
                    "(RUSTUP_HOME/CARGO_HOME, or ~/.rustup and ~/.cargo/bin/cargo)")
def test_cargo_build_offline_works_with_rustup_outside_the_stand_in_home(cbox):
    """Before: the env passlist dropped RUSTUP_HOME, so rustup's proxy looked in
    the (empty) ~/.rustup: "rustup could not choose a version of cargo to run"."""
    _crate(cbox.ws)
    r = cbox.run("build", "-c", "cargo build --offline -q && ./target/debug/demo",
                 env=cbox.env(**_rust_env()), timeout=300)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "demo 42"
    binary = cbox.ws / "target" / "debug" / "demo"        # applied to the host
    assert subprocess.run([str(binary)], capture_output=True, text=True).stdout == "demo 42\n"


@pytest.mark.skipif(shutil.which("go") is None, reason="go is not installed "
                    "(apt-get install golang-go)")
def test_go_build_works_with_its_cache_in_the_tooling_dir(cbox):
    (cbox.ws / "go.mod").write_text("module example.com/demo\n\ngo 1.19\n")
    (cbox.ws / "util").mkdir()
    (cbox.ws / "util" / "util.go").write_text("package util\n\nfunc N() int { return 42 }\n")
    (cbox.ws / "main.go").write_text('package main\n\nimport (\n\t"fmt"\n\n\t'
                                     '"example.com/demo/util"\n)\n\n'
                                     'func main() { fmt.Println("demo", util.N()) }\n')
    r = cbox.run("build", "-c", "go env GOCACHE GOPATH && go build -o demo . && ./demo",
                 timeout=300)
    assert r.returncode == 0, r.stderr
    gocache, gopath, out = r.stdout.splitlines()
    tooling = str(cbox.state / "cache" / "tooling")
    assert gocache == f"{tooling}/go-build" and gopath == f"{tooling}/go", r.stdout
    assert out == "demo 42"
    assert subprocess.run([str(cbox.ws / "demo")], capture_output=True,
                          text=True).stdout == "demo 42\n"


def test_a_rustup_and_cargo_home_elsewhere_in_the_home_are_bound_without_secrets(cbox):
    """RUSTUP_HOME / CARGO_HOME at a non-default place inside the masked home: the
    toolchains and cargo's bin, registry and git are bound read-only; cargo's
    config.toml and credentials stay hidden."""
    rustup, cargo = cbox.home / "tools" / "rustup", cbox.home / "tools" / "cargo"
    (rustup / "toolchains").mkdir(parents=True)
    (rustup / "toolchains" / "marker").write_text("rustup-toolchains\n")
    for sub in ("bin", "registry", "git"):
        (cargo / sub).mkdir(parents=True)
        (cargo / sub / "marker").write_text(f"cargo-{sub}\n")
    (cargo / "credentials.toml").write_text(f'[registry]\ntoken = "{MARK}-cargo-cred"\n')
    (cargo / "config.toml").write_text(f'[registry]\ntoken = "{MARK}-cargo-config"\n')
    r = cbox.run("build", "-c", 'cat "$RUSTUP_HOME"/toolchains/marker "$CARGO_HOME"/*/marker '
                 '"$CARGO_HOME"/credentials.toml "$CARGO_HOME"/config.toml; '
                 'echo x > "$CARGO_HOME"/bin/new; exit 0',
                 env=cbox.env(RUSTUP_HOME=str(rustup), CARGO_HOME=str(cargo)))
    assert r.returncode == 0, r.stderr
    assert "rustup-toolchains" in r.stdout
    assert all(f"cargo-{sub}" in r.stdout for sub in ("bin", "registry", "git")), r.stdout
    assert MARK not in r.stdout
    assert not (cargo / "bin" / "new").exists()


@pytest.mark.parametrize("where", ["home", "config", "parent"])
def test_a_toolchain_variable_naming_the_home_unmasks_nothing(cbox, where):
    """RUSTUP_HOME (or CARGO_HOME) set to the home itself, a masked XDG dir, or a dir
    above the home must not bind it back: the mask would be undone for every file the
    credential table does not name (notes, configs, keys under other names)."""
    (cbox.home / "notes.txt").write_text(f"{MARK}-notes\n")
    (cbox.home / ".config" / "app").mkdir(parents=True, exist_ok=True)
    (cbox.home / ".config" / "app" / "settings").write_text(f"{MARK}-settings\n")
    target = {"home": cbox.home, "config": cbox.home / ".config",
              "parent": cbox.home.parent}[where]
    r = cbox.run("build", "-c", f'cat {cbox.home}/notes.txt {cbox.home}/.config/app/settings; '
                 f'ls -a {cbox.home}; exit 0',
                 env=cbox.env(RUSTUP_HOME=str(target), CARGO_HOME=str(target)))
    assert r.returncode == 0, r.stderr
    assert MARK not in r.stdout
    assert "notes.txt" not in r.stdout
