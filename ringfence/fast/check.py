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
import json
import os
import sys

from rfcore.errors import EXIT_USAGE, ProfileError, UsageError

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


class CheckUsageError(UsageError):
    """Bad arguments or input to ``check``: exit 2, like argparse's own errors."""

    exit_code = EXIT_USAGE


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="ringfence check",
        description="Classify a bash -c string as helper / capability / one_time "
                    "and print the SPEC §2 JSON contract.",
        epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    mode = p.add_mutually_exclusive_group(required=True)
    mode.add_argument("--json", action="store_true",
                      help="print one JSON object for COMMAND")
    mode.add_argument("--jsonl", action="store_true",
                      help="read JSON strings from stdin, one per line; "
                           "write one object per line")
    p.add_argument("--profile", metavar="P",
                   help="also decide allow/ask/deny under profile P "
                        "(built-in name or TOML path)")
    p.add_argument("command", nargs="?", metavar="COMMAND",
                   help="the exact bash -c string (with --json)")
    return p


def _decider(profile_name: str | None):
    """Return ``verdict -> extra JSON fields`` for ``--profile``, or None."""
    if profile_name is None:
        return None
    try:
        from profiles.load import load_profile
        from ringfence.gate import decide
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


def _dumps(obj: dict) -> str:
    # ensure_ascii=False keeps the command readable; key order is the contract's
    # order because to_json builds the dict in that order.
    return json.dumps(obj, ensure_ascii=False)


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
    from classifier import classify

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


def run_jsonl(fd_in: int, write, classify, extra=None) -> int:
    """Stream JSONL from ``fd_in`` to ``write(bytes)``; return the number of bad lines."""
    bad = 0
    lineno = 0
    pending = b""
    while True:
        chunk = os.read(fd_in, _CHUNK)
        if chunk:
            lines = (pending + chunk).split(b"\n")
            pending = lines.pop()
        else:  # EOF: a final line without a newline still counts
            lines = [pending] if pending else []
        out = []
        for raw in lines:
            lineno += 1
            if raw.endswith(b"\r"):  # CRLF files: the CR is line ending, not content
                raw = raw[:-1]
            obj = line_result(raw, lineno, classify, extra)
            if "error" in obj:
                bad += 1
            out.append(_dumps(obj))
        if out:
            out.append("")
            write(_encode("\n".join(out)))
        if not chunk:
            return bad


def main(argv: list[str]) -> int:
    args = _parser().parse_args(argv)
    extra = _decider(args.profile)
    from classifier import classify

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
    bad = run_jsonl(fd, write, classify, extra)
    if bad:
        print(f"ringfence check: {bad} bad input line(s); see the error objects",
              file=sys.stderr)
        return EXIT_USAGE
    return 0
