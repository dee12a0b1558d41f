"""Unit checks of the second-pass judges (issue 19 review): the parts the
sandbox attack tests in test_staging_review.py do not reach one by one."""

from __future__ import annotations

import pytest

from ringfence.staging.git.file_judges import judge_attributes
from ringfence.staging.git.ignore import _ignored, _patterns
from ringfence.staging.git.keys import key_hides_changes, key_redirects_push
from ringfence.staging.git.repo_judges import judge_packed_refs, judge_shallow
from ringfence.staging.shadow import _envrc_dirs


@pytest.mark.parametrize("text,old", (
    ("README\r diff=t\n", ""), ("a\x0c filter=x\n", ""), ("*.py hide\n", "[attr]hide -diff\n"),
    ("*.py b\n", "[attr]hide binary\n[attr]b hide\n"), ("x -merge\n", ""),
))
def test_attributes_held(text, old):
    assert judge_attributes(text, old)


@pytest.mark.parametrize("text", ("*.py text eol=lf\n", "# c\r* filter=a\n", "*.png -text\n"))
def test_attributes_fine(text):
    assert judge_attributes(text, "") is None


def test_packed_refs_and_shallow():
    oid = b"a" * 40
    assert judge_packed_refs(oid + b" refs/replace/" + b"b" * 40 + b"\n", b"")
    assert judge_packed_refs(b"# pack-refs with: peeled\n" + oid + b" refs/heads/main\n",
                             b"") is None
    assert judge_shallow(oid + b"\n", b"")
    assert judge_shallow(b"", oid + b"\n") is None          # unshallowing is fine


@pytest.mark.parametrize("key,value", (
    ("remote.o.mirror", "true"), ("remote.o.pushurl", "https://x/y"), ("remote.o.push", "+a:b"),
    ("branch.main.rebase", "interactive"), ("pull.rebase", "i"), ("push.default", "matching"),
    ("remote.pushDefault", "evil"), ("remote.o.fetch", "+refs/heads/*:refs/heads/*")))
def test_push_redirects(key, value):
    assert key_redirects_push(key, value)


@pytest.mark.parametrize("key,value", (("branch.main.rebase", "true"), ("push.default", "simple"),
                                       ("remote.o.url", "https://x/y"), ("user.name", "n"),
                                       ("remote.o.fetch", "+refs/heads/*:refs/remotes/o/*"),
                                       ("remote.o.fetch", "refs/heads/main")))
def test_push_fine(key, value):
    assert not key_redirects_push(key, value)


@pytest.mark.parametrize("key", ("diff.relative", "core.ignoreCase", "status.short",
                                 "color.diff.new", "color.Status.added", "submodule.x.ignore"))
def test_hiding_keys(key):
    assert key_hides_changes(key, "x")
    assert not key_hides_changes("color.ui", "auto")


def test_ignore_matcher():
    pats = _patterns("*\n", "")
    assert _ignored("conftest.py", pats) and _ignored("a/b.py", pats)
    pats = _patterns("build/\n/top.txt\n!keep\n# c\n", "")
    assert _ignored("build/x", pats) and not _ignored("build", pats)
    assert _ignored("top.txt", pats) and not _ignored("sub/top.txt", pats)
    assert not _ignored("keep", pats)
    assert _patterns("a\n", "a\n") == []                    # only added lines count


def test_envrc_path_add(tmp_path):
    (tmp_path / ".envrc").write_text("PATH_add scripts ./tools/bin\npath_add PATH \"$PWD/x\"\n"
                                     "PATH_add /abs # c\n"
                                     'export PATH="$PWD/t2/bin:${PWD}/t3:$PATH"\n')
    assert _envrc_dirs(str(tmp_path)) == ["scripts", "tools/bin", "x", "t2/bin", "t3"]
