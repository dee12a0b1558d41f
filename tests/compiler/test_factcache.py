"""compiler/factcache.py: path facts a warm process reuses, and re-derives the moment
what they depend on may have changed (issue 24's warm path, issue 21's masks)."""

from __future__ import annotations

import os
import time

import pytest

from ringfence.compiler import factcache
from ringfence.compiler.host import path_fact
from ringfence.compiler.secretmasks import RACY_NS


@pytest.fixture(autouse=True)
def _fresh():
    factcache.forget()
    yield
    factcache.forget()


def _settle() -> None:
    time.sleep(RACY_NS / 1e9 + 0.1)


class Counting:
    def __init__(self):
        self.calls: list[str] = []

    def __call__(self, p: str):
        self.calls.append(p)
        return path_fact(p)


def test_unchanged_paths_are_not_derived_again(tmp_path):
    (tmp_path / "a").mkdir()
    paths = [str(tmp_path / "a" / "x"), str(tmp_path / "b")]
    _settle()
    derive = Counting()
    first = factcache.facts(paths, derive)
    again = factcache.facts(paths, derive)
    assert derive.calls == paths            # the second call derived nothing
    assert again == first and first[paths[0]].kind == "missing"


def test_a_file_created_since_is_seen(tmp_path):
    (tmp_path / "gh").mkdir()
    secret = tmp_path / "gh" / "hosts.yml"
    _settle()
    derive = Counting()
    assert factcache.facts([str(secret)], derive)[str(secret)].kind == "missing"
    secret.write_text("oauth_token: x\n")
    assert factcache.facts([str(secret)], derive)[str(secret)].kind == "file"
    assert len(derive.calls) == 2


def test_a_directory_created_higher_up_is_seen(tmp_path):
    secret = tmp_path / "cfg" / "gh" / "hosts.yml"
    _settle()
    assert factcache.facts([str(secret)], path_fact)[str(secret)].kind == "missing"
    secret.parent.mkdir(parents=True)
    secret.write_text("t\n")
    assert factcache.facts([str(secret)], path_fact)[str(secret)].kind == "file"


def test_a_directory_swapped_for_a_link_is_seen(tmp_path):
    (tmp_path / "real").mkdir()
    (tmp_path / "real" / "f").write_text("x")
    (tmp_path / "d").mkdir()
    p = str(tmp_path / "d" / "f")
    _settle()
    assert factcache.facts([p], path_fact)[p].kind == "missing"
    os.rmdir(tmp_path / "d")
    os.symlink(tmp_path / "real", tmp_path / "d")
    f = factcache.facts([p], path_fact)[p]
    assert f.kind == "file" and f.real == str(tmp_path / "real" / "f")


def test_a_path_through_a_link_is_never_reused(tmp_path):
    (tmp_path / "real").mkdir()
    os.symlink(tmp_path / "real", tmp_path / "lnk")
    p = str(tmp_path / "lnk" / "f")
    _settle()
    derive = Counting()
    factcache.facts([p], derive)
    factcache.facts([p], derive)
    assert derive.calls == [p, p]


def test_a_recently_changed_directory_is_not_trusted(tmp_path):
    p = str(tmp_path / "x")
    derive = Counting()
    factcache.facts([p], derive)          # tmp_path was just made: same clock tick risk
    factcache.facts([p], derive)
    assert derive.calls == [p, p]


def test_a_busy_directory_elsewhere_does_not_void_the_rest(tmp_path):
    (tmp_path / "quiet").mkdir()
    (tmp_path / "busy").mkdir()
    quiet, busy = str(tmp_path / "quiet" / "q"), str(tmp_path / "busy" / "b")
    _settle()
    derive = Counting()
    factcache.facts([quiet, busy], derive)
    (tmp_path / "busy" / "tmpfile").write_text("")
    factcache.facts([quiet, busy], derive)
    assert derive.calls == [quiet, busy, busy]
