"""Where a profile's writable roots are: ``{workspace}``, ``{tooling}`` and ``~`` expanded.

Pure string work on the profile model, used by the compiler (mounts), the
workspace room (``staging/settle.py``: no new link may reach another writable
root) and ``compiler/writable.py``. Here, below both, so that the workspace room
never imports the compiler.
"""

from __future__ import annotations

import posixpath

from ringfence.profiles.model import Profile


def _norm(path: str) -> str:
    return posixpath.normpath(path)


def expand(template: str, *, workspace: str | None, tooling: str, home: str) -> str | None:
    """Expand {workspace}, {tooling} and ~; None if it needs a workspace we lack."""
    if "{workspace}" in template and workspace is None:
        return None
    text = template.replace("{workspace}", workspace or "").replace("{tooling}", tooling)
    if text == "~" or text.startswith("~/"):
        text = home + text[1:]
    if not text.startswith("/"):
        return None
    return _norm(text)


DEFAULT_TOOLING = "~/.cache/ringfence/tooling"     # profiles/model.py Tooling.dir


def _tooling_dir(profile: Profile, home: str, default: str = "") -> str:
    raw = profile.tooling.dir
    if raw == DEFAULT_TOOLING and default:
        return _norm(default)       # follows RINGFENCE_HOME / XDG_CACHE_HOME (host facts)
    return _norm(home + raw[1:]) if raw == "~" or raw.startswith("~/") else _norm(raw)


def _writable_templates(profile: Profile) -> list[str]:
    out = list(profile.filesystem.writable)
    if profile.tooling.enabled and "{tooling}" not in out:
        out.append("{tooling}")
    return out
