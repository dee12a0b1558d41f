"""Entry point: dispatch per-command hot paths before importing typer or rich.

``hook``, ``run`` and ``check --json/--jsonl`` are called once per agent command,
so they are served by ``ringfence.fast`` (stdlib + tree-sitter only). Human
``check``/``explain`` go through the same dispatcher to ``ringfence.fast.human``
(rich, no typer). Everything else goes to the typer/rich CLI in ``ringfence.cli``.
"""

from __future__ import annotations

import sys


def _is_fast(argv: list[str]) -> bool:
    if not argv:
        return False
    if argv[0] in ("hook", "run"):
        return True
    if argv[0] == "check":
        return any(a in ("--json", "--jsonl") for a in argv[1:])
    return False


def _is_human_view(argv: list[str]) -> bool:
    """`check 'CMD'` / `explain 'CMD'` for people: rich, but no typer (``--help``
    stays with the typer CLI)."""
    return (bool(argv) and argv[0] in ("check", "explain")
            and not any(a in ("-h", "--help") for a in argv[1:]))


def main(argv: list[str] | None = None) -> None:
    argv = sys.argv[1:] if argv is None else list(argv)
    if _is_human_view(argv) and not _is_fast(argv):
        from ringfence.fast import main as fast_main

        sys.exit(fast_main(argv))
    if _is_fast(argv):
        from ringfence.fast import exit_now, main as fast_main

        code = fast_main(argv)
        if argv[0] == "run":
            exit_now(code)          # the run is recorded and its output written
        sys.exit(code)
    from ringfence.cli import main as cli_main

    sys.exit(cli_main(argv))


if __name__ == "__main__":
    main()
