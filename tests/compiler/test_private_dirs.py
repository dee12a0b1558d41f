"""ringfence's own state (ledger, grants, journal), pattern cache and config are
hidden in every sandbox, whatever the profile says and wherever they live.

A sandbox that could write the ledger could forge an "always" grant for any
capability; one that could read it would see earlier host runs' output. Real
bwrap; every assertion is on the host side.
"""

from __future__ import annotations


import pytest

from ringfence.ledger import grants as G
from ringfence.ledger.store import Ledger


pytestmark = pytest.mark.sandbox

SANDBOXED = ("observe", "build", "strict", "host-assisted")
WRITABLE_WS = ("build", "strict", "host-assisted")
SQLITE_MAGIC = "SQLite format 3"


@pytest.mark.parametrize("profile", WRITABLE_WS)
def test_a_state_dir_inside_the_workspace_is_refused(box, profile):
    # Issue 19: hidden is not enough (the host's own tools act on the workspace,
    # and a held-but-kept stage is one mistake away): nothing runs at all (RF645).
    state = box.ws / ".rf-state"
    env = box.env(RINGFENCE_HOME=str(state))
    attack = box.run(profile, "-c",
                     "rm -rf .rf-state/* 2>/dev/null; echo forged > .rf-state/ledger.db; "
                     "mkdir -p .rf-state/cache && echo x > .rf-state/cache/planted; exit 0",
                     env=env)
    assert attack.returncode == 125, attack.stderr
    assert "RF645" in attack.stderr and "Traceback" not in attack.stderr
    assert not (state / "cache" / "planted").exists()
    if (state / "ledger.db").exists():
        assert (state / "ledger.db").read_bytes().startswith(SQLITE_MAGIC.encode())
        led = Ledger(env=env)
        try:
            assert G.list_grants(led) == []
        finally:
            led.close()


@pytest.mark.parametrize("profile", SANDBOXED)
def test_the_default_state_and_config_dirs_are_hidden(box, profile):
    env = box.env()
    del env["RINGFENCE_HOME"]          # default: $XDG_STATE_HOME/ringfence
    cfg = box.home / ".config" / "ringfence"
    cfg.mkdir(parents=True)
    (cfg / "config.toml").write_text('extends = "build"\n# RF-CONFIG-MARKER\n')
    first = box.run(profile, "--", "true", env=env)
    assert first.returncode == 0, first.stderr
    state = box.home / ".local" / "state" / "ringfence"
    assert (state / "ledger.db").is_file()

    probe = box.run(profile, "-c",
                    f"ls -A {state} {cfg}; head -c 15 {state}/ledger.db; "
                    f"cat {cfg}/config.toml; exit 0", env=env)
    assert probe.returncode == 0, probe.stderr
    assert "ledger.db" not in probe.stdout and SQLITE_MAGIC not in probe.stdout
    assert "RF-CONFIG-MARKER" not in probe.stdout and "config.toml" not in probe.stdout
