"""Staged workspaces, attacked for real: the host never obeys what the sandbox wrote.

Each attack runs through the real ``ringfence run`` and is checked on the HOST
side: the host's own ``git status`` / ``git commit`` run afterwards with a
marker-writing fsmonitor or hook planted by the sandbox, and the marker must
never appear; home files must be untouched. Run as root and as rftest.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess

import pytest

from tests.compiler.sandbox_util import make_box

pytestmark = [
    pytest.mark.sandbox,
    pytest.mark.skipif(shutil.which("bwrap") is None or shutil.which("git") is None,
                       reason="bubblewrap and git are needed"),
]


@pytest.fixture
def box():
    b = make_box()
    b.marker = b.root / "MARKER"
    yield b
    shutil.rmtree(b.root, ignore_errors=True)


def script(box, body: str) -> str:
    """A script outside the workspace: what it does is the sandbox's business."""
    path = box.root / f"s{len(os.listdir(box.root))}.sh"
    path.write_text("set -e\n" + body + "\n")
    return str(path)


def run(box, body: str, profile: str = "build"):
    return box.run(profile, "--", "bash", script(box, body))


def host_git(box, *args, cwd=None) -> subprocess.CompletedProcess:
    env = {"PATH": os.environ.get("PATH", ""), "HOME": str(box.home),
           "GIT_CONFIG_NOSYSTEM": "1", "GIT_AUTHOR_NAME": "h", "GIT_AUTHOR_EMAIL": "h@h",
           "GIT_COMMITTER_NAME": "h", "GIT_COMMITTER_EMAIL": "h@h"}
    return subprocess.run(["git", *args], cwd=cwd or box.ws, env=env, capture_output=True,
                          text=True, timeout=60)


def tree(path) -> dict:
    out = {}
    for d, dirs, files in os.walk(path):
        for f in files + dirs:
            p = os.path.join(d, f)
            st = os.lstat(p)
            out[p] = (st.st_mode, st.st_size, st.st_mtime_ns,
                      os.readlink(p) if os.path.islink(p) else None)
    return out


def fsmonitor(box) -> str:
    return f"[core]\n\tfsmonitor = \"touch {box.marker}; false\"\n"


def test_git_init_add_commit_config_and_upstream_work_in_build(box):
    ws = box.root / "fresh"
    ws.mkdir()
    (ws / "a.txt").write_text("a\n")
    r = box.run("build", "-w", str(ws), "--", "bash", script(box, (
        "git init -q -b main; git config user.email x@y; git config user.name n; "
        "git add . && git commit -qm x; git branch other; "
        "git branch -q --set-upstream-to=other; git status --short")))
    assert r.returncode == 0, r.stderr
    assert "Device or resource busy" not in r.stderr and "RF641" not in r.stderr
    log = host_git(box, "log", "--format=%s %ae", cwd=ws)
    assert log.stdout == "x x@y\n", log.stderr
    assert host_git(box, "config", "user.email", cwd=ws).stdout == "x@y\n"
    assert host_git(box, "rev-parse", "--abbrev-ref", "main@{upstream}", cwd=ws).stdout == "other\n"
    assert host_git(box, "status", "--porcelain", cwd=ws).stdout == ""
    assert box.stages() == []


def test_commondir_redirect_is_held(box):
    r = run(box, (
        "echo x > .git/commondir; mkdir .git/x; "
        f"printf '%s' '{fsmonitor(box)}' > .git/x/config; "
        "ln -s ../objects .git/x/objects; ln -s ../refs .git/x/refs; "
        "printf '../notgit\\n' > .git/worktrees-commondir; mkdir notgit; "
        f"printf '%s' '{fsmonitor(box)}' > notgit/config"))
    assert r.returncode == 0, r.stderr
    assert "held for review: .git/commondir" in r.stderr
    assert "held for review: .git/x/config" in r.stderr
    assert not (box.ws / ".git" / "commondir").exists()
    host_git(box, "status")
    assert not box.marker.exists()


def test_gitfile_pointing_at_a_non_git_dir_is_held(box):
    ws = box.root / "norepo"
    ws.mkdir()
    r = box.run("build", "-w", str(ws), "--", "bash", script(box, (
        "mkdir .notgit; git init -q --bare .notgit; echo 'gitdir: .notgit' > .git; "
        f"printf '%s' '{fsmonitor(box)}' >> .notgit/config")))
    assert r.returncode == 0, r.stderr
    assert "held for review: .git (points git at a directory that is not a .git" in r.stderr
    assert not (ws / ".git").exists()
    host_git(box, "status", cwd=ws)
    assert not box.marker.exists()


