"""Text an agent wrote, made safe to show: every control character replaced by one
visible character (a newline or an escape sequence could draw a line that is not
there). Stdlib only: the hook uses it on every deferred call (``views.render``
re-exports it for the CLI)."""

from __future__ import annotations

# Bidi controls that can reorder what the reviewer sees ("Trojan Source").
_BIDI = {0x061C, 0x200E, 0x200F, *range(0x202A, 0x202F), *range(0x2066, 0x206A)}


def _visible_char(ch: str) -> str:
    o = ord(ch)
    if o < 0x20:
        return chr(0x2400 + o)          # U+2400 control pictures: ␀ ␉ ␍ ␛ ...
    if o == 0x7F:
        return "\u2421"                 # ␡
    if 0x80 <= o < 0xA0 or o in _BIDI or 0xD800 <= o < 0xE000:
        return "\ufffd"                 # C1 controls, bidi overrides, lone surrogates
    return ch


def visible(text: str, *, keep_newlines: bool = False) -> str:
    """``text`` with every control character replaced by one visible character."""
    if text.isprintable():
        return text
    return "".join("\n" if keep_newlines and c == "\n" else _visible_char(c) for c in text)
