"""Fast path for ``ringfence check --json`` and ``--jsonl`` (stdlib + tree-sitter only).

Agents call ``check --json`` once per command and corpora go through ``--jsonl``,
so this module imports only argparse/json/os and our own packages; typer, rich,
lark and bashlex are never loaded here (tests/ringfence/test_imports.py checks).

Exit status (documented in docs/cli-check.md):
  0  a verdict was produced (whatever its class) / every JSONL line was processed
  2  usage error, undecodable input, or at least one bad JSONL line (the other
     lines still get their objects, in order)
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import sys

from ringfence.rfcore.errors import EXIT_USAGE, ProfileError, UsageError

EPILOG = """\
examples:
  ringfence check --json 'longbridge news FIG.US 2>&1 | head -30'
  printf '%s\\n' '"ls | head"' '"git push"' | ringfence check --jsonl
  ringfence check --json --profile build 'git push'

--jsonl reads one JSON string per line on stdin and writes one JSON object per
line, in order. A line that is not a JSON string gets {"error": ..., "line": N}
in its place, and the exit status is 2 at the end.
"""

# One JSONL read: big enough to amortise syscalls and flushes on a corpus, while
# an interactive co-process that writes one line still gets its answer at once
# (os.read returns whatever is available).
_CHUNK = 1 << 16
# A command over 64 KiB fails closed anyway; a JSON line may escape it up to 6x.
_MAX_LINE = 1 << 22


class CheckUsageError(UsageError):
    """Bad arguments or input to ``check``: exit 2, like argparse's own errors."""

    exit_code = EXIT_USAGE


def _jobs(text: str) -> int:
    from ringfence.fast.numbers import number

    try:
        return number(text, option="--jobs", low=1, high=64, unit="workers", example=2)
    except UsageError as exc:
        raise argparse.ArgumentTypeError(exc.message) from None


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="ringfence check",
        description="Classify a bash -c string as helper / capability / one_time "
                    "and print its JSON verdict (docs/cli-check.md).",
        epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    mode = p.add_mutually_exclusive_group(required=True)
    mode.add_argument("--json", action="store_true",
                      help="print one JSON object for COMMAND")
    mode.add_argument("--jsonl", action="store_true",
                      help="read JSON strings from stdin, one per line; "
                           "write one object per line")
    p.add_argument("-p", "--profile", metavar="P",
                   help="also decide allow/ask/deny under profile P "
                        "(built-in name or TOML path)")
    p.add_argument("--jobs", type=_jobs, default=0, metavar="N",
                   help="--jsonl worker processes for large batches "
                        "(default: the usable CPUs, at most 4; 1 = no workers)")
    p.add_argument("command", nargs="?", metavar="COMMAND",
                   help="the exact bash -c string (with --json)")
    return p


def _decider(profile_name: str | None):
    """Return ``verdict -> extra JSON fields`` for ``--profile``, or None."""
    if profile_name is None:
        return None
    try:
        from ringfence.profiles.load import load_profile
        from ringfence.session.gate import decide
    except ImportError as exc:
        raise CheckUsageError(
            f"--profile is not available in this build ({exc})",
            hint="run 'ringfence check --json CMD' without --profile") from None
    try:
        profile = load_profile(profile_name, workspace=None)
    except ProfileError as exc:
        # `check` runs nothing, so an unusable --profile is bad input to check
        # (exit 2), not a fail-closed refusal to run (125).
        raise CheckUsageError(exc.message, hint=exc.hint) from None

    def extra(verdict) -> dict:
        return decide(verdict, profile, grants=frozenset(), context="host").to_json()

    return extra


# ensure_ascii=False keeps the command readable; key order is the contract's
# order because to_json builds the dict in that order. One encoder, built once
# (json.dumps with keywords builds a new one per call: ~30% of the JSON cost);
# no circular check, the objects are fresh trees of dicts and lists.
_dumps = json.JSONEncoder(ensure_ascii=False, check_circular=False).encode


def _encode(text: str) -> bytes:
    # A command may hold lone surrogates (non-UTF-8 argv bytes, or "\ud800" in a
    # JSONL string). They only ever occur inside JSON strings, where
    # backslashreplace writes them as the JSON escape \udXXX: valid JSON that
    # round-trips, instead of a UnicodeEncodeError.
    return text.encode("utf-8", "backslashreplace")


def _object(command: str, classify, extra) -> dict:
    verdict = classify(command)
    obj = verdict.to_json()
    if extra is not None:
        obj.update(extra(verdict))
    return obj


def check_one(command: str, profile: str | None = None) -> dict:
    """The JSON object ``check --json`` prints for ``command``."""
    from ringfence.classifier import classify

    return _object(command, classify, _decider(profile))


