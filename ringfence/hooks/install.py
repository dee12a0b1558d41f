"""``ringfence init claude-code``: merge the hook and the exported sandbox settings
into Claude Code's ``settings.json``, idempotently, never dropping a user's key.

Merge rules (pure: :func:`merge` takes and returns plain data):

* ``hooks.<Event>``: one ``{"matcher": "Bash", "hooks": [{"type": "command",
  "command": ...}]}`` entry per event. An existing ringfence hook (any command
  containing ``hook claude-code``) is updated in place; every other hook stays.
* ``sandbox`` and ``permissions``: tables merge recursively; lists are the
  user's entries followed by ours that are missing; scalars take the profile's
  value (the diff shows each change). Export bookkeeping (``_unsupported``,
  ``_source``) is not written.
* ``--user`` settings apply to every project, so workspace paths (which only
  mean one project) are left out of them; ``--project`` writes them.

The diff is shown before anything is written; ``--dry-run`` writes nothing. The
file is replaced atomically (write + rename) with its mode kept.
"""

from __future__ import annotations

import difflib
import json
import os
import shlex
from pathlib import Path

from ringfence.rfcore.errors import UsageError

EVENTS = ("PreToolUse", "PostToolUse", "PostToolUseFailure", "PermissionRequest",
          "PermissionDenied")
MARK = "hook claude-code"


def hook_command(prog: list[str], profile: str | None, wrap: bool,
                 headless: bool = False) -> str:
    args = [*prog, "hook", "claude-code"]
    if profile:
        args += ["--profile", profile]
    if wrap:
        args.append("--wrap")
    if headless:
        args.append("--headless")
    return shlex.join(args)


def _union(mine: list, ours: list) -> list:
    return list(mine) + [x for x in ours if x not in mine]


def _deep(mine, ours):
    if isinstance(mine, dict) and isinstance(ours, dict):
        out = dict(mine)
        for k, v in ours.items():
            out[k] = _deep(mine[k], v) if k in mine else v
        return out
    if isinstance(mine, list) and isinstance(ours, list):
        return _union(mine, ours)
    return ours


def _merge_hooks(hooks: dict, command: str) -> dict:
    out = dict(hooks)
    for event in EVENTS:
        entries = [dict(e) if isinstance(e, dict) else e for e in out.get(event, [])]
        found = False
        for e in entries:
            if not isinstance(e, dict) or not isinstance(e.get("hooks"), list):
                continue
            new = []
            for h in e["hooks"]:
                if isinstance(h, dict) and MARK in str(h.get("command", "")):
                    if not found:
                        new.append(dict(h, type="command", command=command))
                    found = True
                else:
                    new.append(h)
            e["hooks"] = new
        entries = [e for e in entries if not (isinstance(e, dict) and e.get("hooks") == [])]
        if not found:
            entries.append({"matcher": "Bash",
                            "hooks": [{"type": "command", "command": command}]})
        out[event] = entries
    return out


def _drop_workspace_paths(block: dict, workspace: str) -> dict:
    """For user settings: no path inside (or equal to) the one workspace."""
    ws = "/" + workspace.rstrip("/")

    def keep(v):
        return not (isinstance(v, str) and (v == ws or v.startswith(ws + "/")
                                            or f"({ws}" in v))

    def walk(x):
        if isinstance(x, dict):
            return {k: walk(v) for k, v in x.items()}
        if isinstance(x, list):
            return [walk(v) for v in x if keep(v)]
        return x
    return walk(block)


def merge(existing: dict, export: dict, command: str | None, *, user: bool,
          workspace: str) -> dict:
    block = {k: v for k, v in export.items() if not k.startswith("_")}
    if user:
        block = _drop_workspace_paths(block, workspace)
    out = dict(existing)
    for key, value in block.items():
        out[key] = _deep(existing[key], value) if key in existing else value
    if command is None:      # personal settings: no hook entries of ours
        return out
    hooks = existing.get("hooks", {})
    if not isinstance(hooks, dict):
        raise UsageError("the settings' \"hooks\" is not an object; nothing was changed")
    out["hooks"] = _merge_hooks(hooks, command)
    return out


def settings_path(scope: str, workspace: str, env) -> Path:
    if scope == "user":
        home = env.get("HOME") or os.path.expanduser("~")
        return Path(home) / ".claude" / "settings.json"
    return Path(workspace) / ".claude" / "settings.json"


def read_settings(path: Path) -> dict:
    if not path.exists():
        return {}
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise UsageError(f"cannot read {path}: {exc}; nothing was changed",
                         hint="fix or move the file, then run init again") from None
    if not isinstance(data, dict):
        raise UsageError(f"{path} is not a JSON object; nothing was changed")
    return data


def render(data: dict) -> str:
    return json.dumps(data, indent=2, ensure_ascii=False) + "\n"


def diff(path: Path, old: str, new: str) -> str:
    return "".join(difflib.unified_diff(old.splitlines(True), new.splitlines(True),
                                        fromfile=f"{path} (before)", tofile=f"{path} (after)"))


def write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    mode = path.stat().st_mode & 0o7777 if path.exists() else 0o644
    tmp = path.with_name(f".{path.name}.ringfence-{os.getpid()}")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, mode)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
