"""Issue 21 attack review: a brokered token must not outlive its run re-encoded.

A command that got the token from the broker writes it back into the workspace
base64-encoded (standard and URL-safe, at each alignment), hex, reversed,
gzip'ed, as a git loose object (zlib) or past the old 64 MiB scan cap in a
sparse file. Each is found on settle and held, never applied (RF653). The
ledger never keeps the token or its base64 form, and the token printed by the
command reaches the caller redacted. Through the real ``ringfence run``.
"""

from __future__ import annotations

import json
import shutil
import subprocess

import pytest

from .sandbox_util import CLI, make_box

pytestmark = [pytest.mark.sandbox,
              pytest.mark.skipif(shutil.which("bwrap") is None, reason="needs bubblewrap")]

# "~~~" and "???" give '+' and '/' in standard base64: the URL-safe form differs.
TOKEN = "rfp~~~7Qz???" + "k3M9xW2vB8nL5tR1" * 2
GET = ("t=$(printf 'protocol=https\\nhost=example.com\\n\\n' | "
       "/run/ringfence/git-credential-ringfence get | sed -n 's/^password=//p')")
PY = "python3 -c \"import sys,base64,binascii,zlib;t=sys.argv[1].encode();{}\" \"$t\""

CASES = {
    "b64-0": PY.format("open('o','wb').write(base64.b64encode(t))"),
    "b64-1": PY.format("open('o','wb').write(base64.b64encode(b'x'+t))"),
    "b64-2": PY.format("open('o','wb').write(base64.b64encode(b'xy'+t))"),
    "urlsafe-1": PY.format("open('o','wb').write(base64.urlsafe_b64encode(b'x'+t))"),
    "urlsafe-2": PY.format("open('o','wb').write(base64.urlsafe_b64encode(b'xy'+t))"),
    "hex": PY.format("open('o','wb').write(binascii.hexlify(t))"),
    "HEX": PY.format("open('o','wb').write(binascii.hexlify(t).upper())"),
    "reversed": PY.format("open('o','wb').write(t[::-1])"),
    "zlib": PY.format("open('o','wb').write(zlib.compress(b'pad '*99+t))"),
    "gzip": 'printf "%s" "$t" | gzip > o.gz',
    "git-object": 'printf "%s" "$t" | git hash-object -w --stdin',
    "sparse": PY.format("f=open('o','wb');f.seek(80*2**20);f.write(t)"),
}


@pytest.fixture
def pbox():
    b = make_box()
    p = b.root / "cred.toml"
    p.write_text('extends = "build"\n[[credentials]]\nname = "t"\nfrom = "env:RF_T"\n'
                 'domains = ["example.com"]\n')
    b.profile = str(p)
    b.penv = b.env(RF_T=TOKEN)
    yield b
    shutil.rmtree(b.root, ignore_errors=True)


@pytest.mark.parametrize("case", sorted(CASES))
def test_a_re_encoded_token_in_the_workspace_is_held(pbox, case):
    before = {str(p) for p in pbox.ws.rglob("*")}
    r = pbox.run(pbox.profile, "-c", f"{GET}; {CASES[case]}; echo written",
                 env=pbox.penv, timeout=120)
    assert "written" in r.stdout, r.stderr
    assert "RF653" in r.stderr, (case, r.stderr)
    new = {str(p) for p in pbox.ws.rglob("*") if p.is_file()} - before
    leaked = [p for p in new if "objects/" in p or p.endswith(("/o", "/o.gz"))]
    assert leaked == [], leaked                          # held in the stage, not applied


def test_a_harmless_compressed_or_encoded_file_is_applied(pbox):
    r = pbox.run(pbox.profile, "-c", f"{GET}; echo hello | gzip > h.gz; "
                 "echo aGVsbG8K > h.b64; printf x | git hash-object -w --stdin",
                 env=pbox.penv, timeout=120)
    assert r.returncode == 0 and "RF653" not in r.stderr, r.stderr
    assert (pbox.ws / "h.gz").exists() and (pbox.ws / "h.b64").exists()


def test_the_ledger_and_the_live_output_never_show_the_token(pbox):
    import base64

    b64 = base64.b64encode(TOKEN.encode()).decode()
    r = pbox.run(pbox.profile, "-c", f'{GET}; echo "got $t"; echo "$t" >&2; '
                 f'printf "%s" "$t" | base64 -w0; echo', env=pbox.penv)
    assert r.returncode == 0, r.stderr
    assert "got " in r.stdout
    assert TOKEN not in r.stdout and TOKEN not in r.stderr   # redacted on the way out
    assert "[brokered credential]" in r.stdout
    export = subprocess.run([*CLI, "ledger", "export", "--jsonl"], env=pbox.penv,
                            capture_output=True, text=True, check=True).stdout
    rows = [json.loads(line) for line in export.splitlines() if line.strip()]
    assert rows and TOKEN not in export and b64[:40] not in export
