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
# The final byte after ESC that opens a control string; OSC may also end at BEL.
_OPENERS = frozenset(b"]P_^X")
# UTF-8 encodings of the C1 string openers (DCS, SOS, OSC, PM, APC) and of ST.
_C1_OPENERS = frozenset((0x90, 0x98, 0x9D, 0x9E, 0x9F))
_C1_ST = 0x9C
BEL = 0x07
_NORMAL_STOP = lazy(rb"[\x1b\xc2]")
_STRING_STOP = lazy(rb"[\x07\x1b\xc2]")


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
    """A streaming filter that drops terminal control strings; ``removed`` counts them."""

    NORMAL, ESC_SEEN, C2_SEEN, IN_STRING, IN_ESC, IN_C2 = range(6)

    def __init__(self) -> None:
        self.state = self.NORMAL
        self.removed = 0

    def feed(self, chunk: bytes) -> bytes:
        if self.state == self.NORMAL and ESC not in chunk and 0xC2 not in chunk:
            return chunk        # the common case: nothing to look at
        out = bytearray()
        st, i, n = self.state, 0, len(chunk)
        while i < n:
            if st == self.NORMAL or st == self.IN_STRING:
                # Jump to the next byte that can change the state.
                m = (_NORMAL_STOP if st == self.NORMAL else _STRING_STOP).search(chunk, i)
                j = m.start() if m else n
                if st == self.NORMAL:
                    out += chunk[i:j]
                i = j
                if i == n:
                    break
            b = chunk[i]
            i += 1
            if st == self.NORMAL:
                st = self.ESC_SEEN if b == ESC else self.C2_SEEN
            elif st == self.ESC_SEEN:
                if b in _OPENERS:
                    st, self.removed = self.IN_STRING, self.removed + 1
                elif b == ESC:
                    out.append(ESC)             # the first ESC was not an opener
                elif b == 0xC2:
                    out.append(ESC)
                    st = self.C2_SEEN
                else:
                    out += bytes((ESC, b))      # CSI, charset selection, ...: kept
                    st = self.NORMAL
            elif st == self.C2_SEEN:
                if b in _C1_OPENERS:
                    st, self.removed = self.IN_STRING, self.removed + 1
                elif b == ESC:
                    out.append(0xC2)
                    st = self.ESC_SEEN
                elif b != 0xC2:
                    out += bytes((0xC2, b))
                    st = self.NORMAL
                else:
                    out.append(0xC2)
            elif st == self.IN_STRING:
                st = {BEL: self.NORMAL, ESC: self.IN_ESC}.get(b, self.IN_C2)
            elif st == self.IN_ESC:     # ESC \ is ST; any other ESC x: still dropping
                st = self.NORMAL if b == 0x5C else (self.IN_ESC if b == ESC else self.IN_STRING)
            else:                       # IN_C2
                st = self.NORMAL if b == _C1_ST else (
                    self.IN_ESC if b == ESC else self.IN_STRING)
        self.state = st
        return bytes(out)

    def flush(self) -> bytes:
        """Bytes held back at the end of the output (a lone ESC or 0xC2)."""
        st, self.state = self.state, self.NORMAL
        return {self.ESC_SEEN: b"\x1b", self.C2_SEEN: b"\xc2"}.get(st, b"")
