"""An outside attack review of the staged apply (issue 19, second pass), for real.

Each test plants, from inside a Build sandbox, something the HOST's real git (or
direnv, or a shell's PATH) would obey later, then checks on the host side: the
marker never appears, ``git status``/``git diff`` still show the change, history
stays whole. Run as root and as the unprivileged user (scripts/test-unprivileged.sh).
"""

from __future__ import annotations

import os
import shutil

import pytest

from tests.compiler.sandbox_util import INNER_PY
from tests.ringfence.test_staging_git import box, commit_all, host_git, run  # noqa: F401

pytestmark = [
    pytest.mark.sandbox,
    pytest.mark.skipif(shutil.which("bwrap") is None or shutil.which("git") is None,
                       reason="bubblewrap and git are needed"),
]

HOOK = "printf '#!/bin/sh\\ntouch {m}\\n' > {p}; chmod +x {p}"


# 1. replace refs in packed-refs, and .git/shallow

def test_a_packed_replace_ref_is_held(box):
    commit_all(box)
    r = run(box, ("fake=$(echo fake | git hash-object -w --stdin); "
                  "git update-ref refs/replace/$(git rev-parse HEAD:README) $fake; "
                  "git pack-refs --all"))
    assert r.returncode == 0, r.stderr
    assert "held for review: .git/packed-refs" in r.stderr
    assert host_git(box, "cat-file", "-p", "HEAD:README").stdout == "hello\n"
    assert host_git(box, "log", "--format=%s").stdout == "init\n"


def test_a_new_shallow_boundary_is_held(box):
    commit_all(box)
    host_git(box, "commit", "-q", "--allow-empty", "-m", "second")
    r = run(box, "git rev-parse HEAD > .git/shallow")
    assert r.returncode == 0, r.stderr
    assert "held for review: .git/shallow" in r.stderr
    assert host_git(box, "log", "--format=%s").stdout == "second\ninit\n"


# 2. forged index stat data

FORGE_STAT = r'''
import hashlib, os
open("README", "w").write("EVIL!\n")          # same size as "hello\n"
os.utime("README", ns=(1600000000 * 10**9, 1600000000 * 10**9))
st = os.stat("README")
d = bytearray(open(".git/index", "rb").read()[:-20])
i = d.find(b"README\0") - 62
f = lambda v: (v & 0xffffffff).to_bytes(4, "big")
d[i:i + 40] = (f(int(st.st_ctime)) + f(st.st_ctime_ns % 10**9) + f(int(st.st_mtime))
               + f(st.st_mtime_ns % 10**9) + f(st.st_dev) + f(st.st_ino) + f(st.st_mode)
               + f(st.st_uid) + f(st.st_gid) + f(st.st_size))
open(".git/index", "wb").write(bytes(d) + hashlib.sha1(bytes(d)).digest())
'''


def test_forged_index_stat_data_is_held(box):
    # a host that does not trust ctime or inode numbers (network and container
    # filesystems, some editors' save-by-rename): stat data alone then decides
    (box.home / ".gitconfig").write_text("[core]\n\ttrustctime = false\n\tcheckStat = minimal\n")
    commit_all(box)
    (box.root / "forge.py").write_text(FORGE_STAT)
    r = run(box, f"{INNER_PY} {box.root}/forge.py")
    assert r.returncode == 0, r.stderr
    assert "held for review: .git/index" in r.stderr and "README" in r.stderr
    assert host_git(box, "status", "--porcelain", "-uno").stdout == " M README\n"


