"""What ``init claude-code`` writes where (issue 20 §3, §4).

Project settings (``.claude/settings.json``) are committed with the project, so
they hold nothing machine-specific and nothing personal:

* the hook entries, calling ``ringfence`` by name (found on PATH; ``--user``
  settings, which are one machine's, use this ringfence's absolute path);
* Edit denials for the protected files inside the project, written relative to
  it (``Edit(/.git/hooks/**)``: Claude Code resolves ``/path`` from the directory
  that holds ``.claude/``), and ``WebFetch`` denials.

Personal settings (``.claude/settings.local.json``, which Claude Code keeps out
of git) get the rest: ``Read(...)`` denials of credential stores, protected
paths outside the project (the tooling dir), and, without ``--wrap``,
Claude Code's own ``sandbox`` block (absolute ``//`` paths of this machine).

With ``--wrap`` (the default) ringfence is the sandbox: an enabled Claude Code
``sandbox`` block around ``ringfence run`` would nest one sandbox in the other
(``ringfence run`` cannot mount its overlay inside it: RF640). ``init`` removes
it from the files it writes, showing the diff, and ``doctor`` reports one left
anywhere else (:func:`nesting`).
"""

from __future__ import annotations

import json
import os
from pathlib import Path


def _relative(path: str, workspace: str) -> str | None:
    """``/rel`` (from the project root) for a path inside the workspace, else None."""
    ws = os.path.realpath(workspace).rstrip("/")
    p = os.path.normpath(path)
    if p == ws:
        return "/"
    return p[len(ws):] if p.startswith(ws + "/") else None


# Protected names that are directories: their contents need ``/**`` too.
_DIRS = (".git/hooks", ".vscode", ".idea", ".claude", ".codex")


def _edit_denials(path: str, shown: str) -> list[str]:
    if os.path.isdir(path) or path.rstrip("/").endswith(_DIRS):
        return [f"Edit({shown.rstrip('/')}/**)"]
    return [f"Edit({shown})"]


def split(profile, export: dict, workspace: str, *, wrap: bool) -> tuple[dict, dict]:
    """``(project, local)`` settings blocks for ``profile`` (see the module doc).

    The profile's command rules are not copied as ``Bash(...)`` rules: the hook
    enforces them on every call, Claude Code's text matching misses other spellings
    (``git -C d push``), and its own ask rule would prompt again after a yes that
    ringfence granted exactly."""
    from ringfence.compiler.backends.exportlib import protected, read_denied

    project: list[str] = []
    local: list[str] = []
    for path in protected(profile, workspace):
        rel = _relative(path, workspace)
        if rel is not None:
            project += _edit_denials(path, rel)
        else:
            local += _edit_denials(path, "/" + path if path.startswith("/") else path)
    for path in read_denied(profile, workspace):
        p = "/" + path if path.startswith("/") else path
        local += [f"Read({p})", f"Read({p}/**)"]
    for rule in export.get("permissions", {}).get("deny", []):
        if rule.startswith("WebFetch"):
            project.append(rule)

    def block(rules: list[str]) -> dict:
        return {"permissions": {"deny": list(dict.fromkeys(rules))}} if rules else {}

    out_local = block(local)
    if not wrap and "sandbox" in export:
        out_local["sandbox"] = export["sandbox"]
    return block(project), out_local


def nests(settings: dict) -> bool:
    """Does this settings object enable Claude Code's own sandbox?"""
    sb = settings.get("sandbox")
    return isinstance(sb, dict) and sb.get("enabled") is True


def drop_nesting(settings: dict) -> dict:
    """The settings without an enabled ``sandbox`` block (kept when it is off)."""
    return {k: v for k, v in settings.items() if k != "sandbox"} if nests(settings) else settings


def _read(path: Path) -> dict:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _wraps(settings: dict) -> bool:
    hooks = settings.get("hooks")
    if not isinstance(hooks, dict):
        return False
    return any("hook claude-code" in str(h.get("command", "")) and "--wrap" in
               str(h.get("command", ""))
               for entries in hooks.values() if isinstance(entries, list)
               for e in entries if isinstance(e, dict)
               for h in (e.get("hooks") or []) if isinstance(h, dict))


def settings_files(workspace: str, home: str) -> list[Path]:
    return [Path(home) / ".claude" / "settings.json",
            Path(workspace) / ".claude" / "settings.json",
            Path(workspace) / ".claude" / "settings.local.json"]


def nesting(workspace: str, home: str) -> tuple[bool, str]:
    """``(ok, detail)``: is a --wrap hook installed while some settings file
    enables Claude Code's sandbox around it?"""
    files = [(p, _read(p)) for p in settings_files(workspace, home)]
    wrapping = [p for p, d in files if _wraps(d)]
    boxed = [p for p, d in files if nests(d)]
    if not wrapping:
        return True, "no ringfence --wrap hook in Claude Code's settings"
    if boxed:
        return False, (f"the ringfence --wrap hook ({wrapping[0]}) runs inside Claude Code's "
                       f"sandbox, enabled in {', '.join(map(str, boxed))}: ringfence run "
                       "cannot set up its sandbox in there (RF640)")
    return True, "the --wrap hook runs outside Claude Code's sandbox (no nesting)"


__all__ = ["drop_nesting", "nesting", "nests", "settings_files", "split"]
