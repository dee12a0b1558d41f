"""The stdio wire of ``ringfence mcp``, read and written on the event loop itself.

The SDK's own stdio transport reads each line and writes each reply through a
worker thread (``anyio.wrap_file``): two thread hand-offs per call, which on a
busy two-core machine cost a few milliseconds of a warm ``shell`` call (issue 24
item 4). When the wire is a pipe or a socket (how every MCP client starts a
server), this module serves the same two streams non-blocking, on the loop:

* the wire is moved to private descriptors, and fd 0 becomes the null device and
  fd 1 a duplicate of stderr while serving, as the SDK does: nothing a handler or
  child prints can tear a frame, and nothing can read a request meant for us;
* lines are split on ``\\n`` and decoded as UTF-8 (invalid bytes replaced, as the
  SDK does); a reply waits for the pipe to drain, never blocking the loop;
* a client that went away ends the writer quietly (``ClosedResourceError``), and
  the reader sees end of file;
* on exit the descriptors are put back, blocking again.

Anything else (a terminal, a file) gets the SDK's transport unchanged. Only stdlib
and anyio here; ``server.py`` hands the streams to the SDK's ``stdio_server``.
"""

from __future__ import annotations

import asyncio
import fcntl
import os
import stat
from contextlib import contextmanager

import anyio

CHUNK = 1 << 16


def _is_pipe(fd: int) -> bool:
    try:
        mode = os.fstat(fd).st_mode
    except OSError:
        return False
    return stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode)


def usable() -> bool:
    """Both standard descriptors are a pipe or a socket."""
    return _is_pipe(0) and _is_pipe(1)


async def _ready(fd: int, *, write: bool) -> None:
    loop = asyncio.get_running_loop()
    done = loop.create_future()

    def wake() -> None:
        if not done.done():
            done.set_result(None)

    (loop.add_writer if write else loop.add_reader)(fd, wake)
    try:
        await done
    finally:
        (loop.remove_writer if write else loop.remove_reader)(fd)


class Lines:
    """``async for line in Lines(fd)``: text lines, each with its ``\\n``."""

    def __init__(self, fd: int) -> None:
        self.fd = fd
        self.buf = bytearray()
        self.scanned = 0        # bytes of buf known to hold no newline
        self.eof = False

    def __aiter__(self) -> "Lines":
        return self

    async def __anext__(self) -> str:
        while True:
            i = self.buf.find(b"\n", self.scanned)
            if i >= 0:
                line = bytes(self.buf[:i + 1])
                del self.buf[:i + 1]
                self.scanned = 0
                return line.decode("utf-8", "replace")
            self.scanned = len(self.buf)
            if self.eof:
                if not self.buf:
                    raise StopAsyncIteration
                line = bytes(self.buf)
                self.buf.clear()
                return line.decode("utf-8", "replace")
            try:
                chunk = os.read(self.fd, CHUNK)
            except BlockingIOError:
                await _ready(self.fd, write=False)
                continue
            except OSError:
                chunk = b""
            if chunk:
                self.buf += chunk
            else:
                self.eof = True


class Out:
    """``await out.write(text)`` then ``await out.flush()``: whole replies, in order."""

    def __init__(self, fd: int) -> None:
        self.fd = fd
        self.lock = anyio.Lock()

    async def write(self, text: str) -> None:
        data = memoryview(text.encode("utf-8"))
        async with self.lock:
            while data:
                try:
                    data = data[os.write(self.fd, data):]
                except BlockingIOError:
                    await _ready(self.fd, write=True)
                except OSError:             # EPIPE: the client is gone
                    raise anyio.ClosedResourceError from None

    async def flush(self) -> None:
        """Every write is already on the wire."""


def _flush_std() -> None:
    """Python's own buffers of fd 1 and 2, written out to where they point now."""
    import sys

    for stream in (sys.stdout, sys.stderr):
        try:
            if stream is not None:
                stream.flush()
        except (OSError, ValueError):
            pass


@contextmanager
def claimed():
    """(lines, out) on private duplicates of fd 0 and 1; fd 0 reads the null device
    and fd 1 writes to stderr meanwhile. Put back on exit."""
    _flush_std()                # printed before: still for the wire as it was
    wire_in = fcntl.fcntl(0, fcntl.F_DUPFD_CLOEXEC, 3)
    wire_out = fcntl.fcntl(1, fcntl.F_DUPFD_CLOEXEC, 3)
    try:
        null = os.open(os.devnull, os.O_RDONLY)
        try:
            os.dup2(null, 0)
        finally:
            os.close(null)
        os.dup2(2, 1)
        for fd in (wire_in, wire_out):
            os.set_blocking(fd, False)
        yield Lines(wire_in), Out(wire_out)
    finally:
        _flush_std()            # a handler's print(), still in sys.stdout: to stderr
        for fd, std in ((wire_in, 0), (wire_out, 1)):
            try:
                os.set_blocking(fd, True)
                os.dup2(fd, std)
            except OSError:
                pass
            os.close(fd)
