"""bashlex -> the differential comparison form (TEST-ONLY: bashlex is GPL-3.0-or-later
and is never imported outside tests/).

The comparison form is shared with our own IR: the simple commands of a
string, each as the tuple of its words after quote removal, plus the
character span it came from. Words that bash expands at run time (parameters,
command or process substitutions) become ``DYN``: neither side can know their
value. Assignments and redirections are not words. Declarations (export,
local, ...) and ``[[ ]]`` are left out on both sides: bashlex has no grammar
for ``[[`` and our IR keeps declarations as their own kind.
"""

from __future__ import annotations

from dataclasses import dataclass

DYN = "\0DYN"
LEFT_OUT = frozenset({"export", "declare", "local", "readonly", "typeset", "unset", "[["})
_DYNAMIC_PARTS = frozenset({"parameter", "commandsubstitution", "processsubstitution"})


class BashlexFailed(Exception):
    """bashlex could not parse the command (a known bashlex limitation)."""


@dataclass(frozen=True)
class SimpleCommand:
    words: tuple[str, ...]           # after quote removal; DYN for run-time expansions
    span: tuple[int, int]
    raws: tuple[str, ...] = ()       # source text of each word (our side only)
    literal: tuple[bool, ...] = ()   # our side: word is literal text to bash
    word_spans: tuple[tuple[int, int], ...] = ()   # our side: span of each word


def _children(node) -> list:
    out = []
    for value in vars(node).values():
        if isinstance(value, list):
            out.extend(v for v in value if hasattr(v, "kind"))
        elif hasattr(value, "kind"):
            out.append(value)
    return out


def _word(node) -> str:
    todo = list(getattr(node, "parts", []))
    while todo:
        part = todo.pop()
        if part.kind in _DYNAMIC_PARTS:
            return DYN
    return node.word


def bashlex_commands(command: str) -> list[SimpleCommand]:
    import bashlex

    try:
        trees = bashlex.parse(command)
    except Exception as exc:                # bashlex raises many types on valid bash
        raise BashlexFailed(type(exc).__name__) from None
    out: list[SimpleCommand] = []
    todo = list(trees)
    seen: set[int] = set()
    while todo:
        node = todo.pop()
        if id(node) in seen:          # a function node lists its body twice
            continue
        seen.add(id(node))
        if node.kind == "command":
            words = tuple(_word(p) for p in node.parts if p.kind == "word")
            if words and words[0] not in LEFT_OUT:
                out.append(SimpleCommand(words, tuple(node.pos)))
        todo.extend(_children(node))
    return out


def ours_commands(command: str) -> list[SimpleCommand]:
    """Our IR in the same form (None of this imports bashlex)."""
    from ringfence.classifier.parse import parse

    script = parse(command)
    out = []
    for cmd in script.commands:
        if cmd.kind not in ("simple", "test") or not cmd.words:
            continue
        words = tuple(DYN if w.dynamic else w.value for w in cmd.words)
        if words[0] not in LEFT_OUT:
            out.append(SimpleCommand(words, cmd.span, tuple(w.raw for w in cmd.words),
                                     tuple(not w.dynamic for w in cmd.words),
                                     tuple(w.span for w in cmd.words)))
    return out


def ours_literal_spans(command: str) -> list[tuple[int, int]]:
    """Spans bash treats as literal text or runs no program for: static
    assignment values and `(( ))` arithmetic commands."""
    from ringfence.classifier.parse import parse

    script = parse(command)
    spans = [a.value.span for c in script.commands for a in c.assignments
             if a.value is not None and not a.value.dynamic]
    return spans + [c.span for c in script.commands if c.kind == "arith"]


def live_expansion(raw: str) -> bool:
    """Does this word's source text hold an expansion bash performs?

    A small independent scanner (quotes, escapes, `$` followed by something
    that can start an expansion, backticks outside single quotes). It decides
    which side is right when bashlex and our IR disagree on DYN.
    """
    i, n = 0, len(raw)
    quote = ""
    while i < n:
        c = raw[i]
        if quote == "'":
            if c == "'":
                quote = ""
        elif c == "\\":
            i += 1
        elif c == "'" and not quote:
            if i > 0 and raw[i - 1] == "$":      # $'...' ANSI-C: literal text
                pass
            quote = "'"
        elif c == '"':
            quote = "" if quote == '"' else '"'
        elif c == "`":
            return True
        elif c == "$" and i + 1 < n and (raw[i + 1].isalnum() or raw[i + 1] in "_{(@*#?$!-"):
            return True
        i += 1
    return False
