"""The built-in profiles' parsed TOML, shipped as JSON (``_builtin_toml.json``).

Why: ``ringfence hook`` and ``ringfence run`` load a built-in profile on every
agent command; importing ``tomllib`` and parsing the files was several
milliseconds of each start-up. JSON is parsed by the C scanner already loaded.

Safety: an entry is used only if the sha256 of the file's *current* text matches
the digest stored beside it, so an edited built-in is parsed from its TOML as
before (same data, same errors); the cache can make loading faster, never
different. tests/profiles/test_toml_cache.py fails if the shipped file is stale.

Regenerate after editing a built-in:  .venv/bin/python -m ringfence.profiles._toml_cache
"""

from __future__ import annotations

from ringfence.rfcore.hashing import sha256
import json
from pathlib import Path

_HERE = Path(__file__).resolve().parent
CACHE_PATH = _HERE / "_builtin_toml.json"
_raw: bytes | None = None


def text_digest(text: str) -> str:
    return sha256(text.encode("utf-8")).hexdigest()


def cached(name: str, text: str) -> dict | None:
    """The parsed data of built-in file ``name`` if the cache holds ``text``'s digest."""
    global _raw
    if _raw is None:
        try:
            _raw = CACHE_PATH.read_bytes()
        except OSError:
            _raw = b"{}"
    try:
        # A fresh object tree per call: callers may keep or merge it.
        entry = json.loads(_raw).get(name)
    except ValueError:
        return None
    if not isinstance(entry, dict) or entry.get("sha256") != text_digest(text):
        return None
    data = entry.get("data")
    return data if isinstance(data, dict) else None


def build_table() -> dict:
    import tomllib

    table = {}
    for path in sorted(_HERE.glob("*.toml")):
        text = path.read_text(encoding="utf-8")
        table[path.name] = {"sha256": text_digest(text), "data": tomllib.loads(text)}
    return table


def render(table: dict) -> str:
    return json.dumps(table, indent=1, sort_keys=True, ensure_ascii=False) + "\n"


if __name__ == "__main__":
    CACHE_PATH.write_text(render(build_table()), encoding="utf-8")
    print(f"wrote {CACHE_PATH}")
