"""Option scanning as getopt reads it, against an option spec (``optspec.Opts``):
which words are options, which option takes which value word, where the operands
start. Clusters (`-abc`, `-n5`), `--long=value`, unambiguous long prefixes and
``--`` are read the way GNU tools read them.
"""

from __future__ import annotations

from functools import lru_cache

from .ir import Word
from .optspec import Opts


def skip_options(words: tuple[Word, ...], i: int, spec: Opts,
                 attached_only: frozenset[str] = frozenset(), *,
                 longs: frozenset[str] = frozenset(),
                 values: list[tuple[str, Word | None]] | None = None,
                 unknown: list[Word] | None = None,
                 ) -> tuple[int, list[tuple[str, Word]]]:
    """Skip options starting at ``i``. Returns (index of first operand, [(option, word)]).

    Stops at ``--`` (consumed), at ``-`` and at the first non-option word. A
    dynamic word stops the scan: it might be an option or the program.
    ``longs``: the tool's long options, so unambiguous prefixes (`--out`) are
    read as getopt_long reads them. ``values``, when given, receives
    (option, value word or None) for each option that takes a value (a
    two-value option also gives (option + ":2", second value word)).
    ``unknown``, when given, receives each long option word that is not one of
    ``longs`` nor a unique prefix of one (getopt_long rejects it, or reads it
    some way this table does not know: callers fail closed).
    """
    seen: list[tuple[str, Word]] = []
    n = len(words)
    while i < n:
        w = words[i]
        v = w.value
        if not w.static or not v.startswith("-") or v == "-":
            break
        if v == "--":
            return min(i + 1, n), seen
        nxt = words[i + 1] if i + 1 < n else None
        if v.startswith("--"):
            name, eq, rest = v.partition("=")
            if longs:
                name = canonical_long(name, longs)
                if unknown is not None and name not in longs:
                    unknown.append(w)
            seen.append((name, w))
            if eq:
                if values is not None and name in spec.value:
                    values.append((name, _part(w, rest)))
                i += 1
            elif name in spec.value2:
                if values is not None:
                    values.append((name, nxt))
                    values.append((name + ":2", words[i + 2] if i + 2 < n else None))
                i += 3
            elif name in spec.value:
                if values is not None:
                    values.append((name, nxt))
                i += 2
            else:
                i += 1
            continue
        # short option cluster: -abc, -n5, -oL
        if v in spec.value and v not in attached_only:
            seen.append((v, w))
            if values is not None:
                values.append((v, nxt))
            i += 2
            continue
        consumed_next = False
        for k in range(1, len(v)):
            opt = "-" + v[k]
            seen.append((opt, w))
            if opt in spec.value:
                if k == len(v) - 1 and opt not in attached_only:
                    consumed_next = True
                if values is not None:
                    values.append((opt, nxt if consumed_next else
                                   _part(w, v[k + 1:]) if k + 1 < len(v) else None))
                break
        i += 2 if consumed_next else 1
    return min(i, n), seen


def _part(w: Word, text: str) -> Word:
    """The attached value of an option word (`-es/a/b/`, `--expression=s/a/b/`)."""
    return Word(text, text, w.span, w.dynamic, w.glob, w.quoted, w.subst)


def canonical_long(name: str, known: frozenset[str] | set[str]) -> str:
    """GNU getopt accepts unambiguous prefixes of long options (`--expr` = `--expression`)."""
    if name in known:
        return name
    hits = [k for k in known if k.startswith(name)]
    return hits[0] if len(hits) == 1 else name


@lru_cache(maxsize=256)
def _all_longs(spec: Opts, known_long: frozenset[str]) -> frozenset[str]:
    """The long options scan_args resolves prefixes against (specs are frozen and
    few, and frozensets cache their hashes, so this is one lookup per call)."""
    return known_long | {o for o in spec.value | spec.value2 if o.startswith("--")}


def scan_args(args: tuple[Word, ...], spec: Opts, known_long: frozenset[str] = frozenset()
              ) -> tuple[list[tuple[str, Word | None]], list[Word]]:
    """Permuting option scan, as GNU tools parse: options may follow operands.

    Returns ([(option, value word or None)], operands). A dynamic word is an
    operand (we cannot tell), which callers treat as unknown.
    """
    longs = _all_longs(spec, known_long)
    opts: list[tuple[str, Word | None]] = []
    operands: list[Word] = []
    i, n = 0, len(args)
    while i < n:
        w = args[i]
        v = w.value
        if not w.static or not v.startswith("-") or v == "-":
            operands.append(w)
            i += 1
            continue
        if v == "--":
            operands.extend(args[i + 1:])
            break
        nxt = args[i + 1] if i + 1 < n else None
        if v.startswith("--"):
            name, eq, rest = v.partition("=")
            name = canonical_long(name, longs)
            if eq:
                opts.append((name, _part(w, rest)))
                i += 1
            elif name in spec.value2:
                opts.append((name, nxt))
                i += 3
            elif name in spec.value:
                opts.append((name, nxt))
                i += 2
            else:
                opts.append((name, None))
                i += 1
            continue
        step = 1
        for k in range(1, len(v)):
            opt = "-" + v[k]
            if opt in spec.value:
                if k + 1 < len(v):
                    opts.append((opt, _part(w, v[k + 1:])))
                else:
                    opts.append((opt, nxt))
                    step = 2
                break
            opts.append((opt, None))
        i += step
    return opts, operands
