"""Command-rule patterns: compile (lark, LALR) once, match (pure Python) always.

The grammar is ``patterns.lark``. A compiled pattern is a tiny plain-data tuple
of tokens, so it can be cached as JSON and matched without lark:

  ("lit", "git")                 one word, exactly
  ("any",)                       ``*``: exactly one word
  ("rest",)                      ``**``: zero or more words (last token only)
  ("hole", "ticker")             ``<ticker>``: one word, bound by name for reasons
  ("alt", ("test", "build"))     ``{test,build}``: one word out of a set

Compiling needs lark (~45 ms to import), so the hook never compiles a pattern it
has seen: ``pattern_cache.compiled_rules(profile)`` keeps the compiled forms.
"""

from __future__ import annotations

from ringfence.rfcore.hashing import sha256
import os
import posixpath
from typing import Sequence

Token = tuple
Compiled = tuple[Token, ...]

_HERE = os.path.dirname(os.path.realpath(__file__))
GRAMMAR_PATH = os.path.join(_HERE, "patterns.lark")          # str paths: no pathlib on
BUILTIN_TABLE_PATH = os.path.join(_HERE, "_builtin_patterns.json")   # the hook path
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
        with open(GRAMMAR_PATH, "rb") as fh:
            digest = sha256(fh.read()).hexdigest()[:16]
        _VERSION = f"{FORMAT_VERSION}:{digest}"
    return _VERSION


# --------------------------------------------------------------------------- compile

_PARSER = None


def _parser():
    global _PARSER
    if _PARSER is None:
        import lark  # deliberately lazy: only on a cache miss

        with open(GRAMMAR_PATH, encoding="utf-8") as fh:
            grammar = fh.read()
        _PARSER = lark.Lark(grammar, parser="lalr",
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