def test_forged_stat_data_set_up_for_a_later_run_is_smudged(box):
    (box.home / ".gitconfig").write_text("[core]\n\ttrustctime = false\n\tcheckStat = minimal\n")
    commit_all(box)
    # run 1 forges the entry for bytes it has not written yet; run 2 writes them
    (box.root / "forge.py").write_text(FORGE_STAT.replace(
        'open("README", "w").write("EVIL!\\n")', 'pass').replace(
        'os.utime("README"', 'st0 = os.stat("README"); os.utime("README"'
    ) + 'os.utime("README", ns=(st0.st_atime_ns, st0.st_mtime_ns))\n')
    r = run(box, f"{INNER_PY} {box.root}/forge.py")
    assert r.returncode == 0, r.stderr
    assert "held for review" not in r.stderr, r.stderr     # smudged, not held
    r = run(box, "printf 'EVIL!\\n' > README; touch -d @1600000000 README")
    assert r.returncode == 0, r.stderr
    assert host_git(box, "status", "--porcelain", "-uno").stdout == " M README\n"


def test_a_status_refresh_after_a_touch_is_applied(box):
    commit_all(box)
    r = run(box, "touch README; git status --porcelain >/dev/null")
    assert r.returncode == 0, r.stderr
    assert "held for review" not in r.stderr, r.stderr
    assert host_git(box, "status", "--porcelain", "-uno").stdout == ""


# 3. hooksPath of submodules, nested repos and a linked worktree's common dir

def test_a_submodules_hooks_path_is_judged_as_hooks(box):
    src = box.root / "src"
    host_git(box, "init", "-q", str(src))
    (src / "f").write_text("f\n")
    host_git(box, "add", "f", cwd=src)
    host_git(box, "commit", "-qm", "s", cwd=src)
    got = host_git(box, "-c", "protocol.file.allow=always", "submodule", "add", "-q",
                   str(src), "sm")
    assert got.returncode == 0, got.stderr
    host_git(box, "config", "core.hooksPath", "hk", cwd=box.ws / "sm")
    assert (box.ws / ".git" / "modules" / "sm" / "config").is_file()
    r = run(box, "mkdir -p sm/hk; " + HOOK.format(m=box.marker, p="sm/hk/pre-commit"))
    assert r.returncode == 0, r.stderr
    assert "held for review: sm/hk" in r.stderr
    host_git(box, "commit", "-q", "--allow-empty", "-m", "h", cwd=box.ws / "sm")
    assert not box.marker.exists()


def test_a_nested_repos_hooks_path_is_judged_as_hooks(box):
    nested = box.ws / "vendor" / "lib"
    host_git(box, "init", "-q", str(nested))
    host_git(box, "commit", "-q", "--allow-empty", "-m", "n", cwd=nested)
    host_git(box, "config", "core.hooksPath", "../../tools/nh", cwd=nested)
    host_git(box, "add", "vendor/lib")
    r = run(box, "mkdir -p tools/nh; " + HOOK.format(m=box.marker, p="tools/nh/pre-commit"))
    assert r.returncode == 0, r.stderr
    assert "held for review: tools/nh" in r.stderr
    host_git(box, "commit", "-q", "--allow-empty", "-m", "h", cwd=nested)
    assert not box.marker.exists()


def test_a_linked_worktrees_common_config_hooks_path_is_read(box):
    commit_all(box)
    wt = box.root / "wt2"
    assert host_git(box, "worktree", "add", "-q", str(wt)).returncode == 0
    host_git(box, "config", "core.hooksPath", ".hooks")
    path = box.root / "w.sh"
    path.write_text("set -e\nmkdir -p .hooks\n" + HOOK.format(m=box.marker, p=".hooks/pre-commit")
                    + "\n")
    r = box.run("build", "--", "bash", str(path), workspace=wt)
    assert r.returncode == 0, r.stderr
    assert "held for review: .hooks" in r.stderr
    host_git(box, "commit", "-q", "--allow-empty", "-m", "h", cwd=wt)
    assert not box.marker.exists()


# 4. config keys that redirect the next push/pull or hide changes

