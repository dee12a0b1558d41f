"""The host-obeyed registry and its content judges (no sandbox needed)."""

from __future__ import annotations

import pytest

from ringfence.staging.git.config import ConfigSyntaxError, added, parse
from ringfence.staging.judges import Registry, judge

WS = "/w"


def test_git_config_syntax():
    text = ('[core]\n\tbare = false\n[Branch "Main"]\n\tremote = origin ; c\n'
            '[remote.Origin]\n\turl = "a b" # x\n[s]\n\tflag\n\tv = a\\\n b\n'
            '[x "q\\"uote"]\n\tk = "\\t"\n')
    assert parse(text) == [("core.bare", "false"), ("branch.Main.remote", "origin"),
                           ("remote.origin.url", "a b"), ("s.flag", None), ("s.v", "a b"),
                           ('x.q"uote.k', "\t")]
    for bad in ("k = v\n", "[core\n", "[core]\n\tk = \"open\n", "[core]\n\tk = \\q\n"):
        with pytest.raises(ConfigSyntaxError):
            parse(bad)
    assert added(parse("[a]\n\tb = 1\n"), parse("[A]\n\tB = 1\n\tc = 2\n")) == [("a.c", "2")]


@pytest.mark.parametrize("rel,kind", [
    (".git/config", "git-config"), ("sub/.git/config", "git-config"),
    (".git/modules/m/config", "git-config"), (".git/worktrees/w/config.worktree", "git-config"),
    (".git/commondir", "git-redirect"), (".git", "git-redirect"),
    (".git/hooks/pre-commit", "hook"), (".git/modules/m/hooks/post-checkout", "hook"),
    (".git/info/attributes", "attributes"), ("src/.gitattributes", "attributes"),
    (".gitmodules", "gitmodules"), (".git/objects/ab/cdef", "git-object"), (".git/logs/HEAD", "git-reflog"),
    (".git/index", "git-index"), (".git/hooks", "git-data"),
    ("a/.envrc", "held"), (".vscode/tasks.json", "held"), (".mcp.json", "held"),
    (".yarnrc.yml", "held"), (".husky/pre-commit", "held"), (".ringfence.toml", "held"),
    (".bashrc", "held"),
    ("CLAUDE.md", "held"), ("pkg/CLAUDE.md", "held"), ("CLAUDE.local.md", "held"),
    ("AGENTS.md", "held"), ("svc/AGENTS.override.md", "held"), ("GEMINI.md", "held"),
    (".github/copilot-instructions.md", "held"), (".github/instructions/a.instructions.md", "held"),
    (".windsurfrules", "held"), (".clinerules/r.md", "held"), (".rules", "held"),
])
def test_registry_kinds(rel, kind):
    assert Registry(WS).lookup(rel)[0] == kind


def test_ordinary_files_are_not_obeyed():
    reg = Registry(WS)
    for rel in ("src/main.py", "package.json", "Makefile", "a/.bashrc", "git/config",
                "README.md", "docs/claude.md", "CLAUDE.md.orig", "github/copilot-instructions.md"):
        assert reg.lookup(rel) is None, rel


def test_every_other_tools_row_cites_its_documentation():
    from ringfence.staging.registry import OTHER_TOOLS

    for pattern, kind, why, doc in OTHER_TOOLS:
        assert kind == "held" or kind == "dotenv", pattern
        assert why and doc.startswith("https://"), pattern


def test_pre_run_hooks_path_and_write_protect_extend_the_registry():
    reg = Registry(WS, {".githooks": ("hook", "hooksPath")}, ("*.lock",))
    assert reg.lookup(".githooks/pre-commit")[0] == "hook"
    assert reg.lookup("yarn.lock")[0] == "held"


def j(kind, rel, new, old=None, link=False):
    return judge(kind, rel, None if new is None else new.encode(),
                 None if old is None else old.encode(), is_link=link, workspace=WS)


