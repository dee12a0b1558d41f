"""What else the host obeys in a workspace, attacked for real (issue 19).

Tools the registry must know (other VCS, agent MCP/rule files, editors, hook and
version managers), mode bits and special files, trees deep enough to break a
recursive settle, and ringfence's own state placed inside the workspace. Each
runs through the real ``ringfence run`` and checks the host side. Run as root and
as the unprivileged user.
"""

from __future__ import annotations

import os
import shutil
import stat
import subprocess

import pytest

from tests.compiler.sandbox_util import CLI, make_box

pytestmark = [
    pytest.mark.sandbox,
    pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap is needed"),
]


@pytest.fixture
def box():
    from ringfence.rfcore.fsops import remove_tree

    b = make_box()
    yield b
    remove_tree(str(b.root))            # iterative: the deep trees below
    shutil.rmtree(b.root, ignore_errors=True)


def run(box, body: str, env=None, profile="build"):
    path = box.root / f"s{len(os.listdir(box.root))}.sh"
    path.write_text("set -e\n" + body + "\n")
    return box.run(profile, "--", "bash", str(path), env=env)


OBEYED = (".hg/hgrc", ".hg/sharedpath", ".jj/repo/config.toml", ".cursor/mcp.json",
          ".cursor/rules/r.mdc", ".cursorrules", ".gemini/settings.json", ".amazonq/mcp.json",
          ".roo/mcp.json", ".kiro/settings/mcp.json", "x.code-workspace", ".zed/settings.json",
          ".helix/config.toml", "lefthook.yml", ".lefthook.yml", ".lintstagedrc",
          ".lintstagedrc.json", ".tool-versions", "mise.toml", ".mise.toml",
          "sub/lefthook.yml", "sub/.tool-versions", ".aider.conf.yml", ".dir-locals.el",
          ".nvim.lua", ".exrc", ".hgsub")


def test_files_other_tools_obey_are_held(box):
    body = "; ".join(f"mkdir -p $(dirname {p}); echo x > {p}" for p in OBEYED)
    r = run(box, body + "; echo ok > plain.txt")
    assert r.returncode == 0, r.stderr
    for p in OBEYED:
        assert f"held for review: {p}" in r.stderr, p
        assert not (box.ws / p).exists(), p
    assert (box.ws / "plain.txt").read_text() == "ok\n"


def test_setuid_setgid_bits_are_stripped_and_special_files_held(box):
    # The seccomp filter refuses the modes (compiler/seccomp.py MODE_CALLS); apply's
    # strip is the second layer (place.strip, tests/ringfence/test_apply.py).
    r = run(box, ("cp /bin/true suid; chmod 755 suid; mkdir sg; "
                  "for m in '6755 suid' '2775 sg' '6755 README'; do chmod $m && exit 9; done; "
                  "mkdir -p new; cp /bin/true new/s; chmod 4755 new/s && exit 9; "
                  "mkfifo fifo; mkdir nd; mkfifo nd/f; "
                  "python3 -c 'import socket; s=socket.socket(socket.AF_UNIX); s.bind(\"sock\")' "
                  "|| true"))
    assert r.returncode == 0, r.stderr
    for p in ("suid", "sg", "new/s", "README"):
        mode = os.lstat(box.ws / p).st_mode
        assert not mode & (stat.S_ISUID | stat.S_ISGID), (p, oct(mode))
    assert os.lstat(box.ws / "suid").st_mode & 0o777 == 0o755
    for p in ("fifo", "nd/f", "sock"):
        assert not os.path.lexists(box.ws / p), p
    assert "held for review: fifo (a FIFO" in r.stderr


def test_a_deep_new_chain_settles_and_applies(box):
    r = run(box, "d=deep; for i in $(seq 1100); do d=$d/d; done; mkdir -p $d; echo x > $d/f")
    assert r.returncode == 0, r.stderr
    assert "Traceback" not in r.stderr and "RF643" not in r.stderr, r.stderr[-2000:]
    assert (box.ws / ("deep" + "/d" * 1100) / "f").read_text() == "x\n"


