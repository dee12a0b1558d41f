"""The MCP server's own stdio wire (ringfence/mcp/wire.py): lines in, replies out, on
the event loop, with fd 0 and 1 diverted while it serves."""

from __future__ import annotations

import os
import subprocess
import sys
import threading

import anyio
import pytest

pytest.importorskip("mcp")

from ringfence.mcp import wire  # noqa: E402


def _lines_of(chunks: list[bytes]) -> list[str]:
    r, w = os.pipe()
    os.set_blocking(r, False)

    def feed():
        for c in chunks:
            os.write(w, c)
        os.close(w)

    async def main():
        t = threading.Thread(target=feed)
        t.start()
        got = [line async for line in wire.Lines(r)]
        t.join()
        return got

    try:
        return anyio.run(main)
    finally:
        os.close(r)


def test_lines_split_across_chunks_and_a_last_line_without_newline():
    assert _lines_of([b'{"a":', b'1}\n{"b"', b':2}\n\n', b'{"c":3}']) == [
        '{"a":1}\n', '{"b":2}\n', "\n", '{"c":3}']


def test_invalid_utf8_is_replaced_not_fatal():
    assert _lines_of([b"ok\xff\xfe\n"]) == ["ok\ufffd\ufffd\n"]


def test_a_reply_larger_than_the_pipe_is_written_whole_without_blocking_the_loop():
    r, w = os.pipe()
    os.set_blocking(w, False)
    big = "x" * (1 << 20) + "\n"            # 16x a default pipe buffer
    got = bytearray()

    def drain():
        while True:
            chunk = os.read(r, 1 << 16)
            if not chunk:
                return
            got.extend(chunk)

    async def main():
        ticks = 0

        async def ticker():
            nonlocal ticks
            while True:
                ticks += 1
                await anyio.sleep(0)

        reader = threading.Thread(target=drain)
        async with anyio.create_task_group() as tg:
            tg.start_soon(ticker)
            reader.start()
            await wire.Out(w).write(big)
            tg.cancel_scope.cancel()
        os.close(w)
        reader.join()
        return ticks

    ticks = anyio.run(main)
    os.close(r)
    assert bytes(got) == big.encode()
    assert ticks > 1        # the loop ran other tasks while the pipe was full


def test_a_client_that_went_away_ends_the_writer_quietly():
    r, w = os.pipe()
    os.close(r)
    os.set_blocking(w, False)

    async def main():
        with pytest.raises(anyio.ClosedResourceError):
            await wire.Out(w).write("{}\n")

    anyio.run(main)
    os.close(w)


_CHILD = r"""
import os, sys
from ringfence.mcp import wire
before = (os.fstat(0).st_ino, os.fstat(1).st_ino)
with wire.claimed() as (lines, out):
    # While serving: fd 0 reads the null device, fd 1 is stderr's file.
    assert os.read(0, 10) == b""
    os.write(1, b"stray\n")
    assert os.fstat(1).st_ino == os.fstat(2).st_ino
    import anyio
    async def main():
        async for line in lines:
            await out.write("echo " + line)
    anyio.run(main)
after = (os.fstat(0).st_ino, os.fstat(1).st_ino)
assert before == after, (before, after)
assert os.get_blocking(0) and os.get_blocking(1)
"""


def test_claimed_diverts_fd_0_and_1_and_puts_them_back():
    proc = subprocess.run([sys.executable, "-c", _CHILD], input=b"one\ntwo\n",
                          capture_output=True, timeout=60)
    assert proc.returncode == 0, proc.stderr.decode()
    assert proc.stdout == b"echo one\necho two\n"       # nothing stray on the wire
    assert b"stray" in proc.stderr


def test_usable_only_for_pipes_and_sockets(tmp_path):
    f = tmp_path / "in"
    f.write_text("")
    code = "from ringfence.mcp import wire; print(wire.usable())"
    with open(f) as fh:
        out = subprocess.run([sys.executable, "-c", code], stdin=fh, capture_output=True,
                             text=True, timeout=60).stdout
    assert out.strip() == "False"       # a file: the SDK's own transport
    out = subprocess.run([sys.executable, "-c", code], stdin=subprocess.PIPE,
                         capture_output=True, text=True, timeout=60).stdout
    assert out.strip() == "True"


def _requests() -> bytes:
    import json

    msgs = [{"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
                "protocolVersion": "2025-11-25", "capabilities": {},
                "clientInfo": {"name": "t", "version": "0"}}},
            {"jsonrpc": "2.0", "method": "notifications/initialized"},
            {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}]
    return b"".join(json.dumps(m).encode() + b"\n" for m in msgs)


@pytest.mark.parametrize("stdin_is", ["pipe", "terminal"])
def test_the_server_answers_on_either_transport(box, stdin_is):
    """A pipe gets wire.py; a terminal (raw mode, as a person's would not be) the
    SDK's threaded transport: the same answers, and a quiet exit at end of input."""
    import json
    import pty
    import time
    import tty

    from tests.compiler.sandbox_util import CLI

    argv = [*CLI, "mcp", "-p", "strict", "-w", str(box.ws)]
    if stdin_is == "pipe":
        stdin, feed = subprocess.PIPE, None
    else:
        feed, stdin = pty.openpty()
        tty.setraw(stdin)
    proc = subprocess.Popen(argv, cwd=box.ws, env=box.env(), stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, stdin=stdin)
    if feed is None:
        proc.stdin.write(_requests())
        proc.stdin.flush()
    else:
        os.close(stdin)
        os.write(feed, _requests())
    replies = {}
    deadline = time.monotonic() + 60
    while 2 not in replies and time.monotonic() < deadline:
        line = proc.stdout.readline()
        if not line:
            break
        msg = json.loads(line)
        replies[msg.get("id")] = msg
    if feed is None:
        proc.stdin.close()          # end of file: the server stops, quietly
        proc.stdin = None
    else:
        os.close(feed)              # the terminal hangs up: end of input
    err = proc.communicate(timeout=60)[1].decode()
    assert 2 in replies, err
    names = {t["name"] for t in replies[2]["result"]["tools"]}
    assert names == {"shell", "check", "await_approval"}
    assert "Traceback" not in err
    if feed is None:
        assert proc.returncode == 0, err
