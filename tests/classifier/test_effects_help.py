"""Every option in the option-effects table (classifier/effects_data.py) exists in
the installed tool's own documentation: its `--help` / `-h` output or its man
page. A tool that is not installed is skipped, per tool, with the reason.

This keeps the table honest: a misspelt option would never match anything, and
the command it was meant to catch would pass as the plain key.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess

import pytest

from ringfence.classifier.effects_data import MODULE_TOOLS, TOOLS

# Where a row's facts are documented, when not under the tool's own name.
COMMAND = {"nc": "nc.traditional"}     # netcat-openbsd has no -e/-c: the row is traditional's
# git whatchanged takes git log's options (git-whatchanged(1)).
GIT_DOC = {"whatchanged": "log"}
# Rows for versions other than the one installed: skipped with the reason when
# the installed tool does not document them (and checked when it does).
ELSEWHERE = {("rg", "--hostname-bin"): "ripgrep 14 added --hostname-bin (Debian 12 has 13)",
             ("yq", "--inplace"): "--inplace is mikefarah yq's spelling; Debian's yq "
                                  "(kislyuk) spells it --in-place",
             **{("sqlite3", o): "sqlite3's shell.c reads every option with one dash or two, "
                               "and -archive as -A; its --help lists one spelling"
                for o in ("--cmd", "--init", "--archive", "-archive")},
             ("pytest", "--junitxml"): "pytest --help lists --junit-xml; --junitxml is the "
                                       "same option (_pytest/junitxml.py)"}
# Tools that document their options per subcommand: these outputs join the text.
EXTRA_DOC = {"openssl": [["openssl", "req", "-help"]]}
NON_OPTION_WORDS = {"xxd": ["outfile"], "dd": ["of="], "socat": ["exec:", "system:", "create:",
                                                                 "open:", "gopen:"]}


def _run(argv: list[str]) -> str:
    try:
        r = subprocess.run(argv, capture_output=True, timeout=30, stdin=subprocess.DEVNULL,
                           env=dict(os.environ, MANWIDTH="200", LC_ALL="C", PAGER="cat",
                                    MANPAGER="cat", GIT_PAGER="cat"))
    except (OSError, subprocess.TimeoutExpired):
        return ""
    return (r.stdout + r.stderr).decode("utf-8", "replace")


def documentation(key: str) -> tuple[str, str | None]:
    """(text, skip reason) for a table key such as 'curl' or 'git log'."""
    words = key.split()
    if words[:2] == ["python3", "-m"]:            # MODULE_TOOLS: python -m cProfile ...
        text = _run(["python3", "-m", words[2], "--help"])
        return text, None if text.strip() else f"python3 -m {words[2]} --help printed nothing"
    prog = COMMAND.get(words[0], words[0])
    if shutil.which(prog) is None:
        return "", f"{prog} is not installed"
    if len(words) == 2:
        sub = words[1]
        sub = GIT_DOC.get(sub, sub)
        text = _run(["git", sub, "-h"])
        if "is not a git command" in text:
            return "", f"git {sub} is not installed (Debian: git-email)"
        text += _run(["man", "-P", "cat", f"git-{sub}"])
    else:
        text = _run([prog, "--help"]) + _run([prog, "-h"]) + _run(["man", "-P", "cat", prog])
        text += "".join(_run(argv) for argv in EXTRA_DOC.get(prog, ()))
    # man renders bold/underline with backspaces and hyphens as U+2010 sometimes
    text = re.sub(".\b", "", text).replace("\u2010", "-").replace("\u2212", "-")
    return text, None


CASES = [(key, opt) for key, tool in TOOLS.items() for row in tool.rows
         for opt in sorted(row.options)] + \
        [(key, word) for key, words in NON_OPTION_WORDS.items() for word in words] + \
        [(f"python3 -m {mod}", opt) for mod, tool in MODULE_TOOLS.items() for row in tool.rows
         for opt in sorted(row.options)]


@pytest.mark.parametrize(("key", "option"), CASES, ids=[f"{k}:{o}" for k, o in CASES])
def test_listed_option_is_in_the_tools_documentation(key, option):
    text, skip = documentation(key)
    if skip:
        pytest.skip(skip)
    if option.endswith((":", "=")) or option == "outfile":
        assert option.lower() in text.lower(), f"{key}: {option!r} not in its --help or man page"
        return
    pattern = r"(?<![\w-])" + re.escape(option) + r"(?![\w-])"
    if not re.search(pattern, text) and (key, option) in ELSEWHERE:
        pytest.skip(ELSEWHERE[key, option])
    assert re.search(pattern, text), f"{key}: {option!r} not in its --help or man page"


def test_every_table_entry_names_its_source():
    for key, tool in {**TOOLS, **MODULE_TOOLS}.items():
        assert tool.source.strip(), key
        assert all(row.why for row in tool.rows), key
