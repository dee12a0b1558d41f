"""Issue 21: a task-scoped credential brokered to git for one run, never in the sandbox.

A private repository is served over HTTPS on loopback (git http-backend behind
Basic auth, a CA generated here: tests/compiler/gitserver.py). Build with a
``[[credentials]]`` entry clones it; without the entry the clone fails. While git
runs, a watcher in the same sandbox dumps every process's environ and cmdline;
none holds the token, nor does anything in the workspace or the stage after the
run. Every request is in the ledger. A second run without the section gets
nothing, a request for another host is refused, and a token the command writes
into the workspace is held, never applied (RF653).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest

from .gitserver import HOST, GitServer, git_backend, make_repo
from .sandbox_util import CLI, make_box
from .test_ca_bundles import make_pki

pytestmark = [
    pytest.mark.sandbox,
    pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap is not installed"),
    pytest.mark.skipif(shutil.which("openssl") is None, reason="openssl makes the test CA"),
    pytest.mark.skipif(shutil.which("git") is None or git_backend() is None,
                       reason="git and git-http-backend serve the private repository"),
]

TOKEN = "rfbroker-" + "9f8e7d6c5b4a3210" * 2
CONTENT = "private readme 7c1e\n"


@pytest.fixture
def srv():
    box = make_box()
    pki = Path(tempfile.mkdtemp(prefix=f"rf-gitca-{os.getuid()}-", dir="/var/tmp"))
    repos = box.root / "repos"
    repos.mkdir()
    try:
        ca, cert, key = make_pki(pki)
        make_repo(repos, CONTENT)
        server = GitServer(repos, cert, key, TOKEN)
    except BaseException:
        shutil.rmtree(pki, ignore_errors=True)
        shutil.rmtree(box.root, ignore_errors=True)
        raise
    net = f'[network]\nallow = ["{HOST}:{server.port}"]\n'
    plain = box.root / "plain.toml"
    plain.write_text(f'extends = "build"\n{net}')
    brokered = box.root / "brokered.toml"
    brokered.write_text(f'extends = "build"\n{net}[[credentials]]\nname = "git"\n'
                        f'from = "env:RF_GIT_TOKEN"\ndomains = ["{HOST}:{server.port}"]\n')
    box.ca, box.server, box.plain, box.brokered = ca, server, str(plain), str(brokered)
    try:
        yield box
    finally:
        server.close()
        shutil.rmtree(pki, ignore_errors=True)
        shutil.rmtree(box.root, ignore_errors=True)


def _env(box, **extra):
    return box.env(GIT_SSL_CAINFO=str(box.ca), RF_GIT_TOKEN=TOKEN, **extra)


# While git clones, dump every process's environ and cmdline in the sandbox (the
# helper and git itself included) into /tmp, then print it all.
CLONE = ("(for i in $(seq 200); do for p in /proc/[0-9]*; do cat $p/environ $p/cmdline; "
         "echo; done; done > /tmp/procs 2>/dev/null) & w=$!; "
         "GIT_TERMINAL_PROMPT=0 git clone -q {url} cloned; rc=$?; kill $w 2>/dev/null; "
         "wait $w 2>/dev/null; cat /tmp/procs | tr '\\0' '\\n'; cat cloned/README; "
         "grep -r . cloned/.git/config; exit $rc")


def _ledger_uses(box, env) -> list[dict]:
    out = subprocess.run([*CLI, "ledger", "list", "--json"], env=env, capture_output=True,
                         text=True, check=True).stdout
    runs = json.loads(out)
    runs = runs if isinstance(runs, list) else runs["runs"]
    shown = subprocess.run([*CLI, "ledger", "show", runs[0]["id"], "--json"], env=env,
                           capture_output=True, text=True, check=True).stdout
    return [n for n in json.loads(shown).get("network") or [] if n.get("kind") == "credential"]


def test_clone_works_with_the_broker_and_the_token_is_nowhere_in_the_sandbox(srv):
    env = _env(srv)
    r = srv.run(srv.brokered, "-c", CLONE.format(url=srv.server.url), env=env, timeout=120)
    assert r.returncode == 0, r.stdout[-2000:] + r.stderr
    assert CONTENT in r.stdout                           # the private repository came through
    assert TOKEN not in r.stdout and TOKEN not in r.stderr   # no environ, cmdline, config
    assert "GIT_CONFIG_VALUE_0=/run/ringfence/git-credential-ringfence" in r.stdout
    assert (srv.ws / "cloned" / "README").read_text() == CONTENT
    for path in srv.ws.rglob("*"):                       # the applied workspace
        if path.is_file() and not path.is_symlink():
            assert TOKEN.encode() not in path.read_bytes(), path
    assert srv.stages() == []                            # nothing held, nothing kept
    uses = _ledger_uses(srv, env)
    assert uses and all(u["credential"] == "git" and u["given"] for u in uses)
    assert {u["host"] for u in uses} == {f"{HOST}:{srv.server.port}"}


def test_clone_fails_without_the_broker_and_no_token_is_sent(srv):
    r = srv.run(srv.plain, "-c", CLONE.format(url=srv.server.url), env=_env(srv), timeout=120)
    assert r.returncode != 0
    assert CONTENT not in r.stdout and not (srv.ws / "cloned" / "README").exists()
    assert srv.server.seen and not [a for a in srv.server.seen if TOKEN in a or a.startswith("Basic")]


def test_other_hosts_and_other_runs_get_nothing(srv):
    env = _env(srv)
    ask = "printf 'protocol=https\\nhost={h}\\n\\n' | /run/ringfence/git-credential-ringfence get"
    r = srv.run(srv.brokered, "-c", "; ".join([
        ask.format(h="github.com"), ask.format(h=HOST), ask.format(h=f"evil.{HOST}"),
        f"printf 'protocol=http\\nhost={HOST}:{srv.server.port}\\n\\n' | "
        "/run/ringfence/git-credential-ringfence get", "exit 0"]), env=env)
    assert r.returncode == 0, r.stderr
    assert TOKEN not in r.stdout                         # wrong host, no port, http
    uses = _ledger_uses(srv, env)
    assert len(uses) == 4 and not [u for u in uses if u["given"]]
    # A run of a profile without the section: no helper, no descriptor, nothing.
    r = srv.run(srv.plain, "-c", "ls /run/ringfence 2>&1; ls -l /proc/self/fd; "
                + ask.format(h=f"{HOST}:{srv.server.port}") + "; exit 0", env=env)
    assert TOKEN not in r.stdout and "git-credential-ringfence" not in r.stdout.split("\n")[0]
    assert "socket:" not in r.stdout


def test_a_token_written_into_the_workspace_is_held_not_applied(srv):
    env = _env(srv)
    r = srv.run(srv.brokered, "-c",
                f"printf 'protocol=https\\nhost={HOST}:{srv.server.port}\\n\\n' | "
                "/run/ringfence/git-credential-ringfence get > leak.txt; echo ok > fine.txt",
                env=env)
    assert "RF653" in r.stderr, r.stderr
    assert not (srv.ws / "leak.txt").exists()           # held in the stage, not applied
    assert (srv.ws / "fine.txt").read_text() == "ok\n"
    assert srv.stages()                                 # kept for a person to see
    assert TOKEN not in r.stderr


def test_the_ledger_never_keeps_a_brokered_value(srv):
    env = _env(srv)
    r = srv.run(srv.brokered, "-c",
                f"printf 'protocol=https\nhost={HOST}:{srv.server.port}\n\n' | "
                "/run/ringfence/git-credential-ringfence get", env=env)
    assert r.returncode == 0, r.stderr
    # the command may print what it got; the caller sees it redacted (issue 21 review)
    assert TOKEN not in r.stdout and "password=[brokered credential]" in r.stdout
    export = subprocess.run([*CLI, "ledger", "export", "--jsonl"], env=env,
                            capture_output=True, text=True, check=True).stdout
    assert export and TOKEN not in export and "[brokered credential]" in export
    for path in srv.state.rglob("*"):
        if path.is_file():
            assert TOKEN.encode() not in path.read_bytes(), path


GET = ("printf 'protocol=https\\nhost={h}\\n\\n' | /run/ringfence/git-credential-ringfence get"
       " | sed -n 's/^password=//p'")


def test_a_token_in_a_name_a_link_or_the_tooling_dir_does_not_survive(srv):
    env = _env(srv)
    tooling = srv.home / ".cache" / "ringfence" / "tooling"
    get = GET.format(h=f"{HOST}:{srv.server.port}")
    r = srv.run(srv.brokered, "-c",
                f't=$({get}); touch "name-$t"; ln -s "$t" link; '
                f'echo "$t" > "$HOME/.cache/ringfence/tooling/kept"; '
                f'touch -d 2001-01-01 "$HOME/.cache/ringfence/tooling/kept"; echo done',
                env=env)
    assert "done" in r.stdout and "RF653" in r.stderr, r.stderr
    assert not list(srv.ws.glob("name-*")) and not (srv.ws / "link").is_symlink()
    assert not (tooling / "kept").exists()               # removed: tooling is not staged
    for path in tooling.rglob("*"):
        if path.is_file():
            assert TOKEN.encode() not in path.read_bytes(), path


def test_a_workspace_profile_cannot_add_a_credential(srv):
    """Its source would be read (a command run) on the host: refused before anything."""
    planted = srv.root / "PWNED"
    (srv.ws / ".ringfence.toml").write_text(
        f'[[credentials]]\nname = "x"\nfrom = "command:touch {planted}"\n'
        'domains = ["example.com"]\n')
    r = subprocess.run([*CLI, "run", "-w", str(srv.ws), "--", "true"], cwd=srv.ws,
                       env=_env(srv), capture_output=True, text=True, timeout=60)
    assert r.returncode == 125 and "RF513" in r.stderr, r.stderr
    assert not planted.exists()
