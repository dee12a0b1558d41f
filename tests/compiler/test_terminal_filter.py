"""The control-string filter (compiler/terminal.py), at every chunk boundary."""

from __future__ import annotations

import pytest

from ringfence.compiler.terminal import ControlStrings

CASES = [
    (b"plain", b"plain", 0),
    (b"a\x1b]52;c;ZXZpbA==\x07b", b"ab", 1),                       # OSC 52, BEL
    (b"x\x1b]0;title\x1b\\y", b"xy", 1),                            # OSC 0, ST
    (b"\x1b[31mred\x1b[0m", b"\x1b[31mred\x1b[0m", 0),              # colours pass
    (b"\x1bPtmux;\x1b\x1b]52;c;eA==\x07\x1b\\z", b"\x1b\\z", 1),    # DCS passthrough
    (b"\x1b_apc\x1b\\\x1b^pm\x07\x1bXsos\x1b\\ok", b"ok", 3),       # APC, PM, SOS
    ("é ĝ\u009d0;t\u009cq".encode(), "é ĝq".encode(), 1),           # UTF-8 C1 OSC/ST
    ("ü±©".encode(), "ü±©".encode(), 0),                            # other U+0080..00BF
    (b"\x1b\x1b[1m", b"\x1b[1m", 0),                              # an abandoned ESC is dropped
    (b"\x1b\x9b]0;t\x07", b"]0;t\x07", 1),     # never ESC + (dropped C1) + ] = OSC
    (b"\x1b\x1b]x\x07]0;t\x07", b"]0;t\x07", 1),
    (b"end\x1b", b"end\x1b", 0),                                    # held, then flushed
    (b"\xc2\xc2\x9dx\x07k", b"\xc2k", 1),
    # Review i23b: a C0 byte between ESC and the opener is executed by the terminal,
    # which stays in its escape state (VT500) and then takes the string.
    (b"a\x1b\x01]52;c;ZXZpbA==\x07b", b"a\x01b", 1),
    (b"\x1b\x00]0;pwned\x07", b"\x00", 1),
    (b"\x1b\x02]8;;http://x\x07link", b"\x02link", 1),
    (b"\x1b\r\n\x7fP1$r\x1b\\", b"\r\n\x7f", 1),
    (b"\x1b\x01[31mred", b"\x01\x1b[31mred", 0),            # CSI still passes
    (b"\x1b\x18]0;t\x07", b"\x1b\x18]0;t\x07", 0),          # CAN cancels the escape
    (b"\x1b\x1a]0;t\x07", b"\x1b\x1a]0;t\x07", 0),          # so does SUB
    (b"\x1b]0;t\x18after", b"after", 1),                      # and ends a string
    # Raw 8-bit C1 (not a UTF-8 continuation byte): OSC/DCS strings and lone controls.
    (b"x\x9d0;title\x9cy", b"xy", 1),
    (b"x\x9052;c;eA==\x9cy", b"xy", 1),
    (b"x\x9b31my", b"x31my", 1),                             # a raw CSI byte is dropped
    ("Ý ĝ ✓ 😀".encode(), "Ý ĝ ✓ 😀".encode(), 0),            # continuation bytes 0x80-0x9F
]


@pytest.mark.parametrize("data,want,removed", CASES)
@pytest.mark.parametrize("size", [1, 2, 3, 7, 1 << 16])
def test_filter(data, want, removed, size):
    f = ControlStrings()
    out = b"".join(f.feed(data[i:i + size]) for i in range(0, len(data), size)) + f.flush()
    assert (out, f.removed) == (want, removed)
