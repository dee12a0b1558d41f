"""The compiled-pattern caches, so the hook never imports lark for a pattern it has seen.

Why the cache matters: importing lark costs ~45 ms and the hook runs on every
agent command. ``compiled_rules(profile)`` therefore looks in (1) an in-process
memo, (2) the table shipped for the built-in profiles (``_builtin_patterns.json``,
generated; a test keeps it up to date), (3) an on-disk cache keyed by the
profile digest, and only then imports lark. A cache file that is corrupt or
written by another grammar version is ignored and rebuilt.
"""

from __future__ import annotations

import json
import os
from typing import Iterable, Mapping

from ringfence.rfcore.errors import ProfileError

from .model import CommandRule, Profile
from .patterns import (BUILTIN_TABLE_PATH, Compiled, PatternError, Token, _unquote,
                       compile_pattern, grammar_version, render)


def cache_dir(env: Mapping[str, str] | None = None) -> str:
    from ringfence.rfcore.paths import pattern_cache_dir

    return pattern_cache_dir(env)


def _from_json(obj) -> Compiled:
    """Rebuild tokens from JSON; ValueError on anything malformed."""
    out: list[Token] = []
    if not isinstance(obj, list) or not obj:
        raise ValueError("not a token list")
    for t in obj:
        if not isinstance(t, list) or not t or t[0] not in ("lit", "any", "rest", "hole", "alt"):
            raise ValueError("bad token")
        if t[0] in ("lit", "hole") and len(t) == 2 and isinstance(t[1], str):
            out.append((t[0], t[1]))
        elif t[0] in ("any", "rest") and len(t) == 1:
            out.append((t[0],))
        elif t[0] == "alt" and len(t) == 2 and isinstance(t[1], list) \
                and all(isinstance(w, str) for w in t[1]):
            out.append(("alt", tuple(t[1])))
        else:
            raise ValueError("bad token")
    return tuple(out)


def _split_words(source: str) -> list[str] | None:
    """Blank-separated words, quotes kept; None if a quote is unterminated."""
    words, cur, quote = [], "", ""
    for ch in source:
        if quote:
            cur += ch
            if ch == quote and not (quote == '"' and cur.endswith('\\"')
                                    and not cur.endswith('\\\\"')):
                quote = ""
        elif ch in "'\"":
            cur, quote = cur + ch, ch
        elif ch in " \t":
            if cur:
                words.append(cur)
            cur = ""
        else:
            cur += ch
    if quote:
        return None
    return words + [cur] if cur else words


def consistent(source: str, compiled: Compiled) -> bool:
    """Does ``compiled`` say what ``source`` says? Checked without lark.

    The on-disk cache is outside the sandbox, but it is still a file: an entry
    that does not render back to its source is treated as corrupt (ignored and
    recompiled), so a tampered cache cannot quietly turn ``git push **`` into a
    pattern that never matches. Words we cannot check this way (quoted
    alternatives) fail the check and are simply recompiled.
    """
    words = _split_words(source)
    if words is None or len(words) != len(compiled):
        return False
    for word, tok in zip(words, compiled):
        if word[0] in "'\"" and word[-1] == word[0] and len(word) >= 2:
            if tok != ("lit", _unquote(word)):
                return False
        elif render((tok,)) != word:
            return False
    return True


def _read_table(path: str, version: str, *, verify: bool = True) -> dict[str, Compiled] | None:
    try:
        with open(path, encoding="utf-8") as fh:
            data = json.load(fh)
        if data.get("version") != version:
            return None
        table = {src: _from_json(toks) for src, toks in data["patterns"].items()}
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return None  # missing or corrupt: recompile and rewrite
    if verify:
        table = {src: toks for src, toks in table.items() if consistent(src, toks)}
    return table


def _write_table(path: str, version: str, table: Mapping[str, Compiled]) -> None:
    """Atomic write (tmp + rename): a concurrent reader sees old or new, never half."""
    import tempfile  # lazy: only a cache miss writes

    try:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=os.path.dirname(path), prefix=".tmp-", suffix=".json")
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            json.dump({"version": version, "patterns": table}, fh, sort_keys=True)
        os.replace(tmp, path)
    except OSError:
        # A read-only cache dir only costs speed (lark on every call), never
        # correctness; nothing to report to the user on the hot path.
        try:
            os.unlink(tmp)  # type: ignore[possibly-undefined]
        except (OSError, NameError):
            pass


