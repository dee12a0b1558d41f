"""An option's value attached to it (`-S/path`, `-TT'cmd'`, `-P'cmd'`, `-nf -`,
`--fil=-`, `-K-`) is read as getopt reads it, and options read from the
environment (ZIPOPT, RIPGREP_CONFIG_PATH, GNUMAKEFLAGS, VALGRIND_OPTS) are exec
variables. Installed programs are run for real: the marker file appears."""
from __future__ import annotations

import pytest

from ringfence.classifier import classify
from tests.classifier.test_launchers import _runs

# (command, code, the program it needs): each really runs `touch M` (or writes M)
REAL = [
    ("zip -q -T -TT'touch M #' a.zip /etc/hostname", "RF113", "zip"),
    ("echo '1e touch M' | sed -nf - /etc/hostname", "RF116", "sed"),
    ("echo '1e touch M' | sed --fil=- /etc/hostname", "RF116", "sed"),
    ("awk -W interactive 'BEGIN{system(\"touch M\")}'", "RF110", "mawk"),
    ("echo 'output = \"M\"' | curl -sK- file:///etc/hostname", "RF131", "curl"),
    ("echo 'output = \"M\"' | curl -s -K - file:///etc/hostname", "RF131", "curl"),
    ("printf '#!/bin/sh\\ntouch M\\n' > t; chmod +x t; ZIPOPT='-TT ./t' zip -q -T a.zip "
     "/etc/hostname", "RF122", "zip"),
    ("printf -- '--pre=./p\\n' > c; printf '#!/bin/sh\\ntouch M\\n' > p; chmod +x p; "
     "RIPGREP_CONFIG_PATH=c rg -q x /etc/hostname", "RF122", "rg"),
    ("GNUMAKEFLAGS='--eval=x:=$(shell touch M)' make -f /dev/null 2>/dev/null", "RF122", "make"),
]


@pytest.mark.parametrize(("cmd", "code", "needs"), REAL, ids=[c for c, _, _ in REAL])
def test_attached_value_or_option_variable_runs_and_is_one_time(cmd, code, needs, tmp_path):
    v = classify(cmd)
    assert v.verdict == "one_time" and code in v.codes, v.codes
    _runs(cmd + "; test -e M && echo ran > M", tmp_path, needs)


@pytest.mark.parametrize("cmd", [
    "scp -S/tmp/x a b:", "man -P'sh -c id' ls", "scp -oProxyCommand=x a b:", "man -Hfirefox ls",
    "VALGRIND_OPTS=--log-file=x valgrind ls", "sed -n -f /dev/stdin f"])
def test_attached_forms_without_a_real_run_are_one_time(cmd):
    assert classify(cmd).verdict == "one_time", classify(cmd).codes


@pytest.mark.parametrize("cmd", [
    "scp -P2222 a b:", "scp -oPort=2 a b:", "sed -n p f", "awk -W interactive '{print}' f",
    "curl -o - https://example.com", "zip -q a.zip f"])
def test_harmless_attached_forms_stay_capability(cmd):
    assert classify(cmd).verdict == "capability", classify(cmd).codes
