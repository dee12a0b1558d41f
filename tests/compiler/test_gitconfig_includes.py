"""Issue 21: files a gitconfig includes from under the masked home are served too.

``~/.gitconfig`` is served inside every sandbox from a memfd with its credential
sections removed (compiler/sanitize.py), but the home itself is an empty tmpfs: an
``[include] path = ~/.gitconfig.d/user`` (or an ``includeIf``) named a file the
sandbox could not read, so git lost ``user.name``. Each included file (recursively,
git's own depth) under the home is now served the same sanitized way. Each test
runs a built-in profile through the real ``ringfence run`` and checks what git in
the sandbox printed: the included identity is there, no credential helper, token
or URL rewrite from an included file is. Run as root and as the unprivileged user.
"""

from __future__ import annotations

import os
import shutil

import pytest

from .sandbox_util import make_box

pytestmark = [pytest.mark.sandbox,
              pytest.mark.skipif(shutil.which("git") is None, reason="git is needed")]

TOKEN = "ghp_" + "Z9y8X7w6V5u4T3s2R1q0P9o8N7m6L5k4J3i2"
TOKEN2 = "glpat-" + "Qw3rTy7uIo9pAs1dFg5h"


@pytest.fixture
def ibox():
    b = make_box()
    d = b.home / ".gitconfig.d"
    d.mkdir()
    (b.home / ".gitconfig").write_text(
        "[include]\n\tpath = ~/.gitconfig.d/user\n"
        f"[includeIf \"gitdir:{b.ws}/\"]\n\tpath = .gitconfig.d/work\n"
        "[alias]\n\tst = status\n")
    (d / "user").write_text(
        "[user]\n\tname = Included Name\n\temail = inc@example.com\n"
        "[include]\n\tpath = nested\n"
        "[credential]\n\thelper = store --file ~/.secret-creds\n"
        f"[url \"https://x-access-token:{TOKEN}@github.com/\"]\n\tinsteadOf = https://github.com/\n")
    (d / "nested").write_text(
        "[core]\n\tabbrev = 12\n"
        f"[credential \"https://gitlab.example\"]\n\thelper = \"!echo password={TOKEN2}\"\n")
    (d / "work").write_text(
        "[user]\n\tsigningkey = ABC123\n"
        f"[http]\n\textraHeader = Authorization: Bearer {TOKEN}\n")
    yield b
    shutil.rmtree(b.root, ignore_errors=True)


GIT_PROBE = ("git config user.name; git config user.email; git config core.abbrev; "
             "git config user.signingkey; echo ---; "
             "git config --global --includes --get-regexp '^(credential|url|http)\\.' ; "
             "cat ~/.gitconfig.d/user ~/.gitconfig.d/nested ~/.gitconfig.d/work; "
             "grep -r . \"$HOME\" 2>/dev/null; exit 0")


@pytest.mark.parametrize("profile", ("strict", "build"))
def test_an_included_identity_is_visible_and_its_secrets_are_not(ibox, profile):
    r = ibox.run(profile, "-c", GIT_PROBE)
    assert r.returncode == 0, r.stderr
    head, _, rest = r.stdout.partition("---")
    # the identity and settings of the included files (includeIf gitdir: the workspace)
    assert head.split() == ["Included", "Name", "inc@example.com", "12", "ABC123"], r.stdout
    # nothing git could use to reach a credential, in any included file
    out = r.stdout + r.stderr
    assert TOKEN not in out and TOKEN2 not in out
    assert "helper" not in rest and "insteadOf" not in rest and "extraHeader" not in rest
    assert "credential" not in rest.lower()


def test_an_include_that_leaves_the_home_or_names_a_credential_is_not_served(ibox):
    secret = ibox.outside / "gitconfig-elsewhere"
    secret.write_text("[user]\n\tname = Outside\n")
    d = ibox.home / ".gitconfig.d"
    os.symlink(secret, d / "out")
    os.symlink(ibox.home / ".ssh" / "id_ed25519", d / "key")
    with open(ibox.home / ".gitconfig", "a") as fh:
        fh.write("[include]\n\tpath = ~/.gitconfig.d/key\n\tpath = ~/.gitconfig.d/out\n"
                 "\tpath = ../outside/gitconfig-elsewhere\n")
    r = ibox.run("build", "-c", "cat ~/.gitconfig.d/key ~/.gitconfig.d/out; "
                 "ls -a ~/.gitconfig.d; git config user.email; exit 0")
    assert r.returncode == 0, r.stderr
    assert "RF-FILE-SECRET" not in r.stdout and "Outside" not in r.stdout
    names = r.stdout.split()
    assert "key" not in names and "out" not in names      # never made, not even empty
    assert "inc@example.com" in r.stdout                  # the rest is still served


def test_a_home_that_is_not_masked_serves_the_includes_sanitized_too(ibox):
    """observe masks the home as well; a profile that does not (mask_home = false)
    still gets the served copies, since a raw include would show its helpers."""
    prof = ibox.root / "nomask.toml"
    prof.write_text('extends = "build"\n[filesystem]\nmask_home = false\n')
    r = ibox.run(str(prof), "-c", GIT_PROBE)
    assert r.returncode == 0, r.stderr
    assert "Included Name" in r.stdout
    assert TOKEN not in r.stdout and TOKEN2 not in r.stdout
