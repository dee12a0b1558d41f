"""The human-facing CLI (typer + rich). Thin over the library API.

This is the one place where library errors become exit codes and messages.
Each command group lives in its own module and registers itself on ``app``.
"""

from __future__ import annotations

import os
import typer

from ringfence.rfcore.errors import RingfenceError

app = typer.Typer(
    name="ringfence",
    help="Preflight-check agent shell commands, run them in real sandboxes, "
         "and govern host access.\n\nExample: ringfence check 'git push 2>&1 | tail -5'",
    no_args_is_help=True,
    add_completion=True,   # `ringfence --install-completion` (README "Shell completion")
    rich_markup_mode="rich",
    context_settings={"help_option_names": ["-h", "--help"]},
)


def _show_version(value: bool) -> None:
    if value:
        from ringfence import __version__

        typer.echo(f"ringfence {__version__}")
        raise typer.Exit()


@app.callback()
def _root(version: bool = typer.Option(False, "--version", callback=_show_version,
                                       is_eager=True, help="Print the version and exit.")
          ) -> None:
    """Preflight-check agent shell commands, run them in real sandboxes, and govern
    host access.

    Example: ringfence check 'git push 2>&1 | tail -5'
    """


def _register() -> None:
    from . import approvals, check, hook, init, ledger, mcp, profile, run

    for module in (check, profile, run, approvals, ledger, hook, init, mcp):
        module.register(app)


def main(argv: list[str]) -> int:
    from .options import hide_flag_types

    hide_flag_types()
    _register()
    try:
        if os.environ.get("RINGFENCE_SESSION_TTL"):
            from ringfence.ledger.grants import session_ttl

            try:
                session_ttl()   # refused up front, exit 2 as any bad input (docs/exit-codes.md)
            except RingfenceError as exc:
                exc.exit_code = 2
                raise
        # standalone mode: typer reports usage errors itself (exit 2) and
        # raises SystemExit; our own errors propagate to the handlers below.
        app(args=argv, prog_name="ringfence", standalone_mode=True)
    except RingfenceError as exc:
        from .output import error

        error(str(exc))
        return exc.exit_code
    except KeyboardInterrupt:
        return 130
    except SystemExit as exc:  # typer/click exits for --help and usage errors
        return exc.code if isinstance(exc.code, int) else 0
    except Exception as exc:
        if os.environ.get("RINGFENCE_DEBUG"):
            raise
        from .output import error

        if type(exc).__module__ == "sqlite3":      # disk full, read-only, corrupt
            from ringfence.rfcore.errors import ledger_write_error

            err = ledger_write_error(exc)
            error(str(err))
            return err.exit_code

        error(f"internal error: {type(exc).__name__}: {exc} "
              "(set RINGFENCE_DEBUG=1 for a traceback; nothing was run)")
        return 125
    return 0