def test_a_deep_existing_chain_settles_and_applies(box):
    rel = "old" + "/d" * 1100
    subprocess.run(["mkdir", "-p", rel], cwd=box.ws, check=True)
    r = run(box, f"echo x > {rel}/f; mkfifo {rel}/p")
    assert r.returncode == 0, r.stderr
    assert "Traceback" not in r.stderr, r.stderr[-2000:]
    assert (box.ws / rel / "f").read_text() == "x\n"
    assert f"held for review: {rel}/p" in r.stderr


def test_a_settle_over_its_time_bound_is_recorded_and_the_stage_kept(box):
    env = box.env(RINGFENCE_SETTLE_SECONDS="0")
    r = run(box, "mkdir -p a/b; echo x > a/b/f; echo y > g", env=env)
    # none of its writes landed: never exit 0 and `completed` (docs/exit-codes.md)
    assert r.returncode == 125, r.stderr
    assert "RF644" in r.stderr and "Traceback" not in r.stderr
    assert not (box.ws / "g").exists() and not (box.ws / "a").exists()
    assert len(box.stages()) == 1
    from ringfence.ledger.store import Ledger
    with Ledger(box.state / "ledger.db") as led:
        last = led.list_runs(1)[0]
    assert last.state == "failed" and last.result("exit_code") == 125
    assert "RF644" in last.result("changes")["settle_error"]
    # what ran was recorded before settling began
    before = [e for e in last.events if e.get("note", "") and "settling" in e["note"]]
    assert before and before[0]["exit_code"] == 0 and before[0]["state"] == "running"
    doc = subprocess.run([*CLI, "doctor", "--json"], env=box.env(), cwd=box.ws, capture_output=True,
                         text=True, timeout=120)
    assert box.stages()[0] in doc.stdout + doc.stderr


@pytest.mark.parametrize("var,sub", (("RINGFENCE_HOME", ".rf"), ("XDG_STATE_HOME", ".st"),
                                     ("XDG_CACHE_HOME", ".cache")))
def test_private_state_inside_the_workspace_is_refused(box, var, sub):
    env = box.env(**{var: str(box.ws / sub)})
    if var != "RINGFENCE_HOME":
        del env["RINGFENCE_HOME"]
    r = run(box, f"echo x > {box.ws}/ran", env=env)
    assert r.returncode == 125, r.stderr
    assert "RF645" in r.stderr and "Traceback" not in r.stderr
    assert not (box.ws / "ran").exists()


def test_links_out_of_the_workspace_are_held_but_a_venv_works(box):
    (box.home / ".config").mkdir()
    r = run(box, ('rm -rf sub; ln -s "$HOME/.config" sub; '
                  'ln -s "$(dirname "$PIP_CACHE_DIR")" node_modules; ln -s /etc/passwd pw; '
                  f"{os.path.realpath(os.sys.executable)} -m venv --without-pip v"))
    assert r.returncode == 0, r.stderr
    for p in ("sub", "node_modules", "pw"):
        assert f"held for review: {p}" in r.stderr, p
    assert (box.ws / "sub").is_dir() and not (box.ws / "sub").is_symlink()
    assert not os.path.lexists(box.ws / "node_modules") and not os.path.lexists(box.ws / "pw")
    py = subprocess.run([str(box.ws / "v" / "bin" / "python"), "-c", "print(1)"],
                        capture_output=True, text=True)
    assert py.stdout == "1\n", r.stderr


def test_writes_that_could_not_be_read_are_no_completed_run(box):
    """A path longer than PATH_MAX in the stage (RF643): nothing is applied, so the
    run is `failed` with 125, never `completed` with the command's 0."""
    deep = "; ".join(["mkdir " + "d" * 250 + " && cd " + "d" * 250] * 20)
    r = run(box, f"echo work > important.txt; mkdir deep && cd deep && {deep}; echo done")
    assert "RF643" in r.stderr and "Traceback" not in r.stderr, r.stderr[-2000:]
    assert r.returncode == 125, r.stderr[-2000:]
    assert not (box.ws / "important.txt").exists()
    from ringfence.ledger.store import Ledger
    with Ledger(box.state / "ledger.db") as led:
        last = led.list_runs(1)[0]
    assert last.state == "failed" and last.result("exit_code") == 125
