"""Command-rule patterns: compile (lark, LALR) once, match (pure Python) always.

The grammar is ``patterns.lark``. A compiled pattern is a tiny plain-data tuple
of tokens, so it can be cached as JSON and matched without lark:

  ("lit", "git")                 one word, exactly
  ("any",)                       ``*``: exactly one word
  ("rest",)                      ``**``: zero or more words (last token only)
  ("hole", "ticker")             ``<ticker>``: one word, bound by name for reasons
  ("alt", ("test", "build"))     ``{test,build}``: one word out of a set

Why the cache matters: importing lark costs ~45 ms and the hook runs on every
agent command. ``compiled_rules(profile)`` therefore looks in (1) an in-process
memo, (2) the table shipped for the built-in profiles (``_builtin_patterns.json``,
generated; a test keeps it up to date), (3) an on-disk cache keyed by the
profile digest, and only then imports lark. A cache file that is corrupt or
written by another grammar version is ignored and rebuilt.
"""

from __future__ import annotations

from ringfence.rfcore.hashing import sha256
import json
import os
import posixpath
from pathlib import Path
from typing import Iterable, Mapping, Sequence

from ringfence.rfcore.errors import ProfileError

from .model import CommandRule, Profile

Token = tuple
Compiled = tuple[Token, ...]

_HERE = Path(__file__).resolve().parent
GRAMMAR_PATH = _HERE / "patterns.lark"
BUILTIN_TABLE_PATH = _HERE / "_builtin_patterns.json"
# Bump when the compiled form changes meaning; part of every cache key.
FORMAT_VERSION = 1

# A capability's argv[0] never contains these (the classifier fails closed on a
# command name with any of them), so a program word containing one never matches.
UNMATCHABLE_PROGRAM_CHARS = frozenset("$`{}*?[")


