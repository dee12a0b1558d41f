"""The built-in profiles' parsed TOML, shipped as JSON (``_builtin_toml.json``).

Why: ``ringfence hook`` and ``ringfence run`` load a built-in profile on every
agent command; importing ``tomllib`` and parsing the files was several
milliseconds of each start-up. JSON is parsed by the C scanner already loaded.

Safety: an entry is used only if the sha256 of the file's *current* text matches
the digest stored beside it, so an edited built-in is parsed from its TOML as
before (same data, same errors); the cache can make loading faster, never
different. Each entry also holds the file's line map and whether it passed the
schema and the domain-pattern checks, so loading a built-in neither scans its
text nor imports the schema table. tests/profiles/test_toml_cache.py fails if
the shipped file is stale (a changed built-in, scanner, schema or domain rule).

Regenerate after editing a built-in:  .venv/bin/python -m ringfence.profiles._toml_cache
"""

from __future__ import annotations

from ringfence.rfcore.hashing import sha256
import json
import os

_HERE = os.path.dirname(os.path.realpath(__file__))
_CACHE = os.path.join(_HERE, "_builtin_toml.json")
_raw: bytes | None = None


def text_digest(text: str) -> str:
    return sha256(text.encode("utf-8")).hexdigest()


def cached(name: str, text: str) -> dict | None:
    """The parsed data of built-in file ``name`` if the cache holds ``text``'s digest."""
    entry = cached_entry(name, text)
    return entry[0] if entry is not None else None


def cached_entry(name: str, text: str) -> tuple[dict, dict[str, int], bool] | None:
    """(data, line of each key, schema-valid?) of built-in file ``name`` if the cache
    holds ``text``'s digest, else None. The line map is ``_lines.scan(text)`` and
    the flag says ``schema.validate(data)`` found nothing, both computed when the
    cache was written (test_toml_cache fails if either is stale), so loading a
    built-in neither scans its text nor imports the schema table."""
    global _raw
    if _raw is None:
        try:
            with open(_CACHE, "rb") as f:
                _raw = f.read()
        except OSError:
            _raw = b"{}"
    try:
        # A fresh object tree per call: callers may keep or merge it.
        entry = json.loads(_raw).get(name)
    except ValueError:
        return None
    if not isinstance(entry, dict) or entry.get("sha256") != text_digest(text):
        return None
    data, lines = entry.get("data"), entry.get("lines")
    if not isinstance(data, dict) or not isinstance(lines, dict):
        return None
    return data, lines, entry.get("valid") is True


def build_table() -> dict:
    import tomllib

    from . import _lines, schema
    from .domains import parse_pattern

    def valid(data: dict) -> bool:
        if schema.validate(data):
            return False
        net = data.get("network", {})
        try:
            for pat in (*net.get("allow", ()), *net.get("deny", ())):
                parse_pattern(pat)
        except ValueError:
            return False
        return True

    table = {}
    from pathlib import Path

    for path in sorted(Path(_HERE).glob("*.toml")):
        text = path.read_text(encoding="utf-8")
        data = tomllib.loads(text)
        table[path.name] = {"sha256": text_digest(text), "data": data,
                            "lines": _lines.scan(text), "valid": valid(data)}
    return table


def render(table: dict) -> str:
    return json.dumps(table, indent=1, sort_keys=True, ensure_ascii=False) + "\n"


def __getattr__(name: str):
    if name == "CACHE_PATH":   # a Path, for tests and the regenerating command
        from pathlib import Path

        return Path(_CACHE)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


if __name__ == "__main__":
    with open(_CACHE, "w", encoding="utf-8") as out:
        out.write(render(build_table()))
    print(f"wrote {_CACHE}")
