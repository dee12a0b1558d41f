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
    (b"\x1b\x1b[1m", b"\x1b\x1b[1m", 0),
    (b"end\x1b", b"end\x1b", 0),                                    # held, then flushed
    (b"\xc2\xc2\x9dx\x07k", b"\xc2k", 1),
]


@pytest.mark.parametrize("data,want,removed", CASES)
@pytest.mark.parametrize("size", [1, 2, 3, 7, 1 << 16])
def test_filter(data, want, removed, size):
    f = ControlStrings()
    out = b"".join(f.feed(data[i:i + size]) for i in range(0, len(data), size)) + f.flush()
    assert (out, f.removed) == (want, removed)
