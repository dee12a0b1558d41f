"""Where a hook grant applies (issue 20b items 5, 6), through the real hook.

Without --wrap every call runs on the machine: it is a host request, looked up in
host grants only, and a yes stores a host grant. A sandbox grant (a yes under
--wrap) never covers an unwrapped call; a yes to a compound under --wrap grants
each key the person saw, an ask rule's capability only exactly. Asserted on the
host where something would run: the directory `rm` would delete still exists.
"""

from __future__ import annotations

import re
import sqlite3
import subprocess
from pathlib import Path

from tests.ringfence.test_ask_grants import (  # noqa: F401  (fixtures)
    _remote_refs, env, event, grants, pre, repo, send, yes)


def test_unwrapped_yes_is_a_host_grant(env, repo):
    _, ws, _ = repo
    yes(env, "make -n", ws, "toolu_1")
    assert [k for k, _, _ in grants(env)] == ["make"]
    assert pre(env, "make -n 2>&1 | tail -3", ws, "toolu_2") == "allow"


def test_a_sandbox_grant_never_covers_an_unwrapped_call(env, repo):
    tmp, ws, _ = repo
    (ws / "build").mkdir()
    (ws / "build" / "keep").write_text("x")
    yes(env, "git push origin main; rm -rf build", ws, "toolu_1", "--wrap")
    keys = sorted(k for k, _, _ in grants(env))
    # `rm` as a sandbox key; `git push` (an ask rule) only exactly, in the sandbox
    assert keys[0] == "[sandbox] rm" and len(keys) <= 2, keys
    assert all(k.startswith("[sandbox] ") for k in keys), keys
    for i, cmd in enumerate(("rm -rf build", "git push origin main; rm -rf build")):
        d = pre(env, cmd, ws, f"toolu_h{i}")          # unwrapped: on the machine
        if d == "allow":
            subprocess.run(["bash", "-c", cmd], cwd=ws, capture_output=True, timeout=60)
        assert d == "ask", cmd
        assert (ws / "build" / "keep").exists()
    # ... and under --wrap it still covers the sandboxed `rm`
    assert pre(env, "rm -rf build", ws, "toolu_w", "--wrap") == "allow"


def test_a_host_grant_covers_the_wrapped_call_too(env, repo):
    _, ws, _ = repo
    yes(env, "make -n", ws, "toolu_1")
    assert pre(env, "make -n", ws, "toolu_2", "--wrap") == "allow"


def _hook_asks(env):
    c = sqlite3.connect(Path(env["RINGFENCE_HOME"]) / "ledger.db")
    try:
        return c.execute("SELECT * FROM hook_asks").fetchall(), \
            [d[1] for d in c.execute("PRAGMA table_info(hook_asks)")]
    finally:
        c.close()


def test_auto_mode_is_unattended(env, repo):
    _, ws, _ = repo
    p = dict(event("PreToolUse", "make -n", ws, "toolu_1"), permission_mode="auto")
    assert send(env, p)["permissionDecision"] == "ask"
    assert send(env, dict(event("PostToolUse", "make -n", ws, "toolu_1"),
                          permission_mode="auto")) is None
    assert grants(env) == []
    assert pre(env, "make -n", ws, "toolu_2") == "ask"


def test_the_stored_wrapped_text_has_no_consent_token(env, repo):
    _, ws, _ = repo
    out = send(env, event("PreToolUse", "git push origin main", ws, "toolu_1"), "--wrap")
    assert out["permissionDecision"] == "ask"
    text = out["updatedInput"]["command"]
    rows, cols = _hook_asks(env)
    assert rows
    stored = dict(zip(cols, rows[0]))
    token = re.search(r"--hook-consent (\S+)", text).group(1)
    assert len(token) >= 32
    assert stored["wrapped"] and token not in stored["wrapped"]
    assert token not in " ".join(str(v) for v in stored.values())
    # the yes (the Post of the wrapped text Claude ran) still settles the ask
    post = event("PostToolUse", text, ws, "toolu_1")
    assert send(env, post, "--wrap") is None
    assert [k for k, _, _ in grants(env)]         # the exact push grant was stored
