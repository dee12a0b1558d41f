"""The second outside review of issue 19, beyond git: each attack through the real
``ringfence run`` (as root, and as the unprivileged user under
scripts/test-unprivileged.sh), checked on the host side.

* toolchain files the host's rustc and cargo obey, and more agents' MCP/plugin
  files, are held (the registry grows by data);
* a new link at a system *directory* (``dist -> /usr/local/bin``) is held: a root
  host writes through it;
* a held name that is not UTF-8 never crashes the run's record, and its approval
  can still be made;
* a held name never sends control characters to ringfence's own stderr;
* a ``.gitignore`` of 40,000 patterns never keeps settle busy past its bound;
* Strict masks workspace secrets whatever their case, and the system's own secrets
  (``/etc/shadow``) are hidden from a root-run sandbox.
"""

from __future__ import annotations

import json
import os
import subprocess

import pytest

from tests.compiler.sandbox_util import CLI
from tests.compiler.test_setuid_roots import box, pytestmark  # noqa: F401 - one fixture


def run(box, body: str, profile: str = "build", env=None):
    path = box.root / f"s{len(os.listdir(box.root))}.sh"
    path.write_text(body + "\n")
    return box.run(profile, "--", "bash", str(path), env=env)


@pytest.mark.parametrize("rel", ("rust-toolchain.toml", "rust-toolchain", ".cargo/config.toml",
                                 ".cargo/config", "opencode.json", ".opencode/plugin/p.ts",
                                 ".qwen/settings.json", "crush.json",
                                 ".continue/mcpServers/m.yaml", ".kilocode/mcp.json",
                                 "mise/config.toml", ".config/mise/conf.d/a.toml",
                                 ".config/mise/config.local.toml"))
def test_toolchain_and_agent_files_are_held(box, rel):
    r = run(box, f"mkdir -p \"$(dirname {rel})\"; echo '[x]' > {rel}")
    assert r.returncode == 0, r.stderr
    assert f"held for review: {rel}" in r.stderr, r.stderr
    assert not (box.ws / rel).exists()


def test_a_new_link_at_a_system_directory_is_held(box):
    r = run(box, "ln -s /usr/local/bin dist; ln -s /usr/bin/env tool")
    assert r.returncode == 0, r.stderr
    assert "held for review: dist" in r.stderr, r.stderr
    assert not os.path.lexists(box.ws / "dist")
    assert os.readlink(box.ws / "tool") == "/usr/bin/env"      # a system file: applied


def test_a_held_name_that_is_not_utf8_is_recorded_and_can_be_approved(box):
    r = run(box, "echo x > work.txt; mkdir .vscode; "
                 "python3 -c 'open(b\".vscode/\\xfe\", \"w\").write(\"x\")'")
    assert "internal error" not in r.stderr and "Traceback" not in r.stderr, r.stderr
    assert r.returncode == 0, r.stderr
    assert (box.ws / "work.txt").exists()
    assert not os.path.lexists(os.path.join(os.fsencode(box.ws), b".vscode/\xfe"))
    out = subprocess.run([*CLI, "approvals", "list", "--json"], env=box.env(), cwd=box.ws,
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    pending = json.loads(out.stdout)
    pending = pending.get("approvals", pending) if isinstance(pending, dict) else pending
    assert len(pending) == 1, out.stdout


def test_a_held_name_sends_no_control_characters_to_the_terminal(box):
    r = run(box, "mkdir .vscode; python3 -c 'open(\".vscode/a\\x1b]52;c;cHduZWQ=\\x07b\\x1b[2J"
                 "\\nfake: line\", \"w\").write(\"x\")'")
    assert r.returncode == 0, r.stderr
    assert "held for review: .vscode/" in r.stderr, r.stderr
    assert "\x1b" not in r.stderr and "\x07" not in r.stderr
    assert "\nfake: line" not in r.stderr


def test_a_huge_gitignore_never_outlasts_the_settle_bound(box):
    env = box.env(RINGFENCE_SETTLE_SECONDS="5")
    r = run(box, "python3 -c '\nfor i in range(200): open(f\"f{i}\", \"w\").close()\n"
                 "open(\".gitignore\", \"w\").write(\"\".join(f\"zz{i}*q\\n\" for i in "
                 "range(40000)))'", env=env)
    assert r.returncode == 0, r.stderr
    assert "held for review: .gitignore" in r.stderr, r.stderr
    assert (box.ws / "f0").exists()


def test_strict_masks_workspace_secrets_whatever_their_case(box):
    for name in (".ENV", "SERVER.PEM", "tls.Key", "ID_RSA"):
        (box.ws / name).write_text(f"SECRET-{name}\n")
    r = run(box, "for f in .ENV SERVER.PEM tls.Key ID_RSA README; do cat $f; done",
            profile="strict")
    assert "SECRET-" not in r.stdout, r.stdout
    assert "hello" in r.stdout                   # README: the control


@pytest.mark.skipif(os.geteuid() != 0 or not os.path.exists("/etc/shadow"),
                    reason="root reads /etc/shadow; the unprivileged user never could")
@pytest.mark.parametrize("profile", ("build", "strict"))
def test_a_root_run_sandbox_cannot_read_the_systems_password_hashes(box, profile):
    r = run(box, "cat /etc/shadow; echo rc=$?", profile=profile)
    assert "root:" not in r.stdout, r.stdout
    assert "rc=1" in r.stdout


LINKED = "/usr/lib/ssl/openssl.cnf"        # Debian: a link to /etc/ssl/openssl.cnf


@pytest.mark.skipif(not (os.path.islink(LINKED) and os.path.isfile(LINKED)
                         and not os.path.realpath(LINKED).startswith("/usr/")),
                    reason=f"{LINKED} is not a link out of /usr here")
def test_a_link_through_a_system_path_is_judged_where_it_really_leads(box):
    r = run(box, f"ln -s {LINKED} notes.txt")
    assert r.returncode == 0, r.stderr
    assert "held for review: notes.txt" in r.stderr, r.stderr
    assert not os.path.lexists(box.ws / "notes.txt")