def line_result(raw: bytes, lineno: int, classify, extra=None) -> dict:
    """The output object for one JSONL input line (an error object if bad)."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        return {"error": f"line is not valid UTF-8 (byte {exc.start})", "line": lineno}
    if not text.strip():
        return {"error": "line is empty, expected a JSON string", "line": lineno}
    try:
        command = json.loads(text)
    except ValueError as exc:
        return {"error": f"line is not JSON: {exc}", "line": lineno}
    if not isinstance(command, str):
        return {"error": f"line is a JSON {type(command).__name__}, "
                         "expected a JSON string", "line": lineno}
    return _object(command, classify, extra)


def _read_batches(fd: int):
    """Yield ``(first_lineno, lines, full)`` for each read of ``fd``.

    ``lines`` are the complete lines of that read (raw bytes, no newline), or
    None for a line longer than _MAX_LINE (its bytes are dropped, not buffered:
    an endless line must not exhaust memory). ``full`` says the read filled a
    whole chunk, i.e. a batch is waiting rather than a co-process typing.
    """
    lineno = 1
    pieces: list[bytes] = []      # the start of the current, unfinished line
    size = 0
    overlong = False
    while True:
        chunk = os.read(fd, _CHUNK)
        if not chunk:             # EOF: a final line without a newline still counts
            if pieces or overlong:
                yield lineno, [None if overlong else b"".join(pieces)], False
            return
        parts = chunk.split(b"\n")
        tail = parts.pop()
        lines: list[bytes | None] = []
        if parts:
            head = parts[0]
            if overlong or size + len(head) > _MAX_LINE:
                lines.append(None)
            else:
                lines.append(b"".join(pieces) + head if pieces else head)
            lines.extend(p if len(p) <= _MAX_LINE else None for p in parts[1:])
            pieces, size, overlong = [], 0, False
        if not overlong and tail:
            pieces.append(tail)
            size += len(tail)
            if size > _MAX_LINE:
                pieces, size, overlong = [], 0, True
        if lines:
            yield lineno, lines, len(chunk) == _CHUNK
            lineno += len(lines)


def _render(first_lineno: int, lines, classify, extra) -> tuple[bytes, int]:
    """The output block for a batch of input lines, and how many were bad."""
    out, bad = [], 0
    for lineno, raw in enumerate(lines, first_lineno):
        if raw is None:
            obj = {"error": f"line is longer than {_MAX_LINE} bytes", "line": lineno}
        else:
            if raw.endswith(b"\r"):   # CRLF files: the CR ends the line, it is not content
                raw = raw[:-1]
            obj = line_result(raw, lineno, classify, extra)
        if "error" in obj:
            bad += 1
        out.append(_dumps(obj))
    out.append("")
    return _encode("\n".join(out)), bad


# (classify, extra) for forked workers: set before the pool forks, inherited by
# the children, so nothing has to be pickled but the raw lines and the output.
_WORKER: tuple | None = None


def _work(batch: tuple[int, list]) -> tuple[bytes, int]:
    return _render(batch[0], batch[1], *_WORKER)


def _run_parallel(batches, write, classify, extra, jobs: int) -> int:
    global _WORKER
    import multiprocessing

    _WORKER = (classify, extra)
    bad = 0
    # fork: the children inherit the loaded parser and tables (no re-import).
    # imap keeps the input order; the pool's feeder thread reads stdin ahead.
    with multiprocessing.get_context("fork").Pool(jobs) as pool:
        for data, n in pool.imap(_work, batches):
            write(data)
            bad += n
    return bad


def default_jobs() -> int:
    try:
        cpus = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        cpus = os.cpu_count() or 1
    return max(1, min(4, cpus))


def run_jsonl(fd_in: int, write, classify, extra=None, jobs: int = 1) -> int:
    """Stream JSONL from ``fd_in`` to ``write(bytes)``; return the number of bad lines.

    Starts sequential. With ``jobs > 1``, as soon as one read fills a whole
    chunk (a batch is waiting, not a co-process writing line by line) the rest
    is classified by ``jobs`` forked workers, still written in input order.
    """
    batches = _read_batches(fd_in)
    bad = 0
    for first, lines, full in batches:
        if full and jobs > 1:
            rest = ((f, ls) for f, ls, _ in batches)
            return bad + _run_parallel(itertools.chain([(first, lines)], rest),
                                       write, classify, extra, jobs)
        data, n = _render(first, lines, classify, extra)
        write(data)
        bad += n
    return bad


def main(argv: list[str]) -> int:
    args = _parser().parse_args(argv)
    extra = _decider(args.profile)
    from ringfence.classifier import classify

    if args.json:
        if args.command is None:
            raise CheckUsageError("--json needs the command to check as an argument",
                                  hint="ringfence check --json 'ls | head'")
        sys.stdout.buffer.write(_encode(_dumps(_object(args.command, classify, extra)) + "\n"))
        sys.stdout.flush()
        return 0

    if args.command is not None:
        raise CheckUsageError("--jsonl reads commands from stdin and takes no COMMAND",
                              hint="echo '\"ls | head\"' | ringfence check --jsonl")
    out = sys.stdout.buffer

    def write(data: bytes) -> None:
        out.write(data)
        out.flush()

    try:
        fd = sys.stdin.fileno()
    except (AttributeError, OSError, ValueError):
        raise CheckUsageError("--jsonl needs a readable stdin") from None
    bad = run_jsonl(fd, write, classify, extra, jobs=args.jobs or default_jobs())
    if bad:
        print(f"ringfence check: {bad} bad input line(s); see the error objects",
              file=sys.stderr)
        return EXIT_USAGE
    return 0
