"""Hot-path CLI: argparse only. `check --json/--jsonl`, `run` and `hook` never
import typer, rich, lark or bashlex; human `check`/`explain` (routed here to
`ringfence.fast.human`) import rich for rendering but never typer.

tests/ringfence/test_imports.py asserts this by running each fast command in a
fresh interpreter and inspecting ``sys.modules``.
"""

from __future__ import annotations

import os
import sys

from ringfence.rfcore.errors import RingfenceError


def exit_now(code: int):
    """End the process as Python would, less the interpreter's teardown: threads
    that are not daemons are waited for, exit handlers run, output is flushed, and
    nothing is freed object by object (about 20 ms for a ``run``, which loaded the
    classifier, the compiler and the settle planner)."""
    import atexit

    threading = sys.modules.get("threading")      # not loaded: no thread was started
    for t in threading.enumerate() if threading is not None else ():
        if t is not threading.main_thread() and not t.daemon:
            t.join()
    atexit._run_exitfuncs()      # exit handlers still run; only teardown is skipped
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):     # the reader went away, or it was closed
            pass
    os._exit(code if isinstance(code, int) else 0 if code is None else 1)


def main(argv: list[str]) -> int:
    command, rest = argv[0], argv[1:]
    try:
        if command == "explain" or (command == "check" and not any(
                a in ("--json", "--jsonl") for a in rest)):
            from ringfence.fast.human import main as human

            return human(command, rest)
        if command == "check":
            from .check import main as sub
        elif command == "run":
            from .run import main as sub
        elif command == "hook":
            from .hook import main as hook

            # No interpreter teardown: it would close the hook's ledger connection,
            # and closing the last one checkpoints the WAL with two syncs (see
            # ringfence.hooks.claude_code._LINGER). The answer is already written.
            exit_now(hook(rest))
        else:  # pragma: no cover - __main__ only routes the names above here
            raise AssertionError(command)
        return sub(rest)
    except RingfenceError as exc:
        print(f"ringfence {command}: {exc}", file=sys.stderr)
        return exc.exit_code
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        # The reader went away (e.g. `| head`); not an error of ours.
        try:
            sys.stdout = open(os.devnull, "w")
        except OSError:
            pass
        return 0
    except Exception as exc:  # fail closed, never a traceback
        if os.environ.get("RINGFENCE_DEBUG"):
            raise
        if type(exc).__module__ == "sqlite3":      # disk full, read-only, corrupt
            from ringfence.rfcore.errors import ledger_write_error

            err = ledger_write_error(exc)
            print(f"ringfence {command}: {err}", file=sys.stderr)
            return err.exit_code
        print(f"ringfence {command}: internal error: {type(exc).__name__}: {exc}\n"
              "  (set RINGFENCE_DEBUG=1 for a traceback; nothing was run)", file=sys.stderr)
        return 125
