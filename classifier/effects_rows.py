"""The row types of the option-effects table (effects_data.py and its family
modules effects_git.py, effects_code.py), in a leaf module so that each table
module can import them without importing the others."""

from __future__ import annotations

from typing import NamedTuple


class Row(NamedTuple):
    options: frozenset[str]
    kind: str            # 'write' | 'delete' | 'run'
    target: str          # 'value' | 'input' (a value read: `-` is stdin) | 'self' |
    #                      'operands' | 'operand1' | 'prefix:...'
    why: str


class Tool(NamedTuple):
    source: str                                  # where the facts come from
    rows: tuple[Row, ...]
    value: frozenset[str] = frozenset()          # options that take a value
    longs: frozenset[str] = frozenset()          # long options, for unique-prefix reading
    style: str = "getopt"
    stop: frozenset[str] = frozenset({"--help", "--version"})   # prints and exits
    # Options are read until this many operands were seen (-1: everywhere, as GNU
    # getopt permutes). ssh re-reads options after the destination, then the rest
    # is the remote command (`ssh host grep -E x` is not ssh -E); scp and sftp stop
    # at the first operand (OpenSSH's BSD getopt).
    options_until: int = -1


def _r(options: str, kind: str, target: str, why: str) -> Row:
    return Row(frozenset(options.split()), kind, target, why)


def _s(text: str) -> frozenset[str]:
    return frozenset(text.split())