class PatternError(ValueError):
    """A pattern that does not parse. ``column`` is 1-based, into the pattern."""

    def __init__(self, message: str, column: int | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.column = column


_VERSION: str | None = None


def grammar_version() -> str:
    """Identifies grammar + compiled format; stale caches are ignored."""
    global _VERSION
    if _VERSION is None:
        digest = sha256(GRAMMAR_PATH.read_bytes()).hexdigest()[:16]
        _VERSION = f"{FORMAT_VERSION}:{digest}"
    return _VERSION


# --------------------------------------------------------------------------- compile

_PARSER = None


def _parser():
    global _PARSER
    if _PARSER is None:
        import lark  # deliberately lazy: only on a cache miss

        _PARSER = lark.Lark(GRAMMAR_PATH.read_text(encoding="utf-8"), parser="lalr",
                            maybe_placeholders=False)
    return _PARSER


def _unquote(text: str) -> str:
    if text[0] == "'":
        return text[1:-1]
    body, out, i = text[1:-1], [], 0
    while i < len(body):
        if body[i] == "\\" and i + 1 < len(body):
            i += 1
        out.append(body[i])
        i += 1
    return "".join(out)


def compile_pattern(source: str) -> Compiled:
    """Parse one pattern into its compiled token tuple; PatternError on bad syntax."""
    stripped = source.strip()
    if not stripped:
        raise PatternError("empty pattern: write at least the program word", 1)
    lead = len(source) - len(source.lstrip())
    import lark

    try:
        tree = _parser().parse(stripped)
    except lark.exceptions.UnexpectedInput as exc:
        col = (getattr(exc, "column", None) or 1) + lead
        tok = getattr(exc, "token", None)
        if tok is not None and tok.type == "$END":
            what = "unexpected end of pattern"
        elif tok is not None:
            what = f"unexpected {str(tok)!r}"
        else:
            ch = getattr(exc, "char", "?")
            what = f"unexpected character {ch!r}"
        raise PatternError(f"{what} at column {col}{_syntax_hint(stripped, col - lead)}",
                           col) from None

    tokens: list[Token] = []
    for i, node in enumerate(tree.children):
        kind = node.data
        if kind == "literal":
            tokens.append(("lit", str(node.children[0])))
        elif kind == "quoted":
            tokens.append(("lit", _unquote(str(node.children[0]))))
        elif kind == "any":
            tokens.append(("any",))
        elif kind == "rest":
            if i != len(tree.children) - 1:
                tok = node.children[0]
                raise PatternError(f"'**' must be the last word (column {tok.column + lead}): "
                                   "it stands for all remaining words", tok.column + lead)
            tokens.append(("rest",))
        elif kind == "hole":
            tokens.append(("hole", str(node.children[0])[1:-1]))
        elif kind == "alts":
            words = tuple(str(c.children[0]) if c.data == "literal"
                          else _unquote(str(c.children[0])) for c in node.children[1:])
            tokens.append(("alt", words))
        else:  # pragma: no cover - grammar and compiler out of sync is a bug
            raise AssertionError(f"unknown pattern node {kind}")
    return tuple(tokens)


def _syntax_hint(text: str, col: int) -> str:
    ch = text[col - 1] if 0 < col <= len(text) else ""
    if ch == "*":
        return ": '*' and '**' must be whole words (a glob inside a word is not supported)"
    if ch in "<>":
        return ": a named hole is written <name> (letters, digits, '_' or '-')"
    if ch in "{}" or (ch in " \t" and "{" in text[:col]):
        return ": alternatives are written {a,b} without blanks"
    if ch == ",":
        return ": a ',' separates alternatives inside {a,b}; quote a word that contains one"
    if ch in "'\"":
        return ": unterminated quote"
    return ""


# --------------------------------------------------------------------------- match

def _word_ok(tok: Token, word: str) -> bool:
    kind = tok[0]
    if kind == "lit":
        return word == tok[1]
    if kind == "alt":
        return word in tok[1]
    return True  # any, hole


def _program_ok(tok: Token, argv0: str, by_basename: bool) -> bool:
    if _word_ok(tok, argv0):
        return True
    # deny/ask rules also see through a path: `/usr/bin/git push` must not dodge
    # an ask on `git push`. Allow rules never do (a grant for `sed` never covers
    # `./sed`, SPEC §2).
    if by_basename and "/" in argv0 and tok[0] in ("lit", "alt"):
        return _word_ok(tok, posixpath.basename(argv0))
    return False


def match(compiled: Compiled, argv: Sequence[str], *,
          by_basename: bool = False) -> dict[str, str] | None:
    """Match ``argv`` word by word; return the bound holes, or None."""
    if not compiled or not argv:
        return None
    holes: dict[str, str] = {}
    for i, tok in enumerate(compiled):
        if tok[0] == "rest":
            return holes
        if i >= len(argv):
            return None
        ok = _program_ok(tok, argv[0], by_basename) if i == 0 else _word_ok(tok, argv[i])
        if not ok:
            return None
        if tok[0] == "hole":
            holes[tok[1]] = argv[i]
    return holes if len(argv) == len(compiled) else None


def argv_views(key: str, argv: Sequence[str], *, aliases: bool = False
               ) -> tuple[tuple[str, ...], ...]:
    """The argv as written, plus (for multiplexers) with global options removed.

    The classifier keys ``git -C dir push`` as ``git push``; a rule written
    ``git push **`` must match it too, or global options become a way around
    an ask/deny rule. With ``aliases`` (deny and ask rules), also each view
    respelled as its canonical action (``rfcore.actions``): ``git send-pack``
    is a push, ``helm un`` an uninstall.
    """
    argv = tuple(argv)
    views = [argv]
    prog, _, sub = key.partition(" ")
    if sub and argv:
        sub_words = tuple(sub.split(" "))
        n = len(sub_words)
        for i in range(1, len(argv) - n + 1):
            if argv[i:i + n] == sub_words:
                norm = (argv[0],) + sub_words + argv[i + n:]
                if norm != argv:
                    views.append(norm)
                break
    if aliases:
        from ringfence.rfcore.actions import canonical_views

        views += [c for v in tuple(views) for c in canonical_views(v)]
    return tuple(views)


def render(compiled: Compiled) -> str:
    """Canonical source text of a compiled pattern (for messages)."""
    def word(w: str) -> str:
        return w if w and not any(c in w for c in " \t*<>{},'\"") else repr(w)

    out = []
    for tok in compiled:
        if tok[0] == "lit":
            out.append(word(tok[1]))
        elif tok[0] == "any":
            out.append("*")
        elif tok[0] == "rest":
            out.append("**")
        elif tok[0] == "hole":
            out.append(f"<{tok[1]}>")
        else:
            out.append("{" + ",".join(word(w) for w in tok[1]) + "}")
    return " ".join(out)


# --------------------------------------------------------------------------- cache

def cache_dir(env: Mapping[str, str] | None = None) -> Path:
    from ringfence.rfcore.paths import pattern_cache_dir

    return Path(pattern_cache_dir(env))


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


def _read_table(path: Path, version: str, *, verify: bool = True) -> dict[str, Compiled] | None:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        if data.get("version") != version:
            return None
        table = {src: _from_json(toks) for src, toks in data["patterns"].items()}
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return None  # missing or corrupt: recompile and rewrite
    if verify:
        table = {src: toks for src, toks in table.items() if consistent(src, toks)}
    return table


def _write_table(path: Path, version: str, table: Mapping[str, Compiled]) -> None:
    """Atomic write (tmp + rename): a concurrent reader sees old or new, never half."""
    import tempfile  # lazy: only a cache miss writes

    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-", suffix=".json")
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
    path = cache_dir(env) / f"{digest}.json" if digest else None
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


if __name__ == "__main__":  # regenerate: python -m ringfence.profiles.patterns
    BUILTIN_TABLE_PATH.write_text(generate_builtin_table(builtin_sources()), encoding="utf-8")
    print(f"wrote {BUILTIN_TABLE_PATH}")
