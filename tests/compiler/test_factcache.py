"""compiler/factcache.py: path facts a warm process reuses, and re-derives the moment
what they depend on may have changed (issue 24's warm path, issue 21's masks)."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from ringfence.compiler import factcache
from ringfence.compiler.host import path_fact
# The racy window, shortened for these unit tests (ext4's coarse clock ticks every
# few ms): the logic is the same at 2 s (tests/ringfence/session uses the real one).
RACY_NS = 300_000_000


@pytest.fixture(autouse=True)
def _fresh(monkeypatch):
    monkeypatch.setattr(factcache, "RACY_NS", RACY_NS)
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


def _quiet(tmp_path, attempt):
    """Run ``attempt(dir)`` in fresh dirs until nothing above the dir changed while
    it ran. /tmp and /var/tmp change every second or two on a shared machine (other
    test runs), which voids every fact under them, rightly, and says nothing about
    reuse: the dirs are made directly under / (root) or the home when writable."""
    import shutil
    import tempfile

    roots = [r for r in ("/", os.path.expanduser("~")) if os.access(r, os.W_OK)]
    for i in range(5):
        base = tempfile.mkdtemp(prefix="rf-factcache-", dir=roots[0] if roots else tmp_path)
        try:
            def above():
                return [factcache._stat(d) for d in factcache._ancestors(base)]
            factcache.forget()
            time.sleep(RACY_NS / 1e9 + 0.1)         # mkdtemp just changed the parent
            before = above()
            result = attempt(Path(base))
            if above() == before:
                return result
        finally:
            shutil.rmtree(base, ignore_errors=True)
    pytest.skip("the directories above the test's never stayed quiet")


def test_unchanged_paths_are_not_derived_again(tmp_path):
    def attempt(base):
        (base / "a").mkdir()
        paths = [str(base / "a" / "x"), str(base / "b")]
        _settle()
        derive = Counting()
        first = factcache.facts(paths, derive)
        again = factcache.facts(paths, derive)
        return paths, derive.calls, first, again
    paths, calls, first, again = _quiet(tmp_path, attempt)
    assert calls == paths            # the second call derived nothing
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
    def attempt(base):
        (base / "quiet").mkdir()
        (base / "busy").mkdir()
        quiet, busy = str(base / "quiet" / "q"), str(base / "busy" / "b")
        _settle()
        derive = Counting()
        factcache.facts([quiet, busy], derive)
        (base / "busy" / "tmpfile").write_text("")
        factcache.facts([quiet, busy], derive)
        return quiet, busy, derive.calls
    quiet, busy, calls = _quiet(tmp_path, attempt)
    assert calls == [quiet, busy, busy]
