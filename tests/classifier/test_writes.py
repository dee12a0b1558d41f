"""Filter options and scripts that write files (RF130) or run programs (RF113):
one-time wherever they stand, and never stripped as decoration (RF305)."""

from __future__ import annotations

import pytest

from ringfence.classifier import classify
from ringfence.classifier.analysis import analyze
from ringfence.classifier.parse import parse
from ringfence.classifier.writes import file_writes


def _stage_decorated(v, stage_text: str) -> bool:
    """Is some RF305 decoration covering this stage's text?"""
    return any(d.code == "RF305" and stage_text in d.text for d in v.decorations)


# (command, the stage that writes or executes, the code that must fire)
WRITING_STAGES = [
    ("longbridge x | sort -o f", "sort -o f", "RF130"),
    ("longbridge x | sort -uof", "sort -uof", "RF130"),
    ("longbridge x | sort --out=f", "sort --out=f", "RF130"),
    ("longbridge x | sed 'w f'", "sed 'w f'", "RF130"),
    ("longbridge x | sed -n 's/a/b/w f'", "sed -n 's/a/b/w f'", "RF130"),
    ("longbridge x | sed -e p -e 'W f'", "sed -e p -e 'W f'", "RF130"),
    ("longbridge x | awk '{print > \"f\"}'", "awk '{print > \"f\"}'", "RF130"),
    ("longbridge x | awk '{print >> \"f\"}'", "awk '{print >> \"f\"}'", "RF130"),
    ("longbridge x | uniq - out", "uniq - out", "RF130"),
    ("longbridge x | tee f", "tee f", "RF130"),
    ("longbridge x | tee /dev/null f", "tee /dev/null f", "RF130"),
    ("longbridge x | base64 -o f", "base64 -o f", "RF130"),
    ("longbridge x | split -l 5", "split -l 5", "RF130"),
    ("longbridge x | sort --compress-program=sh", "sort --compress-program=sh", "RF113"),
    ("longbridge x | sort --compress-program sh", "sort --compress-program sh", "RF113"),
    ("longbridge x | sort --compress=sh", "sort --compress=sh", "RF113"),
    ("longbridge x | nl | sort --compress-prog=sh", "sort --compress-prog=sh", "RF113"),
    ("longbridge x | awk '{print | \"sh\"}'", "awk '{print | \"sh\"}'", "RF110"),
    ("longbridge x | awk '{\"id\" | getline}'", "awk '{\"id\" | getline}'", "RF110"),
    ("longbridge x | sed 's/.*/id/e'", "sed 's/.*/id/e'", "RF111"),
]


@pytest.mark.parametrize("command,stage,code", WRITING_STAGES, ids=[c for c, _, _ in WRITING_STAGES])
def test_writing_or_executing_stage_is_one_time_and_never_decoration(command, stage, code):
    v = classify(command)
    assert v.verdict == "one_time"
    assert code in v.codes
    program = stage.split()[0]
    assert program in v.keys                     # still named as a capability
    assert not _stage_decorated(v, stage)


@pytest.mark.parametrize("command,code", [
    ("sort --compress-program=sh big.txt", "RF113"),
    ("sort -o sorted.txt in.txt", "RF130"),
    ("uniq in.txt out.txt", "RF130"),
    ("tee notes.txt", "RF130"),
    ("sed 'w out' in.txt", "RF130"),
    ("awk '{printf \"x\" > \"f\"}' in.txt", "RF130"),
    ("csplit log.txt 3", "RF130"),
    ("timeout 5 sort -o f in.txt", "RF130"),          # through a wrapper
    ("xargs tee log.txt", "RF130"),                   # launched
])
def test_first_stage_writes_and_execs_are_one_time(command, code):
    v = classify(command)
    assert v.verdict == "one_time"
    assert [f.code for f in v.findings if f.code in ("RF113", "RF130")] == [code]


@pytest.mark.parametrize("command,keys,decorated", [
    ("longbridge x | sort -o /dev/stdout", ["longbridge", "sort"], False),   # sort denies -o
    ("longbridge x | tee /dev/stderr", ["longbridge"], True),
    ("longbridge x | uniq -c", ["longbridge"], True),
    ("longbridge x | awk '{print > \"/dev/stderr\"}'", ["longbridge", "awk"], False),
    ("longbridge x | sed 's/a/b/w /dev/stdout'", ["longbridge", "sed"], False),
    ("uniq in.txt -", ["uniq"], False),
    ("sort -o /dev/null in.txt", ["sort"], False),
    ("longbridge x | sort --c=sh", ["longbridge", "sort"], False),   # ambiguous: sort refuses
    ("split --version", ["split"], False),
])
def test_harmless_targets_are_not_writes(command, keys, decorated):
    v = classify(command)
    assert v.verdict == "capability"
    assert list(v.keys) == keys
    assert not {"RF113", "RF130"} & set(v.codes)
    assert any(d.code == "RF305" for d in v.decorations) is decorated


def _writes(command: str) -> list[tuple[str, str]]:
    script = parse(command)
    out = []
    for inv in analyze(script):
        for span, message in file_writes(inv):
            out.append((script.source[span[0]:span[1]], message))
    return out


def test_file_writes_points_at_the_target():
    assert _writes("sort -o out.txt in.txt") == [("out.txt", "`sort -o` writes the file `out.txt`")]
    assert _writes("sort --out=o in") == [("--out=o", "`sort --output` writes the file `o`")]
    assert _writes("uniq a b") == [("b", "`uniq` writes its output to the file `b`")]
    assert _writes("tee -a x /dev/null y") == [("x", "`tee` writes the file `x`"),
                                               ("y", "`tee` writes the file `y`")]
    assert _writes("sed -n 'w out' f") == [("'w out'", "the sed script writes the file `out`")]
    assert _writes("awk '{print > \"o\"}' f") == [
        ("'{print > \"o\"}'", "the awk program writes the file `o`")]
    assert _writes("split big part_") == [
        ("split big part_", "`split` writes its input into new files (xaa, xab, ... or "
                            "PREFIXaa, ...)")]


def test_file_writes_ignores_process_substitution_and_help():
    assert _writes("tee >(wc -l)") == []
    assert _writes("split --help") == []
    assert _writes("split --filter='gzip > $FILE.gz' big") == []    # RF113 reports it
    assert _writes("sort in.txt") == []


def test_dynamic_target_is_a_write():
    assert _writes('tee "$LOG"') == [('"$LOG"', '`tee` writes the file `"$LOG"`')]
    assert [m for _, m in _writes("sort -o $out in")] == ["`sort -o` writes the file `$out`"]
