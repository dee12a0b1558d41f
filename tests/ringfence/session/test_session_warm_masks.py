"""A warm Session remembers host facts between runs (compiler/factcache.py, issue 24's
warm path). A credential created after a run must still be hidden from the next one:
the attack is a token written on the host between two runs of one warm Session."""

from __future__ import annotations

import time

import pytest

import ringfence
from ringfence.compiler.secretmasks import RACY_NS

pytestmark = [
    pytest.mark.sandbox,
    pytest.mark.skipif(__import__("shutil").which("bwrap") is None,
                       reason="bubblewrap is not installed"),
]

TOKEN = "gho_WarmSessionTokenMustNeverShow0123456789"


@pytest.fixture
def env(box, monkeypatch):
    for k, v in box.env().items():
        monkeypatch.setenv(k, v)
    for k in ("RINGFENCE_PROFILE", "RINGFENCE_SESSION"):
        monkeypatch.delenv(k, raising=False)
    # A tool's config moved out of the (masked) home by its override variable: the
    # credential table masks that directory wherever it is, once it exists.
    monkeypatch.setenv("GH_CONFIG_DIR", str(box.outside / "ghcfg"))
    return box


@pytest.mark.parametrize("profile", ["strict", "build"])
def test_a_token_written_between_two_warm_runs_is_hidden(env, profile):
    s = ringfence.Session(profile=profile, workspace=str(env.ws), session="warm")
    target = env.outside / "ghcfg" / "hosts.yml"
    first = s.run(f"cat {target} || echo absent")
    assert first.state == "completed" and "absent" in first.stdout
    time.sleep(RACY_NS / 1e9 + 0.2)         # the cached facts are now trusted
    assert s.run("true").state == "completed"
    target.parent.mkdir()
    target.write_text(f"github.com:\n    oauth_token: {TOKEN}\n")
    r = s.run(f"cat {target}; ls {target.parent}")
    assert TOKEN not in r.stdout and TOKEN not in r.stderr
    # The same file outside the credential table is readable (the test can fail).
    plain = env.outside / "plain.txt"
    plain.write_text(TOKEN)
    assert TOKEN in s.run(f"cat {plain}").stdout
