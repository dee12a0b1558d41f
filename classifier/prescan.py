"""Pre-scan: reject input before tree-sitter ever sees it (RF006-RF010).

Cheap checks on the raw string: size, NUL, control and invisible characters,
undecodable bytes, and bracket nesting depth. Deep input must be refused here,
before any parser or walker could spend time (or stack) on it.
"""

from __future__ import annotations


from ringfence.rfcore.lazyre import lazy
from .ir import ParseProblem

MAX_BYTES = 64 * 1024
MAX_DEPTH = 256

# C0 controls except TAB and LF, DEL, C1 controls, and invisible format
# characters (zero-width, bidi overrides: "trojan source" tricks that make the
# text a person approves differ from what runs).
_CONTROL = lazy("[\x01-\x08\x0b-\x1f\x7f-\x9f\u200b-\u200f\u202a-\u202e\u2060-\u2064"
                "\u2066-\u2069\ufeff]")
_SURROGATE = lazy("[\ud800-\udfff]")
_BRACKETS = lazy(r"[(){}\[\]]")
_OPEN = frozenset("({[")


def prescan(command: str) -> list[ParseProblem]:
    whole = (0, len(command))
    ascii_only = command.isascii()
    if len(command) > MAX_BYTES or (
            not ascii_only and len(command.encode("utf-8", "surrogatepass")) > MAX_BYTES):
        return [ParseProblem("RF009", f"input is larger than {MAX_BYTES // 1024} KiB", whole)]
    problems: list[ParseProblem] = []
    m = None if ascii_only else _SURROGATE.search(command)
    if m:
        problems.append(ParseProblem("RF008", "input is not valid UTF-8 "
                                     "(lone surrogate / undecodable byte)", (m.start(), m.end())))
    i = command.find("\0")
    if i >= 0:
        problems.append(ParseProblem("RF006", "input contains a NUL byte", (i, i + 1)))
    m = _CONTROL.search(command)
    if m:
        problems.append(ParseProblem(
            "RF007", f"input contains control or invisible character U+{ord(m.group()):04X}",
            (m.start(), m.end())))
    # Depth can only exceed the limit if there are that many openers at all.
    if command.count("(") + command.count("{") + command.count("[") > MAX_DEPTH:
        depth = deepest = 0
        for m in _BRACKETS.finditer(command):
            if m.group() in _OPEN:
                depth += 1
                if depth > deepest:
                    deepest = depth
                    if deepest > MAX_DEPTH:
                        problems.append(ParseProblem(
                            "RF010", f"nesting deeper than {MAX_DEPTH} levels",
                            (m.start(), m.end())))
                        break
            elif depth:
                depth -= 1
    return problems



def char_map(data: bytes, text: str):
    if len(data) == len(text):          # ASCII: offsets agree
        return None
    table = [0] * (len(data) + 1)
    b = 0
    for c, ch in enumerate(text):
        n = len(ch.encode("utf-8"))
        for k in range(n):
            table[b + k] = c
        b += n
    table[b] = len(text)
    return table
