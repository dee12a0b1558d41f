"""`ringfence init codex|gemini|goose|claude-code --mcp` (issue 24): each client's config
gets exactly our server entry; every other key, table and comment stays; a shape we
do not edit is refused with nothing changed; a second run changes nothing."""

from __future__ import annotations

import json
import subprocess
import tomllib
from pathlib import Path

import pytest

from ringfence.mcp import clients
from ringfence.rfcore.errors import UsageError
from tests.compiler.sandbox_util import CLI

ARGV = ["/opt/rf/bin/ringfence", "mcp", "--profile", "build"]
P = Path("/x/config")


def test_codex_keeps_other_tables_and_comments_and_replaces_only_ours():
    old = ('# my codex\nmodel = "o3"\n\n[mcp_servers.ringfence]\ncommand = "old"\n\n'
           '[mcp_servers.ringfence.env]\nA = "1"\n\n[mcp_servers.other]\ncommand = "o" '
           '# keep\n\n[features]\nshell_tool = false\n')
    new = clients.merge("codex", old, ARGV, P)
    doc = tomllib.loads(new)
    assert doc["mcp_servers"]["ringfence"] == {"command": ARGV[0], "args": ARGV[1:],
                                               "tool_timeout_sec": 3600}
    assert doc["mcp_servers"]["other"] == {"command": "o"}
    assert doc["features"] == {"shell_tool": False} and doc["model"] == "o3"
    assert "# my codex" in new and "# keep" in new and '"old"' not in new
    assert clients.merge("codex", new, ARGV, P) == new          # idempotent


def test_codex_refuses_an_inline_definition_and_bad_toml():
    with pytest.raises(UsageError, match="inline"):
        clients.merge("codex", 'mcp_servers = { ringfence = { command = "x" } }\n', ARGV, P)
    with pytest.raises(UsageError, match="cannot read"):
        clients.merge("codex", "[mcp_servers\n", ARGV, P)


def test_codex_strings_that_need_quoting_read_back_exactly():
    argv = ['/path with "quotes"/and\\back\\slash', "mcp"]
    new = clients.merge("codex", "", argv, P)
    assert tomllib.loads(new)["mcp_servers"]["ringfence"]["command"] == argv[0]


def test_gemini_and_claude_code_json_keep_other_servers_and_keys():
    old = json.dumps({"theme": "x", "mcpServers": {"gh": {"command": "g"}}})
    doc = json.loads(clients.merge("gemini", old, ARGV, P))
    assert doc["theme"] == "x" and doc["mcpServers"]["gh"] == {"command": "g"}
    assert doc["mcpServers"]["ringfence"]["trust"] is False
    assert doc["mcpServers"]["ringfence"]["args"] == ARGV[1:]
    mcp = json.loads(clients.merge("claude-code", "", ARGV, P))
    assert mcp == {"mcpServers": {"ringfence": {"type": "stdio", "command": ARGV[0],
                                                "args": ARGV[1:]}}}
    with pytest.raises(UsageError, match="not an object"):
        clients.merge("gemini", '{"mcpServers": []}', ARGV, P)


GOOSE = """\
# goose
active_provider: anthropic
extensions:
  developer:
    enabled: true
    type: builtin

  ringfence:
    cmd: old
    args: []
GOOSE_MODE: smart_approve
"""


def test_goose_yaml_replaces_only_our_extension():
    new = clients.merge("goose", GOOSE, ARGV, P)
    assert "cmd: old" not in new
    assert "  developer:\n    enabled: true\n    type: builtin\n" in new
    assert '  ringfence:\n    name: "ringfence"\n    type: "stdio"\n' in new
    assert f'    cmd: "{ARGV[0]}"\n' in new and '    enabled: true\n' in new
    assert new.endswith("GOOSE_MODE: smart_approve\n") and new.startswith("# goose\n")
    assert clients.merge("goose", new, ARGV, P) == new
    fresh = clients.merge("goose", "active_provider: x\n", ARGV, P)
    assert fresh.startswith("active_provider: x\nextensions:\n  ringfence:\n")
    with pytest.raises(UsageError, match="block mapping"):
        clients.merge("goose", "extensions: {}\n", ARGV, P)


def test_scopes_that_do_not_exist_are_refused():
    with pytest.raises(UsageError):
        clients.config_path("goose", "project", "/w", {"HOME": "/h"})
    with pytest.raises(UsageError):
        clients.config_path("claude-code", "user", "/w", {"HOME": "/h"})
    assert clients.config_path("codex", "user", "/w", {"HOME": "/h", "CODEX_HOME": "/c"}) \
        == Path("/c/config.toml")


def test_cli_dry_run_shows_the_diff_writes_nothing_and_says_how_to_turn_the_shell_off(
        tmp_path):
    home, ws = tmp_path / "home", tmp_path / "ws"
    home.mkdir()
    ws.mkdir()
    env = {"HOME": str(home), "PATH": "/usr/bin:/bin", "RINGFENCE_HOME": str(tmp_path / "s")}
    for client, path in (("codex", home / ".codex/config.toml"),
                         ("gemini", home / ".gemini/settings.json"),
                         ("goose", home / ".config/goose/config.yaml"),
                         ("claude-code", ws / ".mcp.json")):
        r = subprocess.run([*CLI, "init", client, "--mcp", "--dry-run", "--workspace",
                            str(ws)], env=env, capture_output=True, text=True, timeout=60)
        assert r.returncode == 0, r.stderr
        assert "+++" in r.stdout and "--dry-run: nothing was written" in r.stdout
        assert "own shell off" in r.stdout or "shell is in" in r.stdout
        assert not path.exists()
        w = subprocess.run([*CLI, "init", client, "--mcp", "--workspace", str(ws)], env=env,
                           capture_output=True, text=True, timeout=60)
        assert w.returncode == 0 and path.exists(), w.stderr
        assert "\"mcp\"" in path.read_text()
    r = subprocess.run([*CLI, "init", "codex"], env=env, capture_output=True, text=True,
                       timeout=60)
    assert r.returncode != 0 and "--mcp" in r.stderr and "Traceback" not in r.stderr
