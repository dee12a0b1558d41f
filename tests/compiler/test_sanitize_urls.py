"""Issue 21 attack review: tokens the sanitizer and the value check missed.

Configs served in the masked home (``~/.npmrc``, ``pip.conf``, ``~/.gitconfig``)
can carry a token in a URL's PATH (Gemfury: ``https://pypi.fury.io/TOKEN/user/``)
or QUERY (``?token=``, ``?access_token=``), not only in its user info; a
passed variable (LC_* is on every passlist) can hold ``https://TOKEN@host`` (no password), a Google ``ya29.`` access
token, or a 40-hex token after ``token:``. Through the real ``ringfence run``:
none of them comes out; the harmless lines and variables still do.
"""

from __future__ import annotations

import shutil

import pytest

from ringfence.compiler.sanitize import gitconfig, ini_urls, npmrc
from ringfence.rfcore.credentials import value_looks_like_credential

from .sandbox_util import make_box

FURY = "Xk3pQ9vR7tY2wL5mN8bZ"                      # Gemfury-style push/pull token
QTOK = "a8F3kd92LmQpZx71Vb0Rt"
GOOG = "ya29.a0AfB_byC1dE2fG3hI4jK5lM6nO7pQ8rS9tU0v"
HEX = "3f786850e387550fdab836ed7e6dc881de23001b"
USERTOK = "glpat" + "Ab3dEf6hIj9kLm2nOp5q"


@pytest.mark.sandbox
@pytest.mark.skipif(shutil.which("bwrap") is None, reason="needs bubblewrap")
def test_tokens_in_url_paths_queries_and_value_shapes_do_not_reach_the_sandbox():
    b = make_box()
    try:
        (b.home / ".npmrc").write_text(
            "registry=https://registry.npmjs.org/\n"
            f"@corp:registry=https://npm.fury.io/{FURY}/corp/\n"
            f"@other:registry=https://npm.other.example/repo/?token={QTOK}\n")
        (b.home / ".config/pip").mkdir(parents=True)
        (b.home / ".config/pip/pip.conf").write_text(
            "[global]\nindex-url = https://pypi.org/simple/\n"
            f"extra-index-url = https://pypi.fury.io/{FURY}/corp/\n"
            f"find-links = https://dl.example/wheels/?access_token={QTOK}\n")
        (b.home / ".gitconfig").write_text(
            "[user]\n\temail = rf21b@example.com\n"
            f"[url \"https://git.fury.io/{FURY}/\"]\n\tinsteadOf = https://git.example/\n"
            "[alias]\n\tco = checkout\n")
        env = b.env(LC_REPO_URL=f"https://{USERTOK}@gitlab.example/g/r.git",
                    LC_GCP=GOOG, LC_NOTE=f"token: {HEX}", LC_SHA=HEX,
                    LC_PLAIN="https://git@github.com/o/r.git")
        r = b.run("build", "-c", "cat ~/.npmrc ~/.config/pip/pip.conf ~/.gitconfig; env; "
                  "git config --global --get-regexp 'url.*'; exit 0", env=env)
        assert r.returncode == 0, r.stderr
        for secret in (FURY, QTOK, GOOG, USERTOK, f"token: {HEX}"):
            assert secret not in r.stdout, secret
        assert "registry=https://registry.npmjs.org/" in r.stdout
        assert "index-url = https://pypi.org/simple/" in r.stdout
        assert "rf21b@example.com" in r.stdout and "co = checkout" in r.stdout
        assert "insteadOf" not in r.stdout                 # its section went whole
        assert f"LC_SHA={HEX}" in r.stdout                 # a bare commit id is no secret
        assert "LC_PLAIN=https://git@github.com/o/r.git" in r.stdout
        for name in ("LC_REPO_URL", "LC_GCP", "LC_NOTE"):
            assert name in r.stderr and "RF610" in r.stderr, r.stderr
    finally:
        shutil.rmtree(b.root, ignore_errors=True)


def test_the_shapes_one_by_one():
    assert npmrc(f"@s:registry=https://npm.fury.io/{FURY}/u/\n") == ""
    assert ini_urls(f"index-url = https://h.example/simple?auth={QTOK}\n") == ""
    assert ini_urls("index-url = https://h.example/simple/?page=2\n") != ""
    assert ini_urls("index-url = https://h.example/my-internal-package-index/simple/\n") != ""
    assert "insteadOf" not in gitconfig(f"[url \"https://h/{FURY}/\"]\n\tinsteadOf = https://h/\n")
    for v in (f"https://{USERTOK}@h/x", GOOG, f"token={HEX}", f"Authorization: token {HEX}",
              f"password {HEX}"):
        assert value_looks_like_credential(v), v
    for v in (HEX, "https://git@github.com/o/r", "https://x-access-token@h/", "ya29"):
        assert not value_looks_like_credential(v), v