_MEMO: dict[str, dict[str, Compiled]] = {}
_COMPILED: dict[str, Compiled] = {}
_BUILTIN: dict[str, Compiled] | None = None


def builtin_table() -> dict[str, Compiled]:
    global _BUILTIN
    if _BUILTIN is None:
        # Shipped inside the package, as trusted as the code; a test keeps it exact.
        _BUILTIN = _read_table(BUILTIN_TABLE_PATH, grammar_version(), verify=False) or {}
    return _BUILTIN


def compile_table(sources: Iterable[str], *, env: Mapping[str, str] | None = None,
                  digest: str = "") -> dict[str, Compiled]:
    """Compiled form of every source; PatternError from the first bad one.

    ``digest`` (the profile digest) keys the memo and the on-disk cache.
    """
    sources = list(dict.fromkeys(sources))
    version = grammar_version()
    key = f"{version}/{digest}"
    if digest and key in _MEMO and all(s in _MEMO[key] for s in sources):
        return _MEMO[key]
    table: dict[str, Compiled] = {}
    builtin = builtin_table()
    missing = [s for s in sources if s not in builtin]
    path = os.path.join(cache_dir(env), f"{digest}.json") if digest else None
    cached = (_read_table(path, version) or {}) if (missing and path) else {}
    dirty = False
    for src in sources:
        if src in builtin:
            table[src] = builtin[src]
        elif src in cached:
            table[src] = cached[src]
        else:
            if src not in _COMPILED:   # profiles built in code have no digest: memo anyway
                _COMPILED[src] = compile_pattern(src)
            table[src] = _COMPILED[src]
            dirty = True
    if dirty and path is not None:
        _write_table(path, version, {s: table[s] for s in missing})
    if digest:
        _MEMO[key] = table
    return table


def compiled_rules(profile: Profile, *, env: Mapping[str, str] | None = None
                   ) -> tuple[tuple[CommandRule, Compiled], ...]:
    """Each rule of ``profile`` with its compiled pattern; ProfileError if one is bad."""
    try:
        table = compile_table((r.pattern for r in profile.rules), env=env, digest=profile.digest)
    except PatternError:
        # Report it against the rule that carries it (file:line:key).
        for rule in profile.rules:
            try:
                compile_pattern(rule.pattern)
            except PatternError as exc:
                raise ProfileError(f"bad command pattern {rule.pattern!r}: {exc.message}",
                                   file=rule.where.file, line=rule.where.line,
                                   key=rule.where.key) from None
        raise  # pragma: no cover
    return tuple((r, table[r.pattern]) for r in profile.rules)


def generate_builtin_table(sources: Iterable[str]) -> str:
    """JSON text of the shipped table (see scripts in tests/profiles/test_patterns)."""
    table = {s: compile_pattern(s) for s in sorted(set(sources))}
    rows = ",\n".join(f" {json.dumps(s)}: {json.dumps(t)}" for s, t in table.items())
    return (f'{{"version": {json.dumps(grammar_version())}, "patterns": {{\n'
            f"{rows}\n}}}}\n")


def builtin_sources() -> list[str]:
    """Every pattern used by a built-in profile (the shipped table's keys)."""
    from .chain import BUILTIN_DIR, build, resolve_chain

    out: list[str] = []
    for path in sorted(BUILTIN_DIR.glob("*.toml")):
        profile, _ = build(resolve_chain(path.stem))
        out.extend(r.pattern for r in profile.rules)
    return out


if __name__ == "__main__":  # regenerate: python -m ringfence.profiles.pattern_cache
    with open(BUILTIN_TABLE_PATH, "w", encoding="utf-8") as fh:
        fh.write(generate_builtin_table(builtin_sources()))
    print(f"wrote {BUILTIN_TABLE_PATH}")
