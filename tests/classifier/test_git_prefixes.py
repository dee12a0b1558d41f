"""git's parse-options takes a unique prefix of a long option and clusters short
ones: `git rebase --exe CMD` and `git rebase -ix CMD` run CMD like `--exec`. And
`git config` writing a key that can run a program (or an unknown one) is one
time: it writes the host's configuration. The prefix forms are run for real."""
from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from ringfence.classifier import classify

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")


def _repo(tmp: Path) -> dict:
    env = dict(os.environ, GIT_CONFIG_GLOBAL="/dev/null", GIT_CONFIG_NOSYSTEM="1",
               GIT_AUTHOR_NAME="t", GIT_AUTHOR_EMAIL="t@t", GIT_COMMITTER_NAME="t",
               GIT_COMMITTER_EMAIL="t@t", GIT_SEQUENCE_EDITOR="true", GIT_EDITOR="true")
    for argv in (["git", "init", "-q", "r"], ["git", "-C", "r", "commit", "-q",
                                              "--allow-empty", "-m", "a"],
                 ["git", "-C", "r", "commit", "-q", "--allow-empty", "-m", "b"]):
        subprocess.run(argv, cwd=tmp, env=env, check=True, capture_output=True)
    return env


RUNS = [
    "git rebase --exe 'touch ../M' HEAD~1",
    "git rebase -ix 'touch ../M' HEAD~1",
    "git rebase --exec='touch ../M' HEAD~1",
]


@pytest.mark.parametrize("cmd", RUNS)
def test_git_option_prefix_or_cluster_runs_and_is_one_time(cmd, tmp_path):
    v = classify(cmd)
    assert v.verdict == "one_time" and "RF109" in v.codes, v.codes
    env = _repo(tmp_path)
    subprocess.run(["bash", "-c", cmd], cwd=tmp_path / "r", env=env, capture_output=True,
                   timeout=60, stdin=subprocess.DEVNULL)
    assert (tmp_path / "M").exists(), "git did not run the command: the case proves nothing"


@pytest.mark.parametrize("cmd", [
    "git fetch --upl 'sh -c id' origin", "git clone --upl x r", "git clone --conf a.b=c r",
    "git push --receive=x o", "git push --rec x o", "git ls-remote --upl x o",
    "git difftool -yx 'touch M'", "git difftool --extc=x", "git clone --temp=/tmp/t r"])
def test_git_exec_option_prefixes_are_one_time(cmd):
    v = classify(cmd)
    assert v.verdict == "one_time" and "RF109" in v.codes, v.codes


@pytest.mark.parametrize("key", [
    "difftool.a.cmd", "mergetool.a.cmd", "man.a.cmd", "interactive.diffFilter",
    "hook.a.command", "submodule.a.update", "init.templateDir", "core.worktree",
    "protocol.ext.allow", "url.x.insteadOf", "some.unknown.key"])
def test_git_config_write_of_a_running_key_is_one_time(key):
    for cmd in (f"git config {key} '!touch M'", f"git config --global {key} x",
                f"git config set {key} x", f"git config -f .git/config {key} x",
                f"git config --add {key} x"):
        v = classify(cmd)
        assert v.verdict == "one_time" and "RF109" in v.codes, (cmd, v.codes)


@pytest.mark.parametrize("cmd", [
    "git config user.name bot", "git config pull.rebase true", "git config --get core.pager",
    "git config core.pager", "git config --list", "git config get core.pager",
    "git rebase -i main", "git rebase -Xtheirs main", "git push origin main"])
def test_reads_and_harmless_writes_stay_capability(cmd):
    assert classify(cmd).verdict == "capability", classify(cmd).codes

