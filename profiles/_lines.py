"""Find the line of each key (and each array element) in TOML source.

tomllib reports no positions for valid documents, but every schema error must
say ``file:line``. This scanner only has to be good enough for messages: it
understands ``[table]`` / ``[[table]]`` headers, ``key = value`` lines with
bare, quoted and dotted keys, arrays (one or many lines, nested, comments) and
inline tables. Key paths are dotted, array elements are ``path[i]`` (0-based),
matching the ``key`` of errors and of :class:`ringfence.profiles.model.Located`.
"""

from __future__ import annotations

import bisect
import re

_KEYPART = r'(?:[A-Za-z0-9_-]+|"(?:[^"\\]|\\.)*"|\'[^\']*\')'
_KEY = rf"{_KEYPART}(?:\s*\.\s*{_KEYPART})*"
_HEADER = re.compile(rf"\[\[?\s*({_KEY})\s*\]\]?")
_ASSIGN = re.compile(rf"({_KEY})\s*=\s*")
_PART = re.compile(_KEYPART)


def _keypath(text: str) -> str:
    parts = []
    for m in _PART.finditer(text):
        p = m.group(0)
        parts.append(p[1:-1] if p[0] in "\"'" else p)
    return ".".join(parts)


def _skip_string(text: str, j: int) -> int:
    """Index just past the string literal starting at ``j``."""
    q = text[j]
    if text.startswith(q * 3, j):
        end = text.find(q * 3, j + 3)
        return len(text) if end < 0 else end + 3
    k = j + 1
    while k < len(text) and text[k] != q and text[k] != "\n":
        if q == '"' and text[k] == "\\":
            k += 1
        k += 1
    return k + 1


def _skip_ws(text: str, j: int) -> int:
    while j < len(text):
        c = text[j]
        if c in " \t\r\n":
            j += 1
        elif c == "#":
            nl = text.find("\n", j)
            j = len(text) if nl < 0 else nl + 1
        else:
            break
    return j


def _skip_value(text: str, j: int, key: str, out: dict[str, int], line_of) -> int:
    c = text[j] if j < len(text) else ""
    if c in "\"'":
        return _skip_string(text, j)
    if c == "[":
        return _scan_array(text, j, key, out, line_of)
    if c == "{":
        return _scan_inline_table(text, j, key, out, line_of)
    while j < len(text) and text[j] not in ",]}\n#":
        j += 1
    return j


def _scan_array(text: str, j: int, key: str, out: dict[str, int], line_of) -> int:
    j += 1
    idx = 0
    while True:
        j = _skip_ws(text, j)
        if j >= len(text) or text[j] == "]":
            return j + 1
        if text[j] == ",":
            j += 1
            continue
        out.setdefault(f"{key}[{idx}]", line_of(j))
        j = _skip_value(text, j, f"{key}[{idx}]", out, line_of)
        idx += 1


def _scan_inline_table(text: str, j: int, key: str, out: dict[str, int], line_of) -> int:
    j += 1
    while True:
        j = _skip_ws(text, j)
        if j >= len(text) or text[j] == "}":
            return j + 1
        if text[j] == ",":
            j += 1
            continue
        m = _ASSIGN.match(text, j)
        if not m:  # not valid TOML; tomllib reports it
            return j + 1
        sub = f"{key}.{_keypath(m.group(1))}"
        out.setdefault(sub, line_of(j))
        j = _skip_value(text, m.end(), sub, out, line_of)


def scan(text: str) -> dict[str, int]:
    """Map key paths to 1-based line numbers (first occurrence wins)."""
    starts = [0] + [m.end() for m in re.finditer("\n", text)]

    def line_of(pos: int) -> int:
        return bisect.bisect_right(starts, pos)

    out: dict[str, int] = {}
    prefix = ""
    j = 0
    while j < len(text):
        j = _skip_ws(text, j)
        if j >= len(text):
            break
        if text[j] == "[":
            m = _HEADER.match(text, j)
            if m:
                prefix = _keypath(m.group(1))
                out.setdefault(prefix, line_of(j))
                j = m.end()
                continue
        m = _ASSIGN.match(text, j)
        if m:
            key = f"{prefix}.{_keypath(m.group(1))}" if prefix else _keypath(m.group(1))
            parts = key.split(".")
            for n in range(1, len(parts) + 1):   # a.b.c = 1 also defines a and a.b here
                out.setdefault(".".join(parts[:n]), line_of(j))
            j = _skip_value(text, m.end(), key, out, line_of)
            continue
        nl = text.find("\n", j)  # garbage line: tomllib will complain
        j = len(text) if nl < 0 else nl + 1
    return out
