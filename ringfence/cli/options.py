"""The options several commands share, spelled once (issue 14 §3).

Every command that takes a profile takes ``-p/--profile``; every command that
takes a workspace takes ``-w/--workspace``; ``--json`` and ``--session`` are
spelled the same everywhere. `run` (ringfence.fast.run) and `check --json`
(ringfence.fast.check) parse by hand/argparse on the hot path and accept the
same spellings; tests/ringfence/test_cli_options.py compares them all.
"""

from __future__ import annotations

from typing import Optional

import typer

PROFILE = ("-p", "--profile")
WORKSPACE = ("-w", "--workspace")


def profile(help: str = "Profile P: a built-in name or a TOML path."):
    return typer.Option(None, *PROFILE, metavar="P", help=help)


def workspace(help: str = "Workspace directory (default: the current directory)."):
    return typer.Option(None, *WORKSPACE, metavar="DIR", help=help)


def json_flag(help: str = "Print JSON."):
    return typer.Option(False, "--json", help=help)


def session(help: str):
    return typer.Option(None, "--session", metavar="S", help=help)


def number_text(default: Optional[str], name: str, help: str, metavar: str = "N"):
    """A numeric option read as text, so that ringfence.fast.numbers validates it."""
    return typer.Option(default, name, metavar=metavar, help=help, show_default=default is not None)


def hide_flag_types() -> None:
    """Flags take no value, so their help row shows no type (typer prints ``<bool>``)."""
    from typer.core import TyperOption

    if getattr(TyperOption, "_ringfence_no_bool", False):
        return
    original = TyperOption.display_type_rich

    def display_type_rich(self, ctx):
        if getattr(self, "is_flag", False) and self.metavar is None:
            return None
        return original(self, ctx)

    TyperOption.display_type_rich = display_type_rich
    TyperOption._ringfence_no_bool = True
