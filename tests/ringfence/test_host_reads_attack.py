"""Attacks on the host read-allow (issue 20b items 1, 3, 4): a reader allowed on the
host without asking must never run a program file, read outside the project, or
leave the directory it was asked in.

Every case goes through the real hook (``ringfence hook claude-code`` without
``--wrap``, where an ``allow`` makes Claude Code run the command on the machine).
When the hook answers allow, the test runs the command as Claude Code would and
asserts on the host: the marker a sed/awk program file would create never exists.
"""

from __future__ import annotations

import io
import json
import os
import subprocess
from pathlib import Path

import pytest

from ringfence.hooks import claude_code as cc


@pytest.fixture
def env(tmp_path):
    return {"RINGFENCE_HOME": str(tmp_path / "state"), "XDG_CONFIG_HOME": str(tmp_path / "cfg"),
            "HOME": str(tmp_path / "home"), "PATH": os.environ["PATH"]}


@pytest.fixture
def ws(tmp_path):
    """A project whose files an agent could have written: program files that would
    create ``MARK`` (outside the project) if they ever ran."""
    ws = tmp_path / "proj"
    ws.mkdir()
    (tmp_path / "home").mkdir()
    mark = tmp_path / "MARK"
    (ws / "README").write_text("hello\n")
    (ws / "s.sed").write_text(f"1e touch {mark}\n")
    (ws / "p.awk").write_text(f'BEGIN {{ system("touch {mark}") }}\n')
    (ws / "pats").write_text("hello\n")
    (ws / "magic").write_text("0 string hello HELLO\n")
    (tmp_path / "secret").write_text("SECRET\n")
    return ws


def decide(env, command, cwd, tid="toolu_1", mode="default"):
    p = {"session_id": "sess-A", "transcript_path": "/tmp/t.jsonl", "cwd": str(cwd),
         "permission_mode": mode, "hook_event_name": "PreToolUse", "tool_name": "Bash",
         "tool_input": {"command": command, "description": "d"}, "tool_use_id": tid}
    out = io.StringIO()
    assert cc.main([], stdin=io.BytesIO(json.dumps(p).encode()), stdout=out,
                   stderr=io.StringIO(), env=env) == 0
    return json.loads(out.getvalue())["hookSpecificOutput"]["permissionDecision"]


def as_claude_runs(env, command, cwd) -> str:
    """What the hook answers; on allow, run the command on the host as Claude Code does."""
    d = decide(env, command, cwd)
    if d == "allow":
        subprocess.run(["bash", "-c", command], cwd=cwd, capture_output=True, timeout=30,
                       env={"PATH": os.environ["PATH"], "HOME": env["HOME"]})
    return d


def test_the_plain_reads_are_still_allowed(env, ws):
    for cmd in ("sed -n 1p README", "grep -n hello README", "rg -n hello README",
                "file README", "tail -n 1 README", "grep -e hello -- README",
                "sed -n -e 1p README", "head -c 3 README"):
        assert decide(env, cmd, ws) == "allow", cmd


# Item 1: the program-file options, in every spelling getopt accepts.
PROGRAM_FILES = (
    "sed -n -fs.sed README", "sed -nfs.sed README", "sed -nf s.sed README",
    "sed -n -f s.sed README", "sed -n --file s.sed README", "sed -n --file=s.sed README",
    "sed -n --fil=s.sed README", "sed -n --fi s.sed README", "sed -n -s -f s.sed README",
    "sed -n -E -fs.sed README", "sed -n README -fs.sed", "sed -ns -fs.sed README",
    "grep -fpats README", "grep -f pats README", "grep --file=pats README",
    "grep --fil pats README", "grep -nfpats README", "grep -cfpats README",
    "rg -fpats README", "rg --file pats README", "rg -nfpats README",
    "file -mmagic README", "file -m magic README", "file --magic-file=magic README",
    "file --magic-f magic README",
    "rg -z hello README", "rg --search-zip hello README", "rg -nz hello README",
    "rg --search-z hello README", "rg --pre cat hello README", "rg --pre=cat hello README",
    "rg --pre-glob '*' hello README", "sed -n -i 1p README", "sed -ni 1p README",
)