def test_push_redirecting_and_change_hiding_keys_are_held(box):
    commit_all(box)
    host_git(box, "remote", "add", "origin", "https://example.invalid/r.git")
    keys = (("remote.origin.mirror", "true"), ("remote.origin.push", "+refs/*:refs/*"),
            ("remote.origin.pushurl", "https://evil.invalid/r.git"),
            ("remote.origin.url", "https://evil.invalid/r.git"),
            ("branch.main.rebase", "interactive"), ("diff.relative", "true"),
            ("core.ignorecase", "true"), ("color.diff.new", "black black"),
            ("status.showuntrackedfiles", "no"), ("status.relativepaths", "false"))
    for key, value in keys:
        r = run(box, f"git config {key} '{value}'")
        assert r.returncode == 0, r.stderr
        assert "held for review: .git/config" in r.stderr, key
        assert host_git(box, "config", "--get", key).stdout.strip() != value, key
    r = run(box, "git config user.name someone; git config push.autosetupremote true")
    assert "held for review" not in r.stderr, r.stderr


# 5. a self-ignoring .gitignore

def test_a_gitignore_that_hides_new_files_is_held(box):
    commit_all(box)
    r = run(box, "mkdir tools; echo '*' > tools/.gitignore; echo 'import os' > tools/conftest.py")
    assert r.returncode == 0, r.stderr
    assert "held for review: tools/.gitignore" in r.stderr
    assert "?? tools/" in host_git(box, "status", "--porcelain").stdout


def test_a_gitignore_hiding_a_file_modified_next_to_it_is_held(box):
    (box.ws / "src").mkdir()
    (box.ws / "src" / "a.py").write_text("a\n")
    r = run(box, "echo evil >> src/a.py; echo 'a.py' > src/.gitignore")
    assert r.returncode == 0, r.stderr
    assert "held for review: src/.gitignore" in r.stderr
    assert "src/" in host_git(box, "status", "--porcelain").stdout


def test_tool_caches_own_gitignore_is_applied(box):
    r = run(box, ("mkdir -p .pytest_cache/v .mypy_cache; echo '*' > .pytest_cache/.gitignore; "
                  "echo 1 > .pytest_cache/v/x; echo '*' > .mypy_cache/.gitignore; "
                  "echo 1 > .mypy_cache/y; echo 'build/' > .gitignore; mkdir build; "
                  "echo o > build/out.txt; mkdir -p node_modules/@s/p/lib; "
                  "echo 'lib/' > node_modules/@s/p/.gitignore; echo 1 > node_modules/@s/p/lib/i.js"))
    assert r.returncode == 0, r.stderr
    assert "held for review" not in r.stderr, r.stderr
    assert (box.ws / ".pytest_cache" / ".gitignore").exists()
    assert (box.ws / ".gitignore").exists()


# 6. .gitattributes: git's line splitting and attributes that hide diffs

def test_a_driver_behind_a_bare_cr_is_held(box):
    commit_all(box)
    (box.home / ".gitconfig").write_text(
        f"[diff \"t\"]\n\ttextconv = sh -c 'touch {box.marker}; cat \"$0\"'\n")
    r = run(box, "printf 'README\\r diff=t\\n' > .gitattributes; echo more >> README")
    assert r.returncode == 0, r.stderr
    assert "held for review: .gitattributes" in r.stderr
    host_git(box, "diff")
    assert not box.marker.exists()


@pytest.mark.parametrize("attr", ("-diff", "binary"))
def test_attributes_that_hide_a_diff_are_held(box, attr):
    commit_all(box)
    r = run(box, f"echo 'README {attr}' > .gitattributes; echo evil >> README")
    assert r.returncode == 0, r.stderr
    assert "held for review: .gitattributes" in r.stderr
    assert "evil" in host_git(box, "diff").stdout


# 7. .env (direnv's dotenv) and more tool config

ENVS = (".env", ".env.local", "sub/.env.production", ".mise.local.toml",
        ".config/mise/config.toml", ".rtx.toml", "lefthook.toml", "lefthook-local.yml")


