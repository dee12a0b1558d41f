"""The person's terminal around a sandboxed command (issue 10 §6).

Two things a command can do to the terminal it is given, and what ringfence does:

* **Its mode.** With the terminal as stdin, the command can ``stty -echo`` (or
  leave raw mode on after a crash) and the person's shell stays broken after the
  run. :class:`TermGuard` saves the termios of every terminal the command gets
  before the run and restores it afterwards: on a normal exit, a timeout, a
  forwarded signal or an exception (the executor's ``finally``).
* **Control strings in its output.** The command's stdout and stderr are pipes
  that ringfence relays. When ringfence writes them to a terminal,
  :class:`ControlStrings` removes the *string* controls, which carry data to the
  terminal rather than format text: OSC (``ESC ]``: OSC 52 writes the
  clipboard, OSC 0/2 set the title, OSC 8 makes hyperlinks), DCS (``ESC P``,
  also tmux's passthrough), APC, PM and SOS, and their UTF-8 encoded C1 forms.
  Colours, cursor movement and the rest of CSI pass unchanged, so tools look the
  same. Output that goes to a file or a pipe is never touched (it may be binary),
  and the ledger's output tails keep the raw bytes: the run says how many strings
  it removed (RF620).

TIOCSTI (typing into the terminal) needs the terminal to be the caller's
controlling terminal; bwrap's ``--new-session`` gives the sandbox none. And a
terminal on stdin is never the command's fd 0 (issue 23): it reads a pipe that
ringfence relays from the terminal (``compiler/ttyrelay.py``, RF625).
"""

from __future__ import annotations

import os
import signal
import threading

from ringfence.rfcore.lazyre import lazy

ESC = 0x1B
BEL, CAN, SUB, DEL = 0x07, 0x18, 0x1A, 0x7F
# The final byte after ESC that opens a control string; OSC may also end at BEL.
_OPENERS = frozenset(b"]P_^X")
# C1 string openers (DCS, SOS, OSC, PM, APC), raw or UTF-8 encoded (0xC2 + byte).
_C1_OPENERS = frozenset((0x90, 0x98, 0x9D, 0x9E, 0x9F))
_C1_ST = 0x9C
# Runs of bytes that can never change the filter's state from its ground state: C0
# and ASCII but ESC, well-formed UTF-8 other than the encoded C1 controls (U+0080 to
# U+009F), and bytes that are no lead and no C1 (a decoder shows U+FFFD).
_SAFE = lazy(rb"(?:[\x00-\x1a\x1c-\x7f\xa0-\xbf\xc0\xc1\xf5-\xff]|\xc2[\xa0-\xbf]"
             rb"|[\xc3-\xdf][\x80-\xbf]|[\xe0-\xef][\x80-\xbf]{2}"
             rb"|[\xf0-\xf4][\x80-\xbf]{3})+")
_STRING_STOP = lazy(rb"[\x07\x18\x1a\x1b\x9c\xc2]")


class TermGuard:
    """Save the termios of the terminals among ``fds``; :meth:`restore` puts them back."""

    def __init__(self, fds) -> None:
        self.saved: list[tuple[int, list]] = []
        try:
            import termios
        except ImportError:     # pragma: no cover - not a POSIX host
            return
        self._termios = termios
        for fd in dict.fromkeys(fds):
            if fd is None or not _isatty(fd):
                continue
            try:
                self.saved.append((fd, termios.tcgetattr(fd)))
            except (termios.error, OSError):
                continue

    def restore(self) -> None:
        if not self.saved:
            return
        # A background ringfence (`ringfence run ... &`) would be stopped by SIGTTOU
        # for changing the mode: ignore it just for the restore, as shells do.
        main = threading.current_thread() is threading.main_thread()
        old = signal.signal(signal.SIGTTOU, signal.SIG_IGN) if main else None
        try:
            for fd, attrs in self.saved:
                try:
                    self._termios.tcsetattr(fd, self._termios.TCSANOW, attrs)
                except (self._termios.error, OSError):
                    pass
        finally:
            if main:
                signal.signal(signal.SIGTTOU, old)


def _isatty(fd: int) -> bool:
    try:
        return os.isatty(fd)
    except OSError:
        return False


def stdin_fd(stdin) -> int | None:
    """The fd the command will read from when ``stdin`` is handed to Popen as is."""
    if stdin is None:
        return 0
    if isinstance(stdin, int):
        return stdin if stdin >= 0 else None    # subprocess.DEVNULL/PIPE are negative
    try:
        return stdin.fileno()
    except (AttributeError, OSError, ValueError):
        return None


def sink_is_tty(sink) -> bool:
    try:
        return os.isatty(sink.fileno())
    except (AttributeError, OSError, ValueError):
        return False