@pytest.mark.parametrize("command", PROGRAM_FILES)
def test_a_program_file_option_is_never_allowed_on_the_host(env, ws, command):
    assert as_claude_runs(env, command, ws) != "allow"
    assert not (ws.parent / "MARK").exists()


def test_sed_script_file_that_executes_never_runs(env, ws):
    """The reported attack, asserted on the host."""
    for i, cmd in enumerate(("sed -n -fs.sed README", "sed -n --fil=s.sed README",
                             "sed -nfs.sed README")):
        assert as_claude_runs(env, cmd, ws) != "allow", cmd
    assert not (ws.parent / "MARK").exists()


# Item 4: inline sed r/R and option values that read outside the project.
@pytest.mark.parametrize("template", (
    "sed -n '1r {secret}' README", "sed -n -e '1r {secret}' README",
    "sed -n '1R {secret}' README", "sed -n '$r {secret}' README",
    "sed -n '1r ../secret' README", "sed -n -e p -e '1r ~/x' README",
    "sed -n '/hello/r {secret}' README", "sed -n '1{{r {secret}\n}}' README",
    "file -m{secret} README", "file --magic-file={secret} README",
    "grep -f{secret} README", "grep -f {secret} README", "grep --file={secret} README",
    "rg -f{secret} README", "rg --file={secret} README",
    "grep -nf{secret} README", "sed -n 1p -- {secret}", "tail -n1 {secret}",
))
def test_a_read_outside_the_project_is_never_allowed(env, ws, template):
    command = template.format(secret=ws.parent / "secret")
    assert decide(env, command, ws) != "allow", command


def test_sed_r_inside_the_project_is_a_project_read(env, ws):
    assert decide(env, "sed -n '1r pats' README", ws) == "allow"
    assert decide(env, "sed -n '1r ./pats' README", ws) == "allow"


@pytest.mark.parametrize("command", ("sed -n '1w ../w' README", "sed -n 1e\\ id README",
                                     "sed -n 's/a/b/e' README", "sed -n 's/a/b/w x' README"))
def test_sed_inline_write_or_exec_is_never_allowed(env, ws, command):
    assert as_claude_runs(env, command, ws) != "allow"
    assert not (ws.parent / "w").exists() and not (ws / "x").exists()


# Item 3: a directory change by argv after quote removal.
CD_ESCAPES = ('"cd" .. && cat secret', "\\cd .. && cat secret", "c'd' .. && cat secret",
              "\\pushd .. && cat secret", "cd .''. && cat secret", "cd .\\. && cat secret",
              'cd ."". && cat secret', "builtin cd .. && cat secret",
              "command cd .. && cat secret", 'cd "$OLDPWD" && cat secret',
              "cd -- .. && cat secret", "cd -P .. && cat secret", "cd - && cat secret",
              "popd && cat secret", "cd && cat secret", "cd ~ && cat secret",
              "pushd +1 && cat secret", "cd -L .. && cat secret")


@pytest.mark.parametrize("command", CD_ESCAPES)
def test_a_directory_change_by_any_spelling_is_never_a_project_read(env, ws, command):
    assert decide(env, command, ws) != "allow", command


# Found on the adversarial pass: a wrapper or launcher that moves the read, a
# decompressing `file -z`, and git's abbreviated `--output`.
@pytest.mark.parametrize("command", ("env -C .. cat secret", "env --chdir=.. cat secret",
                                     "env -iC.. cat secret", "echo ../secret | xargs cat",
                                     "file -z README", "file --uncompress README",
                                     "git log --outp=out", "git diff --ou=out"))
def test_a_wrapper_launcher_or_hidden_output_is_never_a_project_read(env, ws, command):
    subprocess.run(["git", "init", "-q", str(ws)], check=True)
    assert as_claude_runs(env, command, ws) != "allow", command
    assert not (ws / "out").exists()


def test_a_harmless_wrapper_still_reads_in_the_project(env, ws):
    assert decide(env, "timeout 5 cat README", ws) == "allow"