def test_dotenv_files_and_more_tool_configs_are_held(box):
    before = (box.ws / ".env").read_text()
    r = run(box, "; ".join(f"mkdir -p $(dirname {p}); echo 'X=1' >> {p}" for p in ENVS))
    assert r.returncode == 0, r.stderr
    for p in ENVS:
        assert f"held for review: {p}" in r.stderr, p
    assert (box.ws / ".env").read_text() == before
    assert not (box.ws / ".env.local").exists()


# 8. PATH shadowing

def test_a_program_shadowing_the_hosts_path_is_held(box):
    (box.ws / ".venv" / "bin").mkdir(parents=True)
    (box.ws / ".venv" / "pyvenv.cfg").write_text("home = /usr/bin\n")
    (box.ws / ".envrc").write_text("PATH_add scripts\n")
    body = "; ".join(HOOK.format(m=box.marker, p=p) for p in (
        "bin/git", ".venv/bin/ls", "node_modules/.bin/sh", "scripts/make"))
    r = run(box, "mkdir -p bin node_modules/.bin scripts; " + body
             + "; printf '#!/bin/sh\\n' > bin/my-own-tool; chmod +x bin/my-own-tool")
    assert r.returncode == 0, r.stderr
    for p in ("bin/git", ".venv/bin/ls", "node_modules/.bin/sh", "scripts/make"):
        assert f"held for review: {p}" in r.stderr, p
        assert not (box.ws / p).exists(), p
    assert (box.ws / "bin" / "my-own-tool").exists()


def test_a_new_link_where_a_path_dir_is_held(box):
    r = run(box, "mkdir tools; " + HOOK.format(m=box.marker, p="tools/git") + "; ln -s tools bin")
    assert r.returncode == 0, r.stderr
    assert "held for review: bin" in r.stderr
    assert not os.path.lexists(box.ws / "bin")


def test_a_global_relative_hooks_path_applies_in_a_nested_repo(box):
    nested = box.ws / "vendor" / "lib"
    host_git(box, "init", "-q", str(nested))
    host_git(box, "commit", "-q", "--allow-empty", "-m", "n", cwd=nested)
    host_git(box, "add", "vendor/lib")
    (box.home / ".gitconfig").write_text("[core]\n\thooksPath = .githooks\n")
    r = run(box, "mkdir -p vendor/lib/.githooks; "
                 + HOOK.format(m=box.marker, p="vendor/lib/.githooks/pre-commit"))
    assert r.returncode == 0, r.stderr
    assert "held for review: vendor/lib/.githooks" in r.stderr
    host_git(box, "commit", "-q", "--allow-empty", "-m", "h", cwd=nested)
    assert not box.marker.exists()


def test_a_new_venv_still_applies_but_not_a_git_in_it(box):
    r = run(box, f"{INNER_PY} -m venv --without-pip nv; "
                 + HOOK.format(m=box.marker, p="nv/bin/git"))
    assert r.returncode == 0, r.stderr
    assert "held for review: nv/bin/git" in r.stderr
    for p in ("python", "python3", "activate"):
        assert os.path.lexists(box.ws / "nv" / "bin" / p), p
    assert not (box.ws / "nv" / "bin" / "git").exists()


# 9. merge / cherry-pick state pointing at a sandbox commit

def test_a_new_merge_head_is_held(box):
    commit_all(box)
    r = run(box, ("c=$(git -c user.name=s -c user.email=s@s commit-tree 'HEAD^{tree}' -p HEAD -m evil); "
                  "echo $c > .git/MERGE_HEAD; echo $c > .git/CHERRY_PICK_HEAD"))
    assert r.returncode == 0, r.stderr
    assert "held for review: .git/MERGE_HEAD" in r.stderr
    assert "held for review: .git/CHERRY_PICK_HEAD" in r.stderr
    assert not (box.ws / ".git" / "MERGE_HEAD").exists()
