"""Fast path for `ringfence run` (stdlib + tree-sitter only; never typer/rich/lark).

The whole command (argument parsing, `--help`, profile resolution, host requests,
approvals and the ledger) lives in :func:`ringfence.governor.main_run`; this
module only keeps the hot path's import surface small.

Exit statuses (SPEC §4): the command's own status passes through; 125 when it
cannot run safely (nothing was run); 77 denied by the profile; 75 waiting for
approval; 124 wall-clock timeout; 128+N when ringfence received signal N.
"""

from __future__ import annotations


def main(argv: list[str]) -> int:
    from ringfence.governor import main_run

    return main_run(argv)
