"""An exact grant never covers a push after a directory change, however the `cd`
is spelled (issue 20b item 3), through the real hook; where the hook would allow,
the push runs as Claude Code would run it and the remote's refs must be unchanged.
"""

from __future__ import annotations

import subprocess

import pytest

from tests.ringfence.test_ask_grants import (  # noqa: F401  (fixtures)
    _git, _remote_refs, env, grants, pre, repo, yes)

SPELLINGS = ('"cd" ../other && git push origin main', "\\cd ../other && git push origin main",
             "c'd' ../other && git push origin main", "\\pushd ../other && git push origin main",
             "cd .''./other && git push origin main", "cd .\\./other && git push origin main",
             'cd .""./other && git push origin main', "builtin cd ../other; git push origin main",
             "command cd ../other; git push origin main", "'pushd' ../other; git push origin main",
             "cd ../other\ngit push origin main", "{ cd ../other; }; git push origin main",
             "(cd ../other && git push origin main)", "p\\opd; git push origin main")


@pytest.fixture
def other_ahead(repo):
    """../other is a clone of the remote, one commit ahead: a push from it would move main."""
    tmp, ws, remote = repo
    other = tmp / "other"
    subprocess.run(["rm", "-rf", str(other)], check=True)
    _git("clone", "-q", str(remote), str(other), cwd=tmp)
    _git("commit", "-q", "--allow-empty", "-m", "other", cwd=other)
    return repo


@pytest.mark.parametrize("command", SPELLINGS)
def test_a_cd_by_any_spelling_voids_the_exact_push_grant(env, other_ahead, command):
    _, ws, remote = other_ahead
    yes(env, "git push origin main", ws, "toolu_1")
    before = _remote_refs(remote)
    d = pre(env, command, ws, "toolu_2")
    if d == "allow":
        subprocess.run(["bash", "-c", command], cwd=ws, capture_output=True, timeout=60)
    assert d == "ask", command
    assert _remote_refs(remote) == before


@pytest.mark.parametrize("command", SPELLINGS[:7])
def test_a_yes_after_a_cd_grants_nothing(env, other_ahead, command):
    _, ws, _ = other_ahead
    yes(env, command, ws, "toolu_1")
    assert grants(env) == []
