"""Issue 21 attack review: the toolchain allowlist must not carry secrets back in.

* A Node prefix reads ``PREFIX/etc/npmrc`` (nvm, volta, fnm, asdf, mise), a
  Python prefix or virtualenv ``PREFIX/pip.conf``: both can hold a registry
  token, inside directories the home allowlist binds back. They are served
  sanitized, like ~/.npmrc and pip.conf.
* An allowed path that is a link into ANY home, the account's password-database
  home included (not only ``$HOME``), is not bound (RF651).
Through the real ``ringfence run``, every sandboxed profile; host-side assertions.
"""

from __future__ import annotations

import os
import pwd
import shutil
from pathlib import Path

import pytest

from .sandbox_util import make_box

pytestmark = [pytest.mark.sandbox,
              pytest.mark.skipif(shutil.which("bwrap") is None, reason="needs bubblewrap")]

PROFILES = ("observe", "build", "strict", "host-assisted")
TOKEN = "npm_" + "Q1w2E3r4T5y6U7i8O9p0A1s2D3f4G5h6J7k8"
PIPTOKEN = "pypi-" + "AgEIcHlwaS5vcmcCJGI4ZjUwNzRlLTg5ZDEtNDk3"
PREFIXES = {
    ".nvm/versions/node/v20.11.0/etc/npmrc": "npm",
    ".volta/tools/image/node/20.11.0/etc/npmrc": "npm",
    ".asdf/installs/nodejs/20.11.0/etc/npmrc": "npm",
    ".pyenv/versions/3.11.7/pip.conf": "pip",
    ".virtualenvs/proj/pip.conf": "pip",
    "miniconda3/envs/ml/pip.conf": "pip",
}


def _w(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


@pytest.fixture
def tbox():
    b = make_box()
    for rel, kind in PREFIXES.items():
        if kind == "npm":
            _w(b.home / rel, "registry=https://registry.npmjs.org/\n"
                             f"//registry.npmjs.org/:_authToken={TOKEN}\n")
        else:
            _w(b.home / rel, "[global]\nindex-url = https://__token__:"
                             f"{PIPTOKEN}@pypi.corp.example/simple\n")
    (b.home / ".nvm/versions/node/v20.11.0/bin").mkdir(parents=True)
    (b.home / ".nvm/versions/node/v20.11.0/bin/node").write_text("#!/bin/sh\necho node\n")
    yield b
    shutil.rmtree(b.root, ignore_errors=True)


@pytest.mark.parametrize("profile", PROFILES)
def test_a_prefix_npmrc_or_pip_conf_is_served_without_its_token(tbox, profile):
    files = " ".join(str(tbox.home / rel) for rel in PREFIXES)
    r = tbox.run(profile, "-c", f"cat {files}; cat ~/.nvm/versions/node/v20.11.0/bin/node; "
                 "exit 0")
    assert r.returncode == 0, r.stderr
    assert TOKEN not in r.stdout and PIPTOKEN not in r.stdout, r.stdout
    assert "echo node" in r.stdout                          # the toolchain is still there
    assert r.stdout.count("registry=https://registry.npmjs.org/") == 3
    assert r.stdout.count("pypi.corp.example/simple") == 3


def test_an_allowed_path_linking_into_the_account_home_is_not_bound(tbox):
    real = Path(pwd.getpwuid(os.getuid()).pw_dir)
    if not real.is_dir() or not os.access(real, os.W_OK) or str(real).startswith("/tmp"):
        pytest.skip("no writable account home here")
    secret_dir = real / f".rf21b-keys-{os.getpid()}"
    secret_dir.mkdir()
    try:
        (secret_dir / "id_key").write_text("RF21B-REAL-HOME-KEY\n")
        (tbox.home / ".local").mkdir(exist_ok=True)
        (tbox.home / ".local" / "bin").symlink_to(secret_dir)
        for profile in PROFILES:
            r = tbox.run(profile, "-c", "cat ~/.local/bin/id_key; ls ~/.local/bin; exit 0")
            assert r.returncode == 0, r.stderr
            assert "RF21B-REAL-HOME-KEY" not in r.stdout and "id_key" not in r.stdout, profile
            assert "RF651" in r.stderr, r.stderr
    finally:
        shutil.rmtree(secret_dir)
