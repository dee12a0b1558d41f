"""The person's terminal on stdin is never handed to the sandbox (issue 23).

Before, a terminal on ringfence's stdin became the command's fd 0 itself: a file
opened read-write, so the command could write escape strings straight to the
person's screen (OSC 52 clipboard, titles), around the output filter and the
record. Now the command's stdin is a pipe that ringfence feeds from the terminal:

* the terminal stays in the person's own mode (cooked): its line discipline echoes
  and edits lines, Ctrl-C signals ringfence, which ends the sandbox as before;
* the command can only *read* what the person typed: it cannot write to the
  terminal (fd 0 is a pipe's read end), ioctl it (TIOCSTI, TIOCSWINSZ, stty) or
  change its mode; every byte it shows goes through stdout/stderr, filtered for
  the terminal (RF620) and kept in the ledger's tails;
* the relay is part of the supervisor's select loop (no thread that would go on
  reading the terminal after the run), reads the terminal only while the pipe has
  room, and closes the pipe on the person's end-of-file (Ctrl-D).

The command sees a pipe, not a terminal (``isatty(0)`` is false); the run records
that it got a relayed terminal (RF625).
"""

from __future__ import annotations

import errno
import os
import selectors

RELAY = "ringfence-tty-relay"       # the selector key data of the relay's fds


class TtyRelay:
    def __init__(self, tty_fd: int, pipe) -> None:
        self.tty = tty_fd
        self.pipe = pipe.fileno()
        self._pipe_obj = pipe
        os.set_blocking(self.pipe, False)
        self.pending = bytearray()
        self.relayed = 0
        self.sel = None
        self.closed = False
        self.eof = False

    def start(self, sel: selectors.BaseSelector) -> None:
        self.sel = sel
        sel.register(self.tty, selectors.EVENT_READ, RELAY)

    def ready(self, fd: int) -> None:
        """One step for the fd the selector reported."""
        if self.closed:
            return
        if fd == self.tty:
            try:
                data = os.read(self.tty, 4096)
            except OSError as exc:
                if exc.errno in (errno.EAGAIN, errno.EINTR):
                    return
                data = b""      # EIO: the terminal hung up; that is end of input
            if not data:
                self.eof = True
            self.pending += data
        self._drain()

    def _drain(self) -> None:
        try:
            while self.pending:
                n = os.write(self.pipe, self.pending)
                self.relayed += n
                del self.pending[:n]
        except BlockingIOError:
            pass
        except OSError:         # EPIPE: the command closed its stdin; stop reading for it
            self.stop()
            return
        if self.eof and not self.pending:
            self.stop()         # the person's Ctrl-D reaches the command as end of file
            return
        # Read the terminal only while the pipe has room: never swallow type-ahead.
        keys = self.sel.get_map()
        if not self.pending and not self.eof:
            if self.pipe in keys:
                self.sel.unregister(self.pipe)
            if self.tty not in keys:
                self.sel.register(self.tty, selectors.EVENT_READ, RELAY)
        else:
            if self.tty in keys:
                self.sel.unregister(self.tty)
            if self.pipe not in keys:
                self.sel.register(self.pipe, selectors.EVENT_WRITE, RELAY)

    def stop(self) -> None:
        if self.sel is not None:
            for fd in (self.tty, self.pipe):
                if fd in self.sel.get_map():
                    self.sel.unregister(fd)
        self.close()

    def close(self) -> None:
        if not self.closed:
            self.closed = True
            try:
                self._pipe_obj.close()
            except OSError:
                pass
