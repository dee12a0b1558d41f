"""Option specs shared by the classifier's tables: which options take a value.

``value`` options consume a value (the next word, or the rest of a short-option
cluster, or text after ``=``); every other option is a flag.
"""

from typing import NamedTuple


class Opts(NamedTuple):
    value: frozenset[str] = frozenset()       # '-n', '--lines' (take one value)
    value2: frozenset[str] = frozenset()      # options that take two values (jq --arg)


def opts(*value: str, value2: tuple[str, ...] = ()) -> Opts:
    return Opts(frozenset(value), frozenset(value2))
