"""rfcore.gitkeys: the one table of git config keys that can run programs."""

import pytest

from ringfence.staging.git.keys import key_can_run_program, split_key


@pytest.mark.parametrize("key,value", [
    ("user.email", "a@b"), ("User.Name", "x"), ("color.ui", "auto"), ("color.diff.meta", "red"),
    ("core.repositoryformatversion", "0"), ("core.bare", "false"), ("init.defaultBranch", "main"),
    ("branch.Main.remote", "origin"), ("branch.feature/x.merge", "refs/heads/x"),
    ("remote.origin.url", "https://example.com/r.git"), ("remote.origin.fetch", "+refs/*"),
    ("commit.gpgsign", "false"),
])
def test_harmless_keys(key, value):
    assert key_can_run_program(key, value) is False


@pytest.mark.parametrize("key,value", [
    ("core.pager", "less"), ("core.editor", "vim"), ("core.sshCommand", "ssh"),
    ("core.fsmonitor", "true"), ("core.hooksPath", ".githooks"), ("core.worktree", "/"),
    ("alias.st", "!sh"), ("pager.log", "x"), ("filter.lfs.smudge", "x"),
    ("diff.pdf.textconv", "x"), ("merge.ours.driver", "x"), ("credential.helper", "x"),
    ("gpg.program", "x"), ("include.path", "x"), ("includeIf.gitdir:x.path", "y"),
    ("remote.origin.receivepack", "x"), ("remote.origin.url", "ext::sh -c id"),
    ("remote.origin.url", None), ("submodule.a.update", "!id"), ("sequence.editor", "x"),
    ("protocol.ext.allow", "always"), ("commit.gpgsign", "true"), ("no.such.key", "1"),
    ("nodot", "1"), ("", ""), ("branch.main.unknown", "1"),
])
def test_keys_that_can_run_programs(key, value):
    assert key_can_run_program(key, value) is True


def test_split_key_follows_git_case_rules():
    assert split_key("Branch.Main.Remote") == ("branch", "Main", "remote")
    assert split_key("user.name") == ("user", None, "name")
