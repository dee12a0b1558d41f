"""Issue 21: no credential is readable in any sandbox; the home is masked.

Every location of ringfence's one credential table (rfcore/credentials.py) is
planted under a stand-in home (outside /tmp, which every sandbox hides anyway),
with a unique secret in each file. Then each built-in profile really runs bwrap
through `ringfence run` and tries every way to read them: cat, find, tar of the
whole home, grep -r. The assertions are on what came out (host side).
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from ringfence.rfcore.credentials import locations

from .sandbox_util import make_box

pytestmark = pytest.mark.sandbox

SANDBOXED = ("observe", "build", "strict", "host-assisted")
TOKEN = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
MARK = "RF21-PLANTED"


def _plant(home: Path, env: dict) -> list[str]:
    """A secret at every table location (a file, or a file inside a dir)."""
    planted = []
    for path, what in locations(str(home), env):
        p = Path(path)
        if not str(p).startswith(str(home)):
            continue
        is_file = "." in p.name and p.name not in (".aws", ".azure", ".kube", ".oci", ".ssh",
                                                   ".gnupg", ".password-store", ".mozilla")
        target = p if is_file else p / "secret"
        target.parent.mkdir(parents=True, exist_ok=True)
        if target.is_dir():
            target = target / "secret"
        secret = f"{MARK}-{len(planted):03d}"
        target.write_text(f"{secret} {what}\n")
        planted.append(secret)
    return planted


@pytest.fixture
def cbox():
    b = make_box()
    env = b.env()
    b.planted = _plant(b.home, env)
    # Allowed paths a toolchain needs; a config that holds secrets beside harmless keys.
    (b.home / ".local/bin").mkdir(parents=True)
    (b.home / ".local/bin/mytool").write_text("#!/bin/sh\necho mytool-ran\n")
    os.chmod(b.home / ".local/bin/mytool", 0o755)
    (b.home / ".gitconfig").write_text(
        "[user]\n\tname = Rf Tester\n\temail = rf@example.com\n"
        f"[credential]\n\thelper = store\n[credential \"https://github.com\"]\n\tusername = {TOKEN}\n"
        f"[url \"https://x-access-token:{TOKEN}@github.com/\"]\n\tinsteadOf = https://github.com/\n"
        f"[http]\n\textraHeader = Authorization: Bearer {TOKEN}\n[alias]\n\tst = status\n")
    (b.home / ".npmrc").write_text(
        "registry=https://registry.npmjs.org/\n"
        f"//registry.npmjs.org/:_authToken={TOKEN}\n@corp:registry=https://npm.corp.example/\n")
    (b.home / ".config/pip").mkdir(parents=True, exist_ok=True)
    (b.home / ".config/pip/pip.conf").write_text(
        f"[global]\nindex-url = https://__token__:{TOKEN}@pypi.corp.example/simple\ntimeout = 9\n")
    yield b
    shutil.rmtree(b.root, ignore_errors=True)


PROBE = ('cat $(find "$HOME" -type f 2>/dev/null) 2>/dev/null; '
         'tar cf - -C "$HOME" . 2>/dev/null | strings; grep -r . "$HOME" 2>/dev/null; '
         'for f in {paths}; do cat "$f" 2>/dev/null; ls -la "$f" 2>/dev/null; done; exit 0')


@pytest.mark.parametrize("profile", SANDBOXED)
def test_no_table_location_is_readable(cbox, profile):
    paths = " ".join(f"'{p}'" for p, _ in locations(str(cbox.home), cbox.env()))
    r = cbox.run(profile, "-c", PROBE.format(paths=paths))
    assert r.returncode == 0, r.stderr
    leaked = [s for s in cbox.planted if s in r.stdout]
    assert leaked == [], leaked[:5]
    assert MARK not in r.stdout and TOKEN not in r.stdout and TOKEN not in r.stderr


@pytest.mark.parametrize("profile", SANDBOXED)
def test_home_is_masked_but_toolchains_and_sanitized_configs_work(cbox, profile):
    (cbox.home / "notes.txt").write_text(f"{MARK}-notes\n")   # not in any table
    r = cbox.run(profile, "-c",
                 "cat ~/notes.txt; mytool; ~/.local/bin/mytool; cat ~/.gitconfig ~/.npmrc "
                 "~/.config/pip/pip.conf; git config --global user.email; "
                 "git config --global --get-regexp 'credential.*'; exit 0",
                 env=cbox.env(PATH=f"{cbox.home}/.local/bin:" + os.environ["PATH"]))
    assert r.returncode == 0, r.stderr
    out = r.stdout
    assert f"{MARK}-notes" not in out                    # the rest of the home is gone
    assert out.count("mytool-ran") == 2                  # ~/.local/bin is there
    assert "rf@example.com" in out and "st = status" in out  # identity, aliases
    assert "registry=https://registry.npmjs.org/" in out and "@corp:registry" in out
    assert "index-url = https://pypi.corp.example/simple" in out and "timeout = 9" in out
    assert TOKEN not in out and "helper" not in out and "extraHeader" not in out
    assert "credential" not in out.lower()


def test_workspace_under_home_is_visible_and_writable_and_commits(cbox):
    ws = cbox.home / "src" / "app"
    ws.mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(ws)], check=True,
                   env={"PATH": os.environ["PATH"], "HOME": str(cbox.home)})
    (ws / "a.txt").write_text("hello\n")
    r = cbox.run("build", "-c", "cat a.txt && echo new > b.txt && git add -A && "
                 "git commit -qm init && git log --format=%ae && cat ~/.aws/secret; exit 0",
                 workspace=ws)
    assert r.returncode == 0, r.stderr
    assert "hello" in r.stdout and "rf@example.com" in r.stdout
    assert MARK not in r.stdout
    assert (ws / "b.txt").read_text() == "new\n"


def test_a_store_outside_the_home_through_xdg_is_masked(cbox):
    xdg = cbox.root / "xdg-config"
    (xdg / "gh").mkdir(parents=True)
    (xdg / "gh" / "hosts.yml").write_text(f"{MARK}-xdg-gh\n")
    aws = cbox.root / "aws-elsewhere"
    aws.write_text(f"{MARK}-aws-override\n")
    env = cbox.env(XDG_CONFIG_HOME=str(xdg), AWS_SHARED_CREDENTIALS_FILE=str(aws))
    for profile in SANDBOXED:
        r = cbox.run(profile, "-c", f"cat {xdg}/gh/hosts.yml {aws}; exit 0", env=env)
        assert r.returncode == 0, r.stderr
        assert MARK not in r.stdout, profile


def test_a_value_shaped_like_a_token_is_not_passed(cbox):
    env = cbox.env(LC_FOO=TOKEN, TERM="xterm")
    r = cbox.run("build", "-c", "env; exit 0", env=env)
    assert r.returncode == 0, r.stderr
    assert TOKEN not in r.stdout and "TERM=xterm" in r.stdout
    assert "RF610" in r.stderr and "LC_FOO" in r.stderr


def test_a_run_with_another_home_still_hides_the_real_one(cbox):
    """HOME names a stand-in; the account's real home (password database) is masked
    too. Asserted by a file planted there only when we own it (root's /root, or the
    unprivileged user's own home)."""
    import pwd

    real = Path(pwd.getpwuid(os.getuid()).pw_dir)
    if not real.is_dir() or not os.access(real, os.W_OK) or str(real).startswith("/tmp"):
        pytest.skip("no writable account home to plant in")
    planted = real / f".rf21-planted-{os.getpid()}"
    planted.write_text(f"{MARK}-realhome\n")
    try:
        for profile in SANDBOXED:
            r = cbox.run(profile, "-c", f"cat {planted}; ls -a {real}; exit 0")
            assert r.returncode == 0, r.stderr
            assert MARK not in r.stdout and planted.name not in r.stdout, profile
    finally:
        planted.unlink()


def test_a_gitconfig_linked_to_a_key_is_not_served(cbox):
    (cbox.home / ".gitconfig").unlink()
    (cbox.home / ".gitconfig").symlink_to(cbox.home / ".ssh" / "id_ed25519")
    r = cbox.run("build", "-c", "cat ~/.gitconfig; exit 0")
    assert r.returncode == 0, r.stderr
    assert "RF-FILE-SECRET" not in r.stdout and MARK not in r.stdout


def _srt():
    from .test_export import _srt as find

    return find()


@pytest.mark.skipif(_srt() is None, reason="srt (npm @anthropic-ai/sandbox-runtime) is not "
                    "installed; `make bench` installs it into bench/.cache/npm")
def test_under_srt_the_export_hides_every_table_location(cbox):
    """srt has no home mask: the export's denyRead carries the whole table."""
    from ringfence.compiler import export as export_mod
    from ringfence.profiles.load import load_profile

    env = {**os.environ, "HOME": str(cbox.home)}
    for k in ("RINGFENCE_HOME", "XDG_STATE_HOME", "XDG_CONFIG_HOME", "XDG_CACHE_HOME"):
        env.pop(k, None)
    settings = cbox.root / "srt.json"
    settings.write_text(export_mod.render(load_profile("build"), "srt", workspace=str(cbox.ws),
                                          env=env).text)
    os.makedirs("/tmp/claude", mode=0o700, exist_ok=True)
    if os.stat("/tmp/claude").st_uid != os.getuid():
        pytest.skip("/tmp/claude belongs to another user (srt's one fixed TMPDIR)")
    paths = " ".join(f"'{p}'" for p, _ in locations(str(cbox.home), env))
    proc = subprocess.run([_srt(), "-s", str(settings), "-c",
                           "echo SRT-RAN; " + PROBE.format(paths=paths)],
                          cwd=cbox.ws, env=env, capture_output=True, text=True, timeout=120)
    assert "SRT-RAN" in proc.stdout, proc.stderr         # srt really ran the probe
    leaked = [s for s in cbox.planted if s in proc.stdout]
    assert leaked == [], leaked[:5]
