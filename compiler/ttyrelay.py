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
  reading the terminal after the run) and closes the pipe on the person's
  end-of-file (Ctrl-D);
* it reads the terminal only while ringfence is the terminal's foreground process
  group (``tcgetpgrp == getpgrp``): ``ringfence run ... &`` is never stopped by
  SIGTTIN (ignored during the run; a read in the background is EIO, a pause), so
  the supervisor's timeout and limit watch go on, and what the person types then
  belongs to their shell;
* type-ahead: it reads the terminal only when the pipe is empty (FIONREAD), that is
  when the command has read everything relayed so far. Bytes typed during the run
  stay in the terminal for the shell, except at most ONE read's worth (one line, in
  the terminal's cooked mode) that the relay had moved into the pipe and the
  command never read: that line is lost when the run ends. (A pipe cannot tell
  when its reader is waiting, so exactly "only as the command reads" is not
  possible without handing over the terminal.)

The command sees a pipe, not a terminal (``isatty(0)`` is false); the run records
that it got a relayed terminal (RF625).
"""

from __future__ import annotations

import errno
import fcntl
import os
import selectors
import struct
import termios

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
        self.tick()

    def foreground(self) -> bool:
        try:
            return os.tcgetpgrp(self.tty) == os.getpgrp()
        except OSError as exc:
            # ENOTTY: not our controlling terminal, so no job control applies to us
            return exc.errno == errno.ENOTTY

    def _pipe_empty(self) -> bool:
        try:
            buf = fcntl.ioctl(self.pipe, termios.FIONREAD, b"\0\0\0\0")
            return struct.unpack("i", buf)[0] == 0
        except OSError:
            return True

    def tick(self) -> None:
        """Called on every turn of the supervisor's loop: start or stop reading the
        terminal as ringfence enters or leaves the foreground and the pipe empties."""
        if self.closed or self.pending or self.eof:
            return
        keys = self.sel.get_map()
        want = self.foreground() and self._pipe_empty()
        if want and self.tty not in keys:
            self.sel.register(self.tty, selectors.EVENT_READ, RELAY)
        elif not want and self.tty in keys:
            self.sel.unregister(self.tty)

    def ready(self, fd: int) -> None:
        """One step for the fd the selector reported."""
        if self.closed:
            return
        if fd == self.tty:
            if not self.foreground():
                self.tick()     # in the background now: never read (SIGTTIN, EIO)
                return
            try:
                data = os.read(self.tty, 4096)
            except OSError as exc:
                if exc.errno in (errno.EAGAIN, errno.EINTR):
                    return
                if exc.errno == errno.EIO and not self.foreground():
                    self.tick()
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
        # Read the terminal again only when the command has read the pipe empty.
        keys = self.sel.get_map()
        if not self.pending and not self.eof:
            if self.pipe in keys:
                self.sel.unregister(self.pipe)
            self.tick()
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
