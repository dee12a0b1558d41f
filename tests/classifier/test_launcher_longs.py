"""Long options of launchers and wrappers are read as getopt_long reads them: any
unique prefix is the option (`flock --time 1 FILE CMD`: --timeout takes `1`), and
a long option the row does not know is judged one time, never read as the program.

Each row's list is checked against the installed program's documentation, and the
prefix forms are run for real: the program they name really runs."""
from __future__ import annotations

import pytest

from ringfence.classifier import classify
from ringfence.classifier.data import BWRAP_LONGS, LONGS, WRAPPERS
from tests.classifier.test_effects_help import documentation
from tests.classifier.test_launchers import MARK, _runs

LONG_CASES = sorted((name, opt) for name, longs in LONGS.items() for opt in longs)


@pytest.mark.parametrize(("name", "option"), LONG_CASES, ids=[f"{n}:{o}" for n, o in LONG_CASES])
def test_listed_long_option_is_the_programs(name, option):
    text, skip = documentation(name)
    if skip:
        pytest.skip(skip)
    assert option in text, f"{name}: {option!r} not in its --help or man page"


def test_every_long_option_a_row_names_is_in_its_list():
    for name in LONGS:
        row = WRAPPERS.get(name)
        if row is None:
            continue
        named = set(row.opts.value) | row.opts.value2 | row.stop_opts | row.writes | \
            row.shell_opts | row.run_opts | row.env_opts | {o for o, _ in row.fact_opts}
        assert {o for o in named if o.startswith("--")} <= row.longs, name
    bw = WRAPPERS["bwrap"]
    assert {o for o in bw.opts.value | bw.opts.value2 if o.startswith("--")} <= BWRAP_LONGS


# (command, the key it must get): the prefix is the program's option, so the
# word after it is its value and the program is the one after that
PREFIXED = [
    ("flock --time 1 L " + MARK, "sh"),
    ("flock --ti=1 L " + MARK, "sh"),
    ("env --chd / " + MARK, "sh"),
    ("env --unse=X " + MARK, "sh"),
    ("xargs --proc V " + MARK + " </dev/null", "sh"),
    ("xargs --max-p 1 " + MARK + " </dev/null", "sh"),
    ("timeout --sig KILL 5 " + MARK, "sh"),
    ("nice --adj 1 " + MARK, "sh"),
    ("strace -qq -o /dev/null --seccomp-bpf -f " + MARK, "sh"),
    ("chrt --sched-runt 0 -o 0 " + MARK, "sh"),
]


@pytest.mark.parametrize(("cmd", "key"), PREFIXED, ids=[c for c, _ in PREFIXED])
def test_a_long_prefix_is_the_option_it_abbreviates(cmd, key, tmp_path):
    v = classify(cmd)
    assert list(v.keys) == [key] and v.verdict == "one_time" and "RF107" in v.codes, \
        (v.keys, v.codes)
    _runs(cmd, tmp_path, cmd)


def test_the_reviewed_slip_keys_the_real_inner_command():
    # flock --time 1 make touch x: flock locks `make` and runs `touch x`
    assert list(classify("flock --time 1 make touch x").keys) == ["touch"]


@pytest.mark.parametrize("cmd", [
    "env --bogus make", "flock --frob make ls", "xargs --zap make", "chrt --sched 5 1 make",
    "timeout --wat 5 make", "bwrap --overlay a b c make", "strace --no-such 1 make"])
def test_an_unknown_or_ambiguous_long_option_is_one_time(cmd):
    v = classify(cmd)
    assert v.verdict == "one_time" and "RF113" in v.codes, (v.keys, v.codes)
    assert "make" not in v.keys


@pytest.mark.parametrize("cmd", [
    "bwrap --setenv PATH /tmp make", "bwrap --setenv LD_PRELOAD /tmp/x.so make",
    "bwrap --bind /tmp/evil /usr/bin make", "bwrap --ro-bind /tmp/x /etc make",
    "bwrap --bind /tmp/x /work/make /work/make", 'bwrap --bind /tmp "$D" make'])
def test_bwrap_environment_and_places_over_programs_are_one_time(cmd):
    assert classify(cmd).verdict == "one_time", classify(cmd).codes


def test_bwrap_two_value_options_take_two_words():
    v = classify("bwrap --ro-bind / / --setenv FOO bar make -j2")
    assert list(v.keys) == ["make"] and v.verdict == "capability", (v.keys, v.codes)
