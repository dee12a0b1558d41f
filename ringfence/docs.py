"""Generate the README rules table from the one rule registry.

    python -m ringfence.docs --check   # exit 1 if README.md's table is stale
    python -m ringfence.docs --write   # rewrite the table in place

Only the text between the two markers below is ever touched, so the rest of the
README stays hand-written. tests/test_readme.py runs the same comparison, so a
rule added without regenerating the table fails the suite.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterable
from pathlib import Path

from ringfence.rfcore.rules import REGISTRY, Rule

START = "<!-- rules-table:start -->"
END = "<!-- rules-table:end -->"
README = Path(__file__).resolve().parents[1] / "README.md"


def _cell(text: str) -> str:
    # A table cell is one line, and a bare | would split it.
    return " ".join(text.split()).replace("|", "\\|")


def rules_table(rules: Iterable[Rule] | None = None) -> str:
    """The markdown table (code, name, family, summary, status), one row per rule."""
    rules = REGISTRY.values() if rules is None else rules
    lines = ["| Code | Name | Family | Summary | Status |",
             "|---|---|---|---|---|"]
    for r in rules:
        lines.append(f"| `{r.code}` | {_cell(r.name)} | {_cell(r.family)} | "
                     f"{_cell(r.summary)} | {r.status} |")
    if len(lines) == 2:
        lines.append("| | | | *(no rules registered yet)* | |")
    return "\n".join(lines)


def split_readme(text: str) -> tuple[str, str, str]:
    """``(before, table, after)`` around the markers; ValueError if they are missing."""
    start, end = text.find(START), text.find(END)
    if start < 0 or end < 0 or end < start:
        raise ValueError(f"README.md must contain {START} followed by {END}")
    start += len(START)
    return text[:start], text[start:end], text[end:]


def render_readme(text: str, table: str | None = None) -> str:
    """``text`` with the generated table between the markers."""
    before, _, after = split_readme(text)
    return f"{before}\n{rules_table() if table is None else table}\n{after}"


def is_stale(text: str) -> bool:
    return render_readme(text) != text


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(
        prog="python -m ringfence.docs",
        description="Check or rewrite the README rules table generated from the registry.",
        epilog="example: python -m ringfence.docs --check")
    mode = p.add_mutually_exclusive_group(required=True)
    mode.add_argument("--check", action="store_true", help="exit 1 if the table is stale")
    mode.add_argument("--write", action="store_true", help="rewrite the table in README.md")
    mode.add_argument("--print", action="store_true", help="print the table")
    p.add_argument("--readme", type=Path, default=README, help="README to check or write")
    args = p.parse_args(argv)
    if args.print:
        print(rules_table())
        return 0
    try:
        text = args.readme.read_text(encoding="utf-8")
        fresh = render_readme(text)
    except (OSError, ValueError) as exc:
        print(f"ringfence.docs: {exc}", file=sys.stderr)
        return 2
    if args.check:
        if fresh != text:
            print(f"ringfence.docs: the rules table in {args.readme} is stale; "
                  "run: python -m ringfence.docs --write", file=sys.stderr)
            return 1
        return 0
    if fresh != text:
        args.readme.write_text(fresh, encoding="utf-8")
        print(f"ringfence.docs: rewrote the rules table in {args.readme}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
