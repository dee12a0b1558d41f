"""README.md stays true to the code: the rules table and the command list.

The rules table is generated from the registry (``python -m ringfence.docs
--write``); a stale table fails here. Command documentation is enforced for the
commands listed in ``DOCUMENTED_COMMANDS``: every registered command.
"""

from __future__ import annotations

import re

import pytest

from ringfence import docs
from tests.conftest import ROOT

README = ROOT / "README.md"

# Top-level CLI commands whose documentation in README.md is enforced: each must
# appear as "ringfence NAME" in the README. Extend this as the README is filled;
# set it to ALL to require every command registered in the typer app.
ALL = object()
DOCUMENTED_COMMANDS: tuple[str, ...] | object = ALL


def registered_commands() -> set[str]:
    """Names of every top-level command and command group in the typer app."""
    import typer.main

    from ringfence import cli

    cli._register()
    return set(typer.main.get_command(cli.app).commands)


def test_rules_table_is_not_stale():
    text = README.read_text(encoding="utf-8")
    assert not docs.is_stale(text), \
        "README rules table is stale: run .venv/bin/python -m ringfence.docs --write"


def test_rules_table_has_one_row_per_registered_rule():
    from ringfence.rfcore.rules import REGISTRY

    _, table, _ = docs.split_readme(README.read_text(encoding="utf-8"))
    codes = re.findall(r"^\| `(RF\d{3})` \|", table, flags=re.M)
    assert codes == list(REGISTRY)


def test_generated_table_escapes_pipes_and_newlines():
    from ringfence.rfcore.rules import Rule

    table = docs.rules_table([Rule("RF399", "x-y", "a | b\nc", "e", "b", "g")])
    assert table.splitlines()[2] == "| `RF399` | x-y | decoration | a \\| b c | active |"


def test_docs_check_mode_detects_a_stale_table(tmp_path):
    stale = tmp_path / "README.md"
    stale.write_text(f"# x\n{docs.START}\n| old |\n{docs.END}\n", encoding="utf-8")
    assert docs.main(["--check", "--readme", str(stale)]) == 1
    assert docs.main(["--write", "--readme", str(stale)]) == 0
    assert docs.main(["--check", "--readme", str(stale)]) == 0
    assert docs.rules_table() in stale.read_text(encoding="utf-8")
    missing = tmp_path / "NOMARKERS.md"
    missing.write_text("# no markers\n", encoding="utf-8")
    assert docs.main(["--check", "--readme", str(missing)]) == 2


def test_enforced_commands_exist():
    """The enforcement list never names a command that does not exist, and the
    command set it enforces is the real one (not empty by accident)."""
    registered = registered_commands()
    assert {"check", "explain", "run", "hook", "approve", "ledger", "profile"} <= registered
    if DOCUMENTED_COMMANDS is not ALL:
        assert set(DOCUMENTED_COMMANDS) <= registered


def test_commands_are_documented_in_readme():
    text = README.read_text(encoding="utf-8")
    names = registered_commands() if DOCUMENTED_COMMANDS is ALL else set(DOCUMENTED_COMMANDS)
    missing = sorted(n for n in names if not re.search(rf"\bringfence {re.escape(n)}\b", text))
    assert missing == [], f"commands not documented in README.md: {missing}"