def test_git_config_judged_by_the_keys_it_adds():
    init = "[core]\n\trepositoryformatversion = 0\n\tfilemode = true\n\tbare = false\n"
    assert j("git-config", ".git/config", init) is None
    assert j("git-config", ".git/config", init + "[user]\n\temail = x@y\n", init) is None
    assert j("git-config", ".git/config",
             init + '[branch "main"]\n\tremote = origin\n\tmerge = refs/heads/main\n', init) is None
    assert "core.fsmonitor" in j("git-config", ".git/config",
                                 init + "\tfsmonitor = touch /tmp/x\n", init)
    assert "core.hookspath" in j("git-config", ".git/config", "[core]\nhooksPath = x\n")
    assert "include.path" in j("git-config", ".git/config", "[include]\npath = ../c\n")
    assert j("git-config", ".git/config", '[remote "o"]\n\turl = ext::sh -c x\n') is not None
    assert "syntax" in j("git-config", ".git/config", "[core\n")
    # an unchanged dangerous key (the user's own) is not the sandbox's change
    cfg = init + "\tfsmonitor = true\n"
    assert j("git-config", ".git/config", cfg + "[user]\n\tname = n\n", cfg) is None


def test_redirects_hooks_attributes_and_modules():
    assert j("git-redirect", ".git", "gitdir: .git/worktrees/w\n") is None
    assert "not a .git directory" in j("git-redirect", ".git", "gitdir: .notgit\n")
    assert "outside the workspace" in j("git-redirect", ".git", "gitdir: /home/u/repo/.git\n")
    assert "not a .git directory" in j("git-redirect", ".git/commondir", "x\n")
    assert j("git-redirect", ".git/worktrees/w/commondir", "../..\n") is None
    assert j("hook", ".git/hooks/pre-commit.sample", "#!/bin/sh\n") is None
    assert j("hook", ".git/hooks/pre-commit", "#!/bin/sh\n") is not None
    assert j("attributes", ".gitattributes", "*.png binary\n*.py diff=python\n",
             "*.png binary\n*.py diff=python\n") is None
    assert "filter=x" in j("attributes", ".gitattributes", "* filter=x\n")
    assert j("gitmodules", ".gitmodules", '[submodule "s"]\n\tpath = s\n\turl = ../s\n') is None
    assert "update" in j("gitmodules", ".gitmodules", '[submodule "s"]\n\tupdate = !sh x\n')


def test_symlinks_and_deletions():
    assert j("git-config", ".git/config", "x", link=True) is not None
    assert j("git-data", ".git/hooks", "../h", link=True) is not None
    assert j("git-data", ".git/index", "data") is None
    assert j("git-config", ".git/config", None) is None          # deleting runs nothing
    assert j("held", ".ringfence.toml", None) is not None         # a policy change
    assert j("held", ".envrc", "x") is not None


def _git(*args, cwd):
    import subprocess

    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True,
                   env={"PATH": "/usr/bin:/bin", "HOME": str(cwd), "GIT_CONFIG_NOSYSTEM": "1"})


def test_an_untracked_clone_is_found_up_from_the_write_and_nowhere_else(tmp_path):
    import os
    import shutil

    from ringfence.staging.settle import registry_for

    if shutil.which("git") is None:
        pytest.skip("git is needed")
    ws, home = tmp_path / "ws", tmp_path / "home"
    home.mkdir()
    lib = ws / "vendor" / "lib"
    lib.mkdir(parents=True)
    _git("init", "-q", str(ws), cwd=tmp_path)
    _git("init", "-q", cwd=lib)
    _git("config", "core.hooksPath", "tools/hooks", cwd=lib)
    for i in range(50):        # clones the run never writes in: never looked at
        other = ws / "many" / f"c{i}"
        other.mkdir(parents=True)
        (other / ".git").mkdir()
    os.symlink("vendor/lib", ws / "via-link")
    reg = registry_for(str(ws), None, {"HOME": str(home), "PATH": "/usr/bin"})
    assert reg.lookup("vendor/lib/tools/hooks/pre-commit")[0] == "hook"
    assert reg.lookup("vendor/lib/tools/hooks")[0] == "git-data"       # the dir itself
    assert reg.lookup("vendor/lib/src/main.py") is None
    assert reg.owners.visited - {""} == {"vendor", "vendor/lib", "vendor/lib/tools",
                                         "vendor/lib/tools/hooks", "vendor/lib/src"}
    # a link on the way is never followed (the stage records the real path)
    assert reg.lookup("via-link/tools/hooks/pre-commit") is None
    assert not any(v.startswith("many") for v in reg.owners.visited)
