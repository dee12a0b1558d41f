"""Quote removal on source text, as bash does it (no tree-sitter here).

Kept apart from ``parse.py`` so the rules for what a backslash or a quote
means are small, pure and testable on their own.
"""

from __future__ import annotations


from ringfence.rfcore.lazyre import lazy

# An unquoted brace expansion: {a,b} or {1..3}. `{}` (find -exec) and `{x}`
# stay literal in bash, so they are not expansions.
BRACE_EXPANSION = lazy(r"\{[^{}\s]*(?:,|\.\.)[^{}\s]*\}")
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


def ansi_c_end(token: str) -> int | None:
    r"""Where bash closes the ``$'...'`` string that starts ``token``.

    Returns the index just after the closing quote, or None if the string does
    not close inside ``token``. A backslash escapes the next character, so in
    `$'\\'` the `\\` is one escape and the quote after it closes the string.
    tree-sitter-bash's token takes the longest match instead and reads `\\'` as
    a backslash then an escaped quote, so its token can run past bash's end
    (`x$'\\'\'` is `x\'` to bash): callers compare the two ends.
    """
    i, n = 2, len(token)
    while i < n:
        c = token[i]
        if c == "\\":
            i += 2
        elif c == "'":
            return i + 1
        else:
            i += 1
    return None


# After a mis-read `$'...'`, the rest of tree-sitter's token is re-read as plain
# unquoted text only if none of these is live in it (quotes, expansions,
# blanks, operators, globs): otherwise bash's reading of it is out of reach.
_UNSAFE_TAIL = frozenset(" \t\n'\"$`;&|<>()*?[]{}#")


def plain_tail(text: str) -> str | None:
    """Quote removal of ``text`` if it is plain (escapes only), else None.

    A lone backslash at the end would escape whatever follows the text in the
    source, so it is not plain either."""
    i, n = 0, len(text)
    while i < n:
        if text[i] == "\\":
            if i + 1 >= n:
                return None
            i += 2
        elif text[i] in _UNSAFE_TAIL:
            return None
        else:
            i += 1
    return unquote_plain(text)[0]


def unterminated_quote(text: str) -> bool:
    """Does bash's quote scanning of ``text`` end inside a quote?

    A rough lexer (backslash, '...', "...", $'...'): used only to choose the
    code of a fail-closed finding (RF001 rather than RF005), never to accept.
    """
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c == "\\":
            i += 2
        elif c == "$" and text.startswith("$'", i):
            end = ansi_c_end(text[i:])
            if end is None:
                return True
            i += end
        elif c == "'":
            j = text.find("'", i + 1)
            if j < 0:
                return True
            i = j + 1
        elif c == '"':
            j = i + 1
            while j < n and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            if j >= n:
                return True
            i = j + 1
        else:
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
