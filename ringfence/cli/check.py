"""CLI commands: check, explain, rule, rules.

``check --json`` / ``check --jsonl`` never reach this module from the console
script (``ringfence.__main__`` routes them to ``ringfence.fast.check`` before
typer loads); the options are declared here so that ``--help`` shows them, and
if typer is reached anyway they delegate to the same fast-path code.
"""

from __future__ import annotations

import json
from typing import Optional

import typer

from . import options

from ringfence.rfcore.errors import EXIT_USAGE, UsageError


class CliUsageError(UsageError):
    """Bad arguments to check/explain/rule/rules: exit 2."""

    exit_code = EXIT_USAGE


def _decision(verdict, profile: str | None) -> dict | None:
    if profile is None:
        return None
    from ringfence.fast.check import _decider

    return _decider(profile)(verdict)


def find_rule(code: str):
    """The registry rule for ``code`` (or its kebab-case name); CliUsageError if unknown."""
    import difflib

    from ringfence.rfcore.rules import REGISTRY

    wanted = code.strip()
    rule = REGISTRY.get(wanted.upper())
    if rule is None:
        rule = next((r for r in REGISTRY.values() if r.name == wanted.lower()), None)
    if rule is not None:
        return rule
    near = difflib.get_close_matches(wanted.upper(), list(REGISTRY), n=3) or \
        difflib.get_close_matches(wanted.lower(), [r.name for r in REGISTRY.values()], n=3)
    hint = f"did you mean {', '.join(near)}?" if near else "'ringfence rules' lists every code"
    raise CliUsageError(f"unknown rule code {wanted!r}", hint=hint)


def rule_json(rule) -> dict:
    return {"code": rule.code, "name": rule.name, "family": rule.family,
            "summary": rule.summary, "status": rule.status,
            "explanation": rule.explanation, "bad": rule.bad, "good": rule.good,
            "known_problems": rule.known_problems}


def register(app: typer.Typer) -> None:
    """Add this module's commands to the app."""

    @app.command()
    def check(
        command: Optional[str] = typer.Argument(
            None, help="The exact `bash -c` string (omit with --jsonl)."),
        json_: bool = options.json_flag("Print the verdict as one JSON object (the contract's "
                                        "fields; see docs/cli-check.md)."),
        jsonl: bool = typer.Option(
            False, "--jsonl",
            help="Read one JSON string per line on stdin; write one object per line."),
        profile: Optional[str] = options.profile(
            "Also decide allow/ask/deny under profile P (name or TOML path)."),
        jobs: Optional[str] = options.number_text(
            None, "--jobs",
            "--jsonl worker processes for large batches, 1 to 64 (default: usable CPUs, "
            "max 4)."),
    ) -> None:
        """Classify a command and print a readable verdict.

        Exit status: 0 when a verdict was produced (whatever its class), 2 for bad
        usage or input (with --jsonl: if any line was not a JSON string).

        Example: ringfence check 'longbridge news FIG.US 2>&1 | head -30'

        Example: ringfence check --json 'git push origin main'
        """
        if json_ or jsonl:
            from ringfence.fast import check as fast

            argv = (["--json"] if json_ else []) + (["--jsonl"] if jsonl else [])
            argv += ["--profile", profile] if profile else []
            argv += ["--jobs", jobs] if jobs is not None else []
            argv += ["--", command] if command is not None else []
            raise typer.Exit(fast.main(argv))
        if command is None:
            raise CliUsageError("missing the command to check",
                                hint="ringfence check 'ls | head'")
        from ringfence.classifier import classify
        from ringfence.views import render
        from ringfence.cli.output import console

        verdict = classify(command)
        console.print(render.verdict_view(verdict, _decision(verdict, profile)))

    @app.command()
    def explain(
        command: str = typer.Argument(..., help="The exact `bash -c` string."),
        profile: Optional[str] = options.profile("Also show the decision under profile P."),
    ) -> None:
        """Explain a verdict: highlighted spans, invocation tree, code explanations.

        Shows the command with each capability, decoration and finding span
        highlighted (and marked underneath), the tree of invocations, and the
        registry's explanation of every code.

        Example: ringfence explain 'cd src && git push 2>&1 | tail -5; echo "$(date)"'
        """
        from ringfence.classifier import classify
        from ringfence.views import render
        from ringfence.cli.output import console

        verdict = classify(command)
        console.print(render.explain_view(verdict, _decision(verdict, profile),
                                          width=console.width))

    @app.command()
    def rule(code: str = typer.Argument(..., help="A rule code such as RF101 (or its name).")
             ) -> None:
        """Print one rule's documentation: what it does, why it matters, examples.

        Example: ringfence rule RF101
        """
        from ringfence.views import render_rules
        from ringfence.cli.output import console

        console.print(render_rules.rule_view(find_rule(code)))

    @app.command()
    def rules(json_: bool = options.json_flag("Print a JSON array.")) -> None:
        """List every rule code with its name, family, summary and status.

        Example: ringfence rules --json | jq -r '.[].code'
        """
        from ringfence.rfcore.rules import REGISTRY

        if json_:
            import sys

            from ringfence.fast.check import _encode

            # Some examples are deliberately not UTF-8 (surrogate escapes); they
            # are written as JSON \udcXX escapes rather than crashing the encoder.
            body = json.dumps([rule_json(r) for r in REGISTRY.values()],
                              ensure_ascii=False, indent=2)
            sys.stdout.buffer.write(_encode(body + "\n"))
            sys.stdout.flush()
            return
        from ringfence.views import render_rules
        from ringfence.cli.output import console

        console.print(render_rules.rules_table(REGISTRY.values()))
