"""Issue 21 attack review: overrides that move configs OUT of the home.

A person who sets ``XDG_CONFIG_HOME``/``XDG_DATA_HOME``/``XDG_STATE_HOME`` to a
directory outside the home, ``GIT_CONFIG_GLOBAL`` to a file elsewhere, or a tool
variable (``CLAUDE_CONFIG_DIR``, ``CODEX_HOME``, ``DOCKER_CONFIG``) to a directory,
keeps secrets there that the home mask never saw. Each is planted under
/var/tmp (outside the stand-in home, outside the sandbox's private /tmp) and
read through the real ``ringfence run`` in every sandboxed profile: nothing of
it comes out, except the allowlisted rows (git's ignore file) and the sanitized
configs (uv.toml, the global git config without its secrets).
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from .sandbox_util import make_box

pytestmark = [pytest.mark.sandbox,
              pytest.mark.skipif(shutil.which("bwrap") is None, reason="needs bubblewrap")]

PROFILES = ("observe", "build", "strict", "host-assisted")
MARK = "RF21B-OVERRIDE"
TOKEN = "ghp_" + "Z9y8X7w6V5u4T3s2R1q0P9o8N7m6L5k4J3i2"


def _w(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


@pytest.fixture
def obox():
    b = make_box()
    o = b.root / "elsewhere"
    b.cfg, b.data, b.st = o / "cfg", o / "data", o / "state"
    _w(b.cfg / "someapp" / "token.txt", f"{MARK}-cfg\n")                 # no table row
    _w(b.cfg / "git" / "ignore", "*.rf21b-ignored\n")                   # allowlisted
    _w(b.cfg / "uv" / "uv.toml", "[[index]]\nname = \"corp\"\n"
       f"url = \"https://__token__:{TOKEN}@pypi.corp.example/simple\"\n")
    _w(b.data / "opencode" / "auth.json", f"{MARK}-opencode\n")
    _w(b.data / "otherapp" / "db", f"{MARK}-data\n")
    _w(b.st / "someapp" / "session", f"{MARK}-state\n")
    b.gitcfg = _w(o / "gitconfig-global", "[user]\n\temail = rf21b@example.com\n"
                  f"[credential]\n\thelper = store\n[http]\n\textraHeader = Bearer {TOKEN}\n")
    b.claude = o / "claude"
    _w(b.claude / ".credentials.json", f"{MARK}-claude-creds\n")
    _w(b.claude / "settings.local.json", f"{MARK}-claude-settings\n")
    b.codex = o / "codex"
    _w(b.codex / "auth.json", f"{MARK}-codex\n")
    _w(b.codex / "history.jsonl", f"{MARK}-codex-history\n")
    b.docker = o / "docker"
    _w(b.docker / "config.json", f"{MARK}-docker\n")
    _w(b.docker / "contexts" / "meta" / "x" / "meta.json", f"{MARK}-docker-context\n")
    b.oenv = b.env(XDG_CONFIG_HOME=str(b.cfg), XDG_DATA_HOME=str(b.data),
                   XDG_STATE_HOME=str(b.st), GIT_CONFIG_GLOBAL=str(b.gitcfg),
                   CLAUDE_CONFIG_DIR=str(b.claude), CODEX_HOME=str(b.codex),
                   DOCKER_CONFIG=str(b.docker))
    yield b
    shutil.rmtree(b.root, ignore_errors=True)


@pytest.mark.parametrize("profile", PROFILES)
def test_nothing_of_an_override_outside_the_home_is_readable(obox, profile):
    o = obox.root / "elsewhere"
    r = obox.run(profile, "-c", f"cat $(find {o} -type f 2>/dev/null) 2>/dev/null; "
                 f"grep -r . {o} 2>/dev/null; exit 0", env=obox.oenv)
    assert r.returncode == 0, r.stderr
    assert MARK not in r.stdout and TOKEN not in r.stdout, r.stdout[-1500:]


@pytest.mark.parametrize("profile", PROFILES)
def test_allowlisted_and_sanitized_configs_outside_the_home_still_work(obox, profile):
    r = obox.run(profile, "-c", f"cat {obox.cfg}/git/ignore {obox.cfg}/uv/uv.toml "
                 f"{obox.gitcfg}; git config --global user.email; exit 0", env=obox.oenv)
    assert r.returncode == 0, r.stderr
    assert "*.rf21b-ignored" in r.stdout                    # git's ignore file (allowed)
    assert "pypi.corp.example/simple" in r.stdout           # uv's index, without the user
    assert "rf21b@example.com" in r.stdout                  # identity from GIT_CONFIG_GLOBAL
    assert TOKEN not in r.stdout and "helper" not in r.stdout and "extraHeader" not in r.stdout
