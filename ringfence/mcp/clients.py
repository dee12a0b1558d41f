"""``ringfence init codex|gemini|goose|claude-code --mcp``: register ``ringfence mcp``
in each client's own config file (issue 24). Pure text in, text out, then the same
diff / ``--dry-run`` / atomic write as ``init claude-code`` (``hooks/install.py``).

| client | file | where the server goes |
|---|---|---|
| Codex | ``~/.codex/config.toml`` (``$CODEX_HOME``), or ``.codex/config.toml`` | ``[mcp_servers.ringfence]`` command, args, tool_timeout_sec |
| Gemini CLI | ``~/.gemini/settings.json``, or ``.gemini/settings.json`` | ``mcpServers.ringfence`` command, args, timeout (ms), trust false |
| Goose | ``~/.config/goose/config.yaml`` | ``extensions.ringfence`` type stdio, cmd, args, enabled, timeout |
| Claude Code | ``<project>/.mcp.json`` | ``mcpServers.ringfence`` type stdio, command, args |

Only our own entry is replaced; every other key, table and comment stays. The TOML
and YAML are edited as text (no writer for either in the stdlib) in the one shape
each client writes, and a file in another shape is refused with what to add by
hand, never rewritten on a guess. Strings are written JSON-quoted, which TOML basic
strings and YAML double-quoted scalars both read back exactly.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

from ringfence.rfcore.errors import UsageError

NAME = "ringfence"
TIMEOUT = 3600          # seconds: a build may run long; ringfence's own limit still holds

SHELL_OFF = {
    "codex": "turn Codex's own shell off in ~/.codex/config.toml:  [features] "
             "shell_tool = false  (or run: codex --disable shell_tool)",
    "gemini": 'turn Gemini CLI\'s own shell off in settings.json:  "tools": {"exclude": '
              '["run_shell_command"]}',
    "goose": "Goose's shell is in its built-in developer extension (with its file "
             "editing tools): turn it off with `goose configure` > Toggle Extensions, "
             "or extensions.developer.enabled: false",
    "claude-code": 'turn Claude Code\'s own shell off in .claude/settings.json:  '
                   '"permissions": {"deny": ["Bash"]}  (or keep it under '
                   '`ringfence init claude-code`, the hook)',
}


def config_path(client: str, scope: str, workspace: str, env) -> Path:
    home = Path(env.get("HOME") or os.path.expanduser("~"))
    if client == "codex":
        if scope == "project":
            return Path(workspace) / ".codex" / "config.toml"
        return Path(env.get("CODEX_HOME") or home / ".codex") / "config.toml"
    if client == "gemini":
        base = Path(workspace) if scope == "project" else home
        return base / ".gemini" / "settings.json"
    if client == "goose":
        if scope == "project":
            raise UsageError("Goose has no project config file for extensions",
                             hint="ringfence init goose --mcp (writes ~/.config/goose/config.yaml)")
        return Path(env.get("XDG_CONFIG_HOME") or home / ".config") / "goose" / "config.yaml"
    if client == "claude-code":
        if scope != "project":
            raise UsageError("init claude-code --mcp writes the project's .mcp.json only",
                             hint="for every project: claude mcp add --scope user ringfence "
                                  "-- ringfence mcp")
        return Path(workspace) / ".mcp.json"
    raise UsageError(f"unknown client {client!r}", hint="codex, gemini, goose or claude-code")


def entry(client: str, argv: list[str]) -> dict:
    command, args = argv[0], argv[1:]
    if client == "codex":
        return {"command": command, "args": args, "tool_timeout_sec": TIMEOUT}
    if client == "gemini":
        return {"command": command, "args": args, "timeout": TIMEOUT * 1000, "trust": False,
                "description": "ringfence: shell commands in a sandbox, approvals by a person"}
    if client == "goose":
        return {"name": NAME, "type": "stdio", "cmd": command, "args": args, "enabled": True,
                "timeout": TIMEOUT, "envs": {}, "env_keys": [],
                "description": "ringfence: shell commands in a sandbox"}
    return {"type": "stdio", "command": command, "args": args}


def merge(client: str, old: str, argv: list[str], path: Path) -> str:
    """The new text of the config file with our server registered."""
    mine = entry(client, argv)
    if client in ("gemini", "claude-code"):
        return _json(old, mine, path)
    if client == "codex":
        return _toml(old, mine, path)
    return _yaml(old, mine, path)


def _json(old: str, mine: dict, path: Path) -> str:
    try:
        data = json.loads(old) if old.strip() else {}
    except json.JSONDecodeError as exc:
        raise UsageError(f"cannot read {path}: {exc}; nothing was changed") from None
    servers = data.get("mcpServers", {}) if isinstance(data, dict) else None
    if not isinstance(servers, dict):
        raise UsageError(f"{path}: mcpServers is not an object; nothing was changed")
    data["mcpServers"] = {**servers, NAME: mine}
    return json.dumps(data, indent=2, ensure_ascii=False) + "\n"


_HEADER = re.compile(r"^\s*\[\[?\s*([^\]]+?)\s*\]\]?\s*(?:#.*)?$")


def _toml(old: str, mine: dict, path: Path) -> str:
    import tomllib

    try:
        before = tomllib.loads(old)
    except tomllib.TOMLDecodeError as exc:
        raise UsageError(f"cannot read {path}: {exc}; nothing was changed") from None
    ours = (f"mcp_servers.{NAME}", f'mcp_servers."{NAME}"')
    kept, skipping, found = [], False, False
    for line in old.splitlines(True):
        m = _HEADER.match(line)
        if m:
            table = m.group(1).replace(" ", "")
            skipping = any(table == t or table.startswith(t + ".") for t in ours)
            found = found or skipping
        if not skipping:
            kept.append(line)
    if NAME in (before.get("mcp_servers") or {}) and not found:
        raise UsageError(f"{path} defines mcp_servers.{NAME} inline; nothing was changed",
                         hint=f"remove it, or edit it by hand to: {_toml_block(mine).strip()}")
    text = "".join(kept).rstrip("\n")
    new = (text + "\n\n" if text else "") + _toml_block(mine)
    after = tomllib.loads(new)
    if after.get("mcp_servers", {}).get(NAME) != mine:      # never write a guess
        raise UsageError(f"{path}: could not register the server safely; nothing was changed")
    return new


def _toml_block(mine: dict) -> str:
    lines = [f"[mcp_servers.{NAME}]"]
    for key, value in mine.items():
        lines.append(f"{key} = {json.dumps(value, ensure_ascii=False)}")
    return "\n".join(lines) + "\n"


def _yaml(old: str, mine: dict, path: Path) -> str:
    lines = old.splitlines(True)
    start = next((i for i, line in enumerate(lines) if re.match(r"^extensions:\s*(#.*)?$",
                                                                 line.rstrip("\n"))), None)
    if start is None:
        if any(re.match(r"^extensions\s*:", line) for line in lines):
            raise UsageError(f"{path}: 'extensions' is not a block mapping; nothing was changed",
                             hint="add by hand:\n" + _yaml_block(mine, "  ", top=True))
        text = "".join(lines).rstrip("\n")
        return (text + "\n" if text else "") + _yaml_block(mine, "  ", top=True)
    end = start + 1
    while end < len(lines) and (not lines[end].strip() or lines[end][0] in " \t#"):
        end += 1
    body = lines[start + 1:end]
    indent = next((re.match(r"^(\s+)", line).group(1) for line in body
                   if line.strip() and not line.lstrip().startswith("#")), "  ")
    out, i = [], 0
    while i < len(body):
        line = body[i]
        if re.match(rf"^{re.escape(indent)}{NAME}:\s*(#.*)?$", line.rstrip("\n")):
            i += 1
            while i < len(body) and (not body[i].strip() or
                                     body[i].startswith(indent + " ") or
                                     body[i].startswith(indent + "\t")):
                i += 1
            continue
        out.append(line)
        i += 1
    while out and not out[-1].strip():
        out.pop()
    block = _yaml_block(mine, indent)
    tail = "".join(lines[end:])
    return "".join(lines[:start + 1]) + "".join(out) + block + ("\n" + tail if tail else "")


def _yaml_block(mine: dict, indent: str, top: bool = False) -> str:
    inner = indent * 2
    rows = [f"{indent}{NAME}:"]
    for key, value in mine.items():
        rows.append(f"{inner}{key}: {json.dumps(value, ensure_ascii=False)}")
    return ("extensions:\n" if top else "") + "\n".join(rows) + "\n"
