"""Quote removal on source text, as bash does it (no tree-sitter here).

Kept apart from ``parse.py`` so the rules for what a backslash or a quote
means are small, pure and testable on their own.
"""

from __future__ import annotations

import re

# An unquoted brace expansion: {a,b} or {1..3}. `{}` (find -exec) and `{x}`
# stay literal in bash, so they are not expansions.
BRACE_EXPANSION = re.compile(r"\{[^{}\s]*(?:,|\.\.)[^{}\s]*\}")
GLOB_CHARS = frozenset("*?[")


def unquote_plain(text: str) -> tuple[str, bool, str]:
    """Quote removal of an unquoted word fragment.

    Returns ``(value, escaped, glob_mask)``: ``escaped`` says a backslash was
    removed; ``glob_mask`` is the fragment with every *escaped* character
    replaced by NUL, so callers can look for live glob/brace characters.
    """
    if "\\" not in text:
        return text, False, text
    out: list[str] = []
    mask: list[str] = []
    i, n = 0, len(text)
    while i < n:
        ch = text[i]
        if ch == "\\" and i + 1 < n:
            nxt = text[i + 1]
            if nxt != "\n":          # backslash-newline is a line continuation
                out.append(nxt)
                mask.append("\0")
            i += 2
            continue
        out.append(ch)
        mask.append(ch)
        i += 1
    return "".join(out), True, "".join(mask)


_DQ_ESCAPABLE = frozenset('$`"\\\n')


def unquote_double(inner: str) -> str:
    """Quote removal inside "...": backslash only escapes $ ` " \\ and newline."""
    if "\\" not in inner:
        return inner
    out: list[str] = []
    i, n = 0, len(inner)
    while i < n:
        ch = inner[i]
        if ch == "\\" and i + 1 < n and inner[i + 1] in _DQ_ESCAPABLE:
            if inner[i + 1] != "\n":
                out.append(inner[i + 1])
            i += 2
            continue
        out.append(ch)
        i += 1
    return "".join(out)


def live_substitution_in_double(inner: str) -> bool:
    """Does the text inside "..." hold an unescaped `$(` or backtick?

    A cross-check of tree-sitter: if this says yes and the tree has no
    substitution node, the parse is not trusted.
    """
    i, n = 0, len(inner)
    while i < n:
        ch = inner[i]
        if ch == "\\":
            i += 2
            continue
        if ch == "`" or (ch == "$" and i + 1 < n and inner[i + 1] == "("):
            return True
        i += 1
    return False


_SIMPLE_ESC = {"a": "\a", "b": "\b", "e": "\x1b", "E": "\x1b", "f": "\f", "n": "\n",
               "r": "\r", "t": "\t", "v": "\v", "\\": "\\", "'": "'", '"': '"', "?": "?"}
_HEX = frozenset("0123456789abcdefABCDEF")


def decode_ansi_c(inner: str) -> str:
    """Decode the body of $'...' the way bash does."""
    if "\\" not in inner:
        return inner
    out: list[str] = []
    i, n = 0, len(inner)
    while i < n:
        ch = inner[i]
        if ch != "\\" or i + 1 >= n:
            out.append(ch)
            i += 1
            continue
        e = inner[i + 1]
        i += 2
        if e in _SIMPLE_ESC:
            out.append(_SIMPLE_ESC[e])
        elif e in "01234567":
            j = i - 1
            while i < n and i - j < 3 and inner[i] in "01234567":
                i += 1
            out.append(chr(int(inner[j:i], 8) & 0xFF))
        elif e in "xuU":
            limit = {"x": 2, "u": 4, "U": 8}[e]
            j = i
            while i < n and i - j < limit and inner[i] in _HEX:
                i += 1
            if i == j:
                out.append("\\" + e)
            else:
                code = int(inner[j:i], 16)
                out.append(chr(code) if code <= 0x10FFFF else "\ufffd")
        elif e == "c" and i < n:
            out.append(chr(ord(inner[i]) & 0x1F))
            i += 1
        else:
            out.append("\\" + e)
    # bash builds a C string: a NUL escape ($'a\0b') ends the word there
    return "".join(out).split("\0", 1)[0]
