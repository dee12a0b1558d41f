"""Blocking Session calls off the MCP server's loop (ringfence/mcp/calls.py)."""

from __future__ import annotations

import contextvars
import threading
import time

import anyio
import pytest

from ringfence.mcp import calls
from ringfence.rfcore.cancel import CancelToken

VAR: contextvars.ContextVar = contextvars.ContextVar("t", default="unset")


def test_a_value_an_error_and_the_callers_context_come_back():
    async def main():
        VAR.set("caller's")
        assert await calls.call(lambda a, b: a + b, 2, 3) == 5
        assert await calls.call(VAR.get) == "caller's"
        with pytest.raises(ZeroDivisionError):
            await calls.call(lambda: 1 / 0)

    anyio.run(main)


def test_calls_never_wait_behind_each_other_and_the_loop_keeps_serving():
    gate = threading.Event()
    order = []

    def slow():
        gate.wait(10)
        order.append("slow")

    def quick():
        order.append("quick")
        gate.set()

    async def main():
        async with anyio.create_task_group() as tg:
            tg.start_soon(calls.call, slow)
            await anyio.sleep(0.05)
            tg.start_soon(calls.call, quick)   # runs while slow() still blocks its thread

    anyio.run(main)
    assert order == ["quick", "slow"]


def test_a_cancelled_call_cancels_its_token_and_its_thread_survives():
    token = CancelToken()
    started = threading.Event()
    threads = []

    def long():
        threads.append(threading.current_thread())
        started.set()
        end = time.monotonic() + 10
        while not token.cancelled and time.monotonic() < end:
            time.sleep(0.01)

    async def main():
        with anyio.move_on_after(0.3):
            await calls.call(long, token=token)

    anyio.run(main)
    assert started.is_set() and token.cancelled
    # The worker lives on: a sandbox's --die-with-parent is tied to its thread.
    time.sleep(0.1)
    assert threads[0].is_alive()


def test_progress_ticks_each_second_until_it_is_done():
    seen = []

    class Ctx:
        async def report_progress(self, progress, total, message):
            seen.append((progress, message))

    async def main():
        await calls.call(time.sleep, 1.8, ticking=(Ctx(), "running"))
        n = len(seen)
        await anyio.sleep(1.2)
        return n

    n = anyio.run(main)
    assert n >= 1 and seen[0] == (1, "running (1s)")
    assert [p for p, _ in seen] == list(range(1, n + 1))    # and none once it was done


def test_a_flood_of_calls_gets_a_bounded_number_of_threads_and_all_finish():
    """Review r24w: workers never exit, so a client (the agent) that sends many calls
    at once must not get one thread each for ever: a user's RLIMIT_NPROC counts
    threads, and the Session runs one command at a time anyway (``Session._exec``).
    Calls beyond ``MAX_WORKERS`` wait for a worker; every one still finishes."""
    gate = threading.Event()
    n = calls.MAX_WORKERS * 3

    def blocked(i):
        gate.wait(30)
        return i

    async def main():
        results = []

        async def one(i):
            results.append(await calls.call(blocked, i))

        async with anyio.create_task_group() as tg:
            for i in range(n):
                tg.start_soon(one, i)
            await anyio.sleep(0.2)
            workers = [t for t in threading.enumerate() if t.name == "ringfence-mcp-call"]
            assert len(workers) <= calls.MAX_WORKERS
            gate.set()
        return results

    assert sorted(anyio.run(main)) == list(range(n))
    assert calls.drain(30)