def test_nested_repository_with_a_gitlink_is_held(box):
    r = run(box, (
        "git init -q sub; git -C sub -c user.name=n -c user.email=e commit -q --allow-empty -m x; "
        "sha=$(git -C sub rev-parse HEAD); "
        f"printf '%s' '{fsmonitor(box)}' >> sub/.git/config; "
        "git update-index --add --cacheinfo 160000,$sha,sub"))
    assert r.returncode == 0, r.stderr
    assert "held for review: sub/.git/config (adds git config keys that can run programs: " \
           "core.fsmonitor)" in r.stderr
    assert not (box.ws / "sub" / ".git" / "config").exists()
    host_git(box, "status")
    host_git(box, "status", cwd=box.ws / "sub")
    assert not box.marker.exists()


@pytest.mark.parametrize("hooks", (".githooks", ".husky/_"))
def test_hooks_path_target_rewrite_is_held(box, hooks):
    hook = box.ws / hooks / "pre-commit"
    hook.parent.mkdir(parents=True)
    hook.write_text("#!/bin/sh\nexit 0\n")
    hook.chmod(0o755)
    host_git(box, "config", "core.hooksPath", hooks)
    r = run(box, f"printf '#!/bin/sh\\ntouch {box.marker}\\n' > {hooks}/pre-commit; "
                 f"printf '#!/bin/sh\\ntouch {box.marker}\\n' > {hooks}/post-commit; "
                 f"chmod +x {hooks}/*")
    assert r.returncode == 0, r.stderr
    assert f"held for review: {hooks}/pre-commit" in r.stderr
    assert hook.read_text() == "#!/bin/sh\nexit 0\n"
    assert not (box.ws / hooks / "post-commit").exists()
    assert host_git(box, "commit", "-q", "--allow-empty", "-m", "h").returncode == 0
    assert not box.marker.exists()


def test_include_target_in_the_workspace_is_judged_as_config(box):
    (box.ws / "shared.gitconfig").write_text("[user]\n\tname = h\n")
    host_git(box, "config", "include.path", "../shared.gitconfig")
    r = run(box, f"printf '%s' '{fsmonitor(box)}' >> shared.gitconfig; "
                 "printf '[user]\\n\\tname = h\\n' > other.gitconfig")
    assert r.returncode == 0, r.stderr
    assert "held for review: shared.gitconfig (adds git config keys that can run " \
           "programs: core.fsmonitor)" in r.stderr
    assert (box.ws / "shared.gitconfig").read_text() == "[user]\n\tname = h\n"
    assert (box.ws / "other.gitconfig").exists()        # not an include target: applied
    host_git(box, "status")
    assert not box.marker.exists()


def test_symlinks_at_every_level_never_reach_home(box):
    box.run("build", "--", "true")      # creates Build's tooling cache under ~/.cache
    before = tree(box.home)
    (box.root / "tight.toml").write_text(
        'extends = "build"\n[filesystem]\nwrite_protect = ["*/*", "*"]\n')
    body = ("set +e; ln -sfn ~ x; echo pwn > x/pwned; "
            "ln -s ~/.ssh sshlink; rm -rf .git; ln -s ~/.ssh .git; "
            "echo pwn > .git/config 2>/dev/null || true; mkdir -p d/e; ln -s ~ d/e/h; "
            "rm -f README; ln -s ~/.bashrc README")
    for profile in ("build", str(box.root / "tight.toml")):
        r = box.run(profile, "--", "bash", script(box, body))
        assert r.returncode == 0, r.stderr
        assert tree(box.home) == before
        assert (box.home / ".bashrc").read_text() == "# original bashrc\n"
        # the repository is intact: replacing .git by a link is held
        assert (box.ws / ".git").is_dir() and not (box.ws / ".git").is_symlink()
    # a person approving the held changes still never touches home
    for stage in box.stages():
        run_id = _held_run(box)
        r = subprocess.run([*box_cli(), "approve", run_id], env=box.env(), cwd=box.ws,
                           capture_output=True, text=True, timeout=60)
        assert "Traceback" not in r.stderr
        assert tree(box.home) == before
        break


def box_cli():
    from tests.compiler.sandbox_util import CLI
    return CLI


def _held_run(box) -> str:
    r = subprocess.run([*box_cli(), "approvals", "list", "--json"], env=box.env(), cwd=box.ws,
                       capture_output=True, text=True, timeout=60)
    items = [a for a in json.loads(r.stdout) if a["where"] == "stage"]
    return items[0]["run_id"]


