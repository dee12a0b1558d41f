"""`ringfence check 'CMD'` and `ringfence explain 'CMD'` for people, without typer.

The rendering is the same rich views the typer CLI uses (`ringfence.views.render`);
only the argument handling skips typer, whose import (it pulls in pydantic) alone
costs several times Python's own start-up. `--help` is still served by the typer
CLI, so both paths document the same options.
"""

from __future__ import annotations

import argparse

from ringfence.fast.check import CheckUsageError, _decider

HINTS = {"check": "ringfence check 'ls | head'", "explain": "ringfence explain 'ls | head'"}


class _Parser(argparse.ArgumentParser):
    def error(self, message: str):
        raise CheckUsageError(message, hint=f"{self.prog} --help")


def main(name: str, argv: list[str]) -> int:
    parser = _Parser(prog=f"ringfence {name}", add_help=False)
    parser.add_argument("command", nargs="?")
    parser.add_argument("-p", "--profile")
    if name == "explain" and any(a in ("--json", "--jsonl") for a in argv):
        raise CheckUsageError("explain is for people and has no --json/--jsonl",
                              hint="ringfence check --json 'CMD' prints the verdict as JSON")
    args = parser.parse_args(argv)
    if args.command is None:
        raise CheckUsageError(f"missing the command to {name}", hint=HINTS[name])
    from rich.console import Console   # not ringfence.cli.output: that package loads typer

    from ringfence.classifier import classify
    from ringfence.views import render

    console = Console()

    verdict = classify(args.command)
    decision = _decider(args.profile)(verdict) if args.profile else None
    if name == "check":
        console.print(render.verdict_view(verdict, decision))
    else:
        console.print(render.explain_view(verdict, decision, width=console.width))
    return 0