class ControlStrings:
    """A streaming filter that drops terminal control strings; ``removed`` counts them.

    It follows the VT500 parser's states (the model xterm, VTE and xterm.js
    implement), so it never passes a byte the terminal would take as the start of a
    string: inside an escape sequence a C0 control is *executed* and the sequence
    goes on (``ESC \\x01 ]`` is an OSC: the C0 byte is passed, the OSC dropped),
    CAN and SUB cancel it, ESC restarts it. Raw 8-bit C1 bytes (0x80 to 0x9F where
    no UTF-8 sequence expects a continuation byte) are removed: a string opener
    (0x90 DCS, 0x9D OSC, ...) with its string, any other (0x9B CSI) alone. A string
    ends at BEL, ST (``ESC \\``, 0x9C or its UTF-8 form), CAN or SUB; ending early
    is always safe (the opener never reached the terminal), so the rest is shown as
    text. The output is assumed UTF-8: a 0x80 to 0x9F byte that continues a UTF-8
    character is text.
    """

    GROUND, ESCAPE, C2_SEEN, IN_STRING, IN_ESC, IN_C2 = range(6)
    NORMAL = GROUND

    def __init__(self) -> None:
        self.state = self.GROUND
        self.cont = 0           # UTF-8 continuation bytes still expected (ground)
        self.removed = 0

    def feed(self, chunk: bytes) -> bytes:
        if self.state == self.GROUND and not self.cont:
            m = _SAFE.match(chunk)
            if m is not None and m.end() == len(chunk):
                return chunk    # the common case: nothing to look at
        out = bytearray()
        st, cont, i, n = self.state, self.cont, 0, len(chunk)
        while i < n:
            if st == self.GROUND and not cont:
                m = _SAFE.match(chunk, i)
                if m is not None:
                    out += chunk[i:m.end()]
                    i = m.end()
                    if i == n:
                        break
            elif st == self.IN_STRING:
                m = _STRING_STOP.search(chunk, i)
                i = m.start() if m else n
                if i == n:
                    break
            b = chunk[i]
            i += 1
            if st == self.GROUND:
                if b == ESC:
                    st, cont = self.ESCAPE, 0
                elif b < 0x80:
                    out.append(b)
                    cont = 0
                elif b <= 0xBF:
                    if cont:
                        out.append(b)
                        cont -= 1
                    elif b <= 0x9F:         # a raw 8-bit C1 control
                        self.removed += 1
                        if b in _C1_OPENERS:
                            st = self.IN_STRING
                    else:
                        out.append(b)
                elif b == 0xC2:
                    st, cont = self.C2_SEEN, 0
                else:
                    out.append(b)
                    cont = (1 if b <= 0xDF else 2 if b <= 0xEF else 3) if 0xC3 <= b <= 0xF4 else 0
            elif st == self.ESCAPE:
                if b in _OPENERS:
                    st, self.removed = self.IN_STRING, self.removed + 1
                elif b == ESC:
                    pass                        # the first ESC was abandoned: dropped
                elif b == CAN or b == SUB:
                    out += bytes((ESC, b))      # cancelled: the terminal shows text next
                    st = self.GROUND
                elif b < 0x20 or b == DEL:
                    out.append(b)               # executed; the escape goes on
                elif b < 0x80:
                    out += bytes((ESC, b))      # CSI, charset selection, ...: kept
                    st = self.GROUND
                else:       # a C1 or UTF-8 byte ends the escape; its ESC is dropped
                    st = self.GROUND    # (never passed alone: a later byte could join it)
                    i -= 1
            elif st == self.C2_SEEN:
                if b in _C1_OPENERS:
                    st, self.removed = self.IN_STRING, self.removed + 1
                elif 0x80 <= b <= 0xBF:
                    out += bytes((0xC2, b))
                    st = self.GROUND
                else:
                    out.append(0xC2)
                    st = self.GROUND
                    i -= 1
            elif st == self.IN_STRING:
                if b in (BEL, CAN, SUB, _C1_ST):
                    st = self.GROUND
                else:
                    st = self.IN_ESC if b == ESC else self.IN_C2
            elif st == self.IN_ESC:     # ESC \ is ST; any other ESC x: still dropping
                st = (self.GROUND if b in (0x5C, CAN, SUB) else
                      self.IN_ESC if b == ESC else self.IN_STRING)
            else:                       # IN_C2
                st = (self.GROUND if b in (_C1_ST, CAN, SUB) else
                      self.IN_ESC if b == ESC else self.IN_STRING)
        self.state, self.cont = st, cont
        return bytes(out)

    def flush(self) -> bytes:
        """Bytes held back at the end of the output (a lone ESC or 0xC2)."""
        st, self.state, self.cont = self.state, self.GROUND, 0
        return {self.ESCAPE: b"\x1b", self.C2_SEEN: b"\xc2"}.get(st, b"")