def test_ringfence_toml_written_in_a_sandbox_is_not_obeyed(box):
    # A workspace profile may only tighten, but even a tightening one must not take
    # effect before a person saw it: e.g. one that allows what was asked before.
    r = run(box, "printf 'extends = \"build\"\\n[commands]\\ndeny = [\"ls\"]\\n' > .ringfence.toml")
    assert r.returncode == 0, r.stderr
    assert "held for review: .ringfence.toml" in r.stderr
    assert not (box.ws / ".ringfence.toml").exists()
    r = box.run("build", "--", "ls")         # a later run is not governed by it
    assert r.returncode == 0, r.stderr
    run_id = _held_run(box)
    subprocess.run([*box_cli(), "deny", run_id], env=box.env(), cwd=box.ws, check=True,
                   capture_output=True, timeout=60)
    assert box.stages() == [] and not (box.ws / ".ringfence.toml").exists()


def test_held_changes_are_applied_by_approve_under_the_run_id(box):
    r = run(box, "echo 'export A=1' > .envrc; echo ok > plain.txt")
    assert "ringfence approve run_" in r.stderr
    assert (box.ws / "plain.txt").read_text() == "ok\n" and not (box.ws / ".envrc").exists()
    run_id = _held_run(box)
    show = subprocess.run([*box_cli(), "approvals", "show", run_id], env=box.env(),
                          cwd=box.ws, capture_output=True, text=True, timeout=60)
    assert "+export A=1" in show.stdout
    a = subprocess.run([*box_cli(), "approve", run_id], env=box.env(), cwd=box.ws,
                       capture_output=True, text=True, timeout=60)
    assert a.returncode == 0, a.stderr
    assert (box.ws / ".envrc").read_text() == "export A=1\n"
    assert box.stages() == []


def test_record_is_exact_and_copy_ups_are_not_changes(box):
    (box.ws / "d").mkdir()
    (box.ws / "d" / "f").write_text("f\n")
    (box.ws / "gone").mkdir()
    (box.ws / "gone" / "g").write_text("g\n")
    r = run(box, ("exec 3>>README; exec 3>&-; cat README >/dev/null; echo m >> d/f; "
                  "rm -rf gone; rm -rf d2 && mkdir -p new/deep && touch new/deep/n; "
                  "rm -f server.pem; mkdir keep; rm -rf sub; mkdir sub; echo s > sub/s"))
    assert r.returncode == 0, r.stderr
    from ringfence.ledger.store import Ledger
    with Ledger(box.state / "ledger.db") as led:
        ch = led.list_runs(1)[0].result("changes")
    assert ch["created"] == ["keep", "new/deep/n", "sub/s"]
    assert ch["modified"] == ["d/f"]
    assert ch["deleted"] == ["gone/g", "server.pem", "sub/.env.local"]
    assert sorted(os.listdir(box.ws / "sub")) == ["s"]
    assert not (box.ws / "gone").exists() and (box.ws / "keep").is_dir()


def test_the_stage_is_mounted_volatile_and_still_applied_and_removed(box):
    """Issue 19 item 10: the overlay skips every sync to the stage's filesystem (a
    copy-up's fsync, the syncfs when the sandbox ends). What the run wrote, a
    copy-up included, is still recorded, applied and the stage removed."""
    (box.ws / "d").mkdir()
    (box.ws / "d" / "f").write_text("f\n")
    r = run(box, (f"grep ' {box.ws} ' /proc/self/mountinfo; echo m >> d/f; sync d/f; "
                  "mkdir -p n && echo n > n/n && sync"))
    assert r.returncode == 0, r.stderr
    line = next(x for x in r.stdout.splitlines() if " - overlay " in x)
    opts = line.split(" - overlay ", 1)[1].split(",")
    assert "volatile" in opts or "fsync=volatile" in opts, line
    assert (box.ws / "d" / "f").read_text() == "f\nm\n"
    assert (box.ws / "n" / "n").read_text() == "n\n"
    assert box.stages() == []


def _lsattr(path) -> str | None:
    if shutil.which("lsattr") is None:
        return None
    r = subprocess.run(["lsattr", "-d", str(path)], capture_output=True, text=True)
    return r.stdout.split()[0] if r.returncode == 0 and r.stdout else None


def test_stages_are_spread_over_the_disk_where_ext4_can(box):
    """Issue 19 item 10: the stage root carries ext4's TOPDIR hint, so each run's
    stage (all it writes) starts in a block group of its own, not among the inodes
    the previous runs' files freed (which a journal-less ext4 scans past on every
    create). Only a hint: on a filesystem without it, nothing is set."""
    probe = box.root / "probe"
    probe.mkdir()
    if shutil.which("chattr") is None or subprocess.run(
            ["chattr", "+T", str(probe)], capture_output=True).returncode != 0:
        pytest.skip("this filesystem has no TOPDIR attribute")
    assert "T" not in (_lsattr(box.state) or "")
    r = run(box, "echo x > written")
    assert r.returncode == 0, r.stderr
    assert "T" in _lsattr(box.state / "stage")
    assert (box.ws / "written").read_text() == "x\n" and box.stages() == []
