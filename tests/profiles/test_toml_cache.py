"""The shipped parse of the built-in profiles is current, and only ever a shortcut."""

from __future__ import annotations

import subprocess
import sys
import tomllib

from ringfence.profiles import _toml_cache, load


def test_shipped_cache_is_current():
    # Stale? Regenerate with: .venv/bin/python -m ringfence.profiles._toml_cache
    assert _toml_cache.CACHE_PATH.read_text(encoding="utf-8") == \
        _toml_cache.render(_toml_cache.build_table())


def test_cache_hit_equals_tomllib_for_every_builtin():
    for path in sorted(load.BUILTIN_DIR.glob("*.toml")):
        text = path.read_text(encoding="utf-8")
        assert _toml_cache.cached(path.name, text) == tomllib.loads(text), path.name


def test_edited_text_misses_the_cache():
    text = (load.BUILTIN_DIR / "strict.toml").read_text(encoding="utf-8")
    assert _toml_cache.cached("strict.toml", text + "\n# edited\n") is None
    assert _toml_cache.cached("strict.toml", text.replace("deny", "allow")) is None
    assert _toml_cache.cached("no-such.toml", text) is None


def test_builtin_load_does_not_import_tomllib():
    code = ("import sys; from profiles.load import load_profile; "
            "p = load_profile('build', workspace=None); "
            "print(p.name, 'tomllib' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout
    assert out.split() == ["build", "False"]


def test_user_file_still_gets_exact_toml_errors(tmp_path):
    bad = tmp_path / "p.toml"
    bad.write_text('extends = "strict"\n[network\n', encoding="utf-8")
    import pytest

    from ringfence.rfcore.errors import ProfileError

    with pytest.raises(ProfileError) as info:
        load.load_profile(str(bad))
    assert str(info.value) == (f"{bad}:2: invalid TOML: Expected ']' at the end of a "
                               "table declaration, column 9")
