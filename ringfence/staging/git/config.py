"""A small reader of git's config syntax, for judging what a sandbox wrote.

It follows git-config(1) "CONFIGURATION FILE": ``[section]``,
``[section "subsection"]`` (subsection case-sensitive, ``\\"`` and ``\\\\``
escapes), the legacy ``[section.subsection]`` (lower-cased), ``name = value``
and a bare ``name`` (boolean true), double quotes, the escapes ``\\n \\t \\b
\\" \\\\``, a backslash-newline continuation, and ``#``/``;`` comments outside
quotes. Section and variable names are case-insensitive.

Anything it does not understand raises :class:`ConfigSyntaxError`: the judge
then holds the change for a person (fail closed), since git may read it in a way
we did not.
"""

from __future__ import annotations


from ringfence.rfcore.lazyre import lazy

_NAME = lazy(r"[A-Za-z][A-Za-z0-9-]*")
_SECTION = lazy(r"[A-Za-z0-9.-]+")


class ConfigSyntaxError(ValueError):
    pass


def parse(text: str) -> list[tuple[str, str | None]]:
    """``[(key, value)]`` in file order; key as ``section[.subsection].name``."""
    out: list[tuple[str, str | None]] = []
    section: str | None = None
    i, n = 0, len(text)
    lineno = 1
    while i < n:
        # skip blank space and comments at the start of a line
        c = text[i]
        if c in " \t\r\n":
            lineno += c == "\n"
            i += 1
            continue
        if c in "#;":
            while i < n and text[i] != "\n":
                i += 1
            continue
        if c == "[":
            section, i = _section(text, i + 1, lineno)
            continue
        m = _NAME.match(text, i)
        if not m:
            raise ConfigSyntaxError(f"line {lineno}: bad variable name")
        if section is None:
            raise ConfigSyntaxError(f"line {lineno}: variable outside a section")
        name = m.group(0).lower()
        i = m.end()
        while i < n and text[i] in " \t":
            i += 1
        if i >= n or text[i] in "\r\n#;":
            out.append((f"{section}.{name}", None))
            continue
        if text[i] != "=":
            raise ConfigSyntaxError(f"line {lineno}: expected '=' after {name}")
        value, i, lines = _value(text, i + 1, lineno)
        lineno += lines
        out.append((f"{section}.{name}", value))
    return out


def _section(text: str, i: int, lineno: int) -> tuple[str, int]:
    end = text.find("]", i)
    m = _SECTION.match(text, i)
    if not m:
        raise ConfigSyntaxError(f"line {lineno}: bad section header")
    name = m.group(0)
    i = m.end()
    if i < len(text) and text[i] == "]":
        # legacy [section.sub]: the whole name is lower-cased by git
        head, _, sub = name.partition(".")
        return (f"{head.lower()}.{sub.lower()}" if sub else head.lower()), i + 1
    if "." in name or end < 0:
        raise ConfigSyntaxError(f"line {lineno}: bad section header")
    while i < len(text) and text[i] in " \t":
        i += 1
    if i >= len(text) or text[i] != '"':
        raise ConfigSyntaxError(f"line {lineno}: bad section header")
    i += 1
    sub = []
    while True:
        if i >= len(text) or text[i] == "\n":
            raise ConfigSyntaxError(f"line {lineno}: unterminated subsection")
        ch = text[i]
        if ch == "\\" and i + 1 < len(text) and text[i + 1] != "\n":
            sub.append(text[i + 1])
            i += 2
            continue
        if ch == '"':
            break
        sub.append(ch)
        i += 1
    if i + 1 >= len(text) or text[i + 1] != "]":
        raise ConfigSyntaxError(f"line {lineno}: bad section header")
    return f"{name.lower()}.{''.join(sub)}", i + 2


_ESC = {"n": "\n", "t": "\t", "b": "\b", '"': '"', "\\": "\\"}


def _value(text: str, i: int, lineno: int) -> tuple[str, int, int]:
    out: list[str] = []
    quoted = False
    pending_space = ""
    lines = 0
    n = len(text)
    while i < n:
        ch = text[i]
        if ch == "\n" and not quoted:
            break
        if ch == "\n":
            raise ConfigSyntaxError(f"line {lineno}: newline inside quotes")
        if ch == "\\":
            nxt = text[i + 1] if i + 1 < n else ""
            if nxt == "\n":
                lines += 1
                i += 2
                continue
            if nxt == "\r" and text[i + 2:i + 3] == "\n":
                lines += 1
                i += 3
                continue
            if nxt not in _ESC:
                raise ConfigSyntaxError(f"line {lineno}: bad escape \\{nxt}")
            out.append(pending_space + _ESC[nxt])
            pending_space = ""
            i += 2
            continue
        if ch == '"':
            quoted = not quoted
            out.append(pending_space)
            pending_space = ""
            i += 1
            continue
        if not quoted and ch in "#;":
            while i < n and text[i] != "\n":
                i += 1
            break
        if not quoted and ch in " \t\r":
            if out or pending_space:
                pending_space += ch
            i += 1
            continue
        out.append(pending_space + ch)
        pending_space = ""
        i += 1
    if quoted:
        raise ConfigSyntaxError(f"line {lineno}: unterminated quote")
    return "".join(out), i, lines


def get_all(pairs, key: str) -> list[str | None]:
    """Values of ``key`` (section and name compared case-insensitively)."""
    want = _norm(key)
    return [v for k, v in pairs if _norm(k) == want]


def _norm(key: str) -> str:
    first, _, rest = key.partition(".")
    sub, dot, var = rest.rpartition(".")
    return f"{first.lower()}.{sub}.{var.lower()}" if dot else f"{first.lower()}.{var.lower()}"


def added(old: list, new: list) -> list[tuple[str, str | None]]:
    """Pairs in ``new`` that ``old`` does not have (as a multiset, keys normalised)."""
    have: dict = {}
    for k, v in old:
        have[(_norm(k), v)] = have.get((_norm(k), v), 0) + 1
    out = []
    for k, v in new:
        key = (_norm(k), v)
        if have.get(key):
            have[key] -= 1
        else:
            out.append((k, v))
    return out
