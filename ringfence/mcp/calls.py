"""Blocking Session calls, off the MCP server's event loop (issue 24 item 4).

A tool call's ``session.run`` blocks for as long as the command runs, so it goes to
a worker thread while the loop keeps serving (progress, cancellation, other calls).
``anyio.to_thread`` with a task group and an ``Event`` per call cost about 1 ms of
a warm ``shell`` call's hand-off in and out; this is the same hand-off done with one
queue put and one ``call_soon_threadsafe``:

* a worker thread that is idle takes the call, else a new one starts, up to
  ``MAX_WORKERS``: calls do not wait behind each other (an ``await_approval`` may
  wait 5 s in ``resume``) unless that many are in flight;
* workers never exit: a sandbox's ``--die-with-parent`` is tied to the *thread*
  that started bwrap, so the thread must outlive every run it started;
* the call runs in a copy of the caller's context (contextvars), as anyio's would;
* ``call(..., ticking=(ctx, what))`` sends a progress notification each second;
  if the awaiting task is cancelled (the client cancelled the call), ``token`` is
  cancelled, which kills the whole sandbox (the run is recorded ``aborted``);
* ``drain()``: the server waits for the calls still in their threads before it exits
  (the workers are daemon threads): a call cancelled at end of input still records
  its run and removes its stage, and one settling is not cut half-applied.
"""

from __future__ import annotations

import asyncio
import collections
import contextvars
import queue
import threading

_IDLE: list[queue.SimpleQueue] = []
_LOCK = threading.Lock()
_BUSY = threading.Condition(_LOCK)
_RUNNING = [0]                          # calls submitted and not yet finished
# Workers never exit: at most this many (anyio's default too). A client's flood of
# calls must not leave a thread each behind (RLIMIT_NPROC counts threads); the calls
# beyond wait in _BACKLOG for the first worker free (runs go one at a time anyway).
MAX_WORKERS = 40
_WORKERS = [0]
_BACKLOG: collections.deque = collections.deque()


def _submit(fn) -> None:
    with _LOCK:
        _RUNNING[0] += 1
        q = _IDLE.pop() if _IDLE else None
        if q is None:
            if _WORKERS[0] >= MAX_WORKERS:
                _BACKLOG.append(fn)
                return
            _WORKERS[0] += 1
    if q is None:
        q = queue.SimpleQueue()
        threading.Thread(target=_work, args=(q,), daemon=True,
                         name="ringfence-mcp-call").start()
    q.put(fn)


def _work(q: queue.SimpleQueue) -> None:
    while True:
        fn = q.get()
        while fn is not None:
            try:
                fn()
            finally:
                with _LOCK:
                    _RUNNING[0] -= 1
                    _BUSY.notify_all()
                    fn = _BACKLOG.popleft() if _BACKLOG else None
                    if fn is None:
                        _IDLE.append(q)


def drain(timeout: float | None = None) -> bool:
    """Wait until no call is left in a worker thread; False if some still is."""
    with _BUSY:
        return _BUSY.wait_for(lambda: _RUNNING[0] <= 0, timeout)


def _deliver(done: asyncio.Future, outcome) -> None:
    if not done.done():
        done.set_result(outcome)


async def call(fn, *args, token=None, ticking=None):
    """``fn(*args)`` in a worker thread; its value, or what it raised."""
    loop = asyncio.get_running_loop()
    done = loop.create_future()
    context = contextvars.copy_context()

    def work() -> None:
        try:
            outcome = (True, context.run(fn, *args))
        except BaseException as exc:        # re-raised in the caller's task
            outcome = (False, exc)
        try:
            loop.call_soon_threadsafe(_deliver, done, outcome)
        except RuntimeError:
            pass                            # the loop is gone (the server stopped)

    _submit(work)
    ticker = loop.create_task(_tick(*ticking, done)) if ticking else None
    try:
        ok, value = await asyncio.shield(done)
    except BaseException:
        if token is not None and not done.done():
            token.cancel()                  # the client gave up: kill the sandbox
        raise
    finally:
        if ticker is not None:
            ticker.cancel()
    if ok:
        return value
    raise value


async def _tick(ctx, what: str, done: asyncio.Future) -> None:
    seconds = 0
    while True:
        await asyncio.sleep(1.0)
        if done.done():
            return
        seconds += 1
        try:
            await ctx.report_progress(seconds, None, f"{what} ({seconds}s)")
        except Exception:
            return                      # progress is a courtesy, never a failure
