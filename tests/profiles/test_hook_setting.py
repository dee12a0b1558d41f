"""`[hook] grant`: what a yes in Claude Code grants (issue 13)."""

from __future__ import annotations

import pytest

from ringfence.profiles.lint import lint
from ringfence.profiles.load import load_profile


@pytest.mark.parametrize("name,grant", [("build", "session"), ("host-assisted", "session"),
                                        ("observe", "once"), ("strict", "once")])
def test_builtin_defaults(name, grant):
    assert load_profile(name).hook_grant == grant


def test_lint_points_at_a_bad_value_and_a_misspelt_key(tmp_path):
    bad = tmp_path / "p.toml"
    bad.write_text('extends = "build"\n\n[hook]\ngrant = "always"\n')
    [d] = lint(str(bad))
    assert (d.code, d.line) == ("RF502", 4) and '"session" | "once"' in d.message
    typo = tmp_path / "q.toml"
    typo.write_text('extends = "build"\n[hook]\ngrnt = "once"\n')
    [d] = lint(str(typo))
    assert d.code == "RF501" and 'did you mean "grant"' in d.message


def test_an_overlay_cannot_turn_once_into_session(tmp_path):
    from ringfence.profiles.load import resolve_active

    cfg = tmp_path / "cfg" / "ringfence"
    cfg.mkdir(parents=True)
    (cfg / "config.toml").write_text('extends = "observe"\n')
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / ".ringfence.toml").write_text('[hook]\ngrant = "session"\n')
    from ringfence.rfcore.errors import RingfenceError

    with pytest.raises(RingfenceError, match="hook.grant"):
        resolve_active(None, env={"XDG_CONFIG_HOME": str(tmp_path / "cfg")}, workspace=str(ws))
