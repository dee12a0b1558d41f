"""`ringfence profile show`: the resolved settings as data, valid TOML, or rows.

:func:`profile_toml` prints a profile file that loads back to the same settings
and lints clean (tests/profiles/test_show.py saves it, lints it and loads it):
no ``null`` (an unset limit is left out), comments only as ``#`` lines, and long
lists one item per line so nothing is broken mid-word.
"""

from __future__ import annotations

import json
import re
from typing import Any

from .chain import ACTIONS
from .model import Profile

_BARE_KEY = re.compile(r"[A-Za-z0-9_-]+")
_WIDTH = 76


def profile_summary(profile: Profile) -> dict[str, Any]:
    """Plain-data view of the resolved settings (for `profile show --format json`)."""
    return {
        "name": profile.name, "source": profile.source, "extends": list(profile.extends),
        "sandbox": profile.sandbox, "host": profile.host,
        "filesystem": {"writable": list(profile.filesystem.writable),
                       "private_tmp": profile.filesystem.private_tmp,
                       "read_deny": list(profile.filesystem.read_deny),
                       "write_protect": list(profile.filesystem.write_protect),
                       "mask_home": profile.filesystem.mask_home,
                       "read_allow": list(profile.filesystem.read_allow)},
        "network": {"mode": profile.network.mode, "allow": list(profile.network.allow),
                    "deny": list(profile.network.deny),
                    "allow_unix_sockets": profile.network.allow_unix_sockets},
        "env": {"pass": list(profile.env.pass_), "set": dict(profile.env.set),
                "allow_credentials": list(profile.env.allow_credentials)},
        "tooling": {"dir": profile.tooling.dir, "enabled": profile.tooling.enabled},
        "limits": {k: getattr(profile.limits, k) for k in
                   ("timeout", "memory_mb", "pids", "file_size_mb")},
        "commands": {a: [r.pattern for r in profile.rules if r.action == a] for a in ACTIONS},
        "hook": {"grant": profile.hook_grant},
        "credentials": [{"name": c.name, "from": c.source, "domains": list(c.domains)}
                        for c in profile.credentials],
        "digest": profile.digest,
    }


def _key(name: str) -> str:
    return name if _BARE_KEY.fullmatch(name) else _string(name)


def _string(value: str) -> str:
    # A JSON string without ASCII escaping is a TOML basic string: TOML knows the
    # same escapes (\" \\ \b \f \n \r \t \uXXXX) and JSON never emits others.
    return json.dumps(value, ensure_ascii=False)


def _value(value: Any, indent: str) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, str):
        return _string(value)
    items = [_value(v, indent + "  ") for v in value]
    one = "[" + ", ".join(items) + "]"
    if len(indent) + len(one) <= _WIDTH and "\n" not in one:
        return one
    return "[\n" + "".join(f"{indent}  {item},\n" for item in items) + f"{indent}]"


def profile_toml(profile: Profile, *, why: str | None = None) -> str:
    """The resolved profile as a standalone TOML profile file (no ``extends``)."""
    data = profile_summary(profile)
    lines = [f"# ringfence profile {profile.name!r} from {profile.source}, fully resolved"]
    if profile.extends:
        lines.append("# (merged from: " + " -> ".join(profile.extends) + ")")
    if why:
        lines.append(f"# active because: {why}")
    if not profile.sandbox:
        lines.append("# WARNING: this profile runs commands WITHOUT a sandbox")
    lines.append(f"# digest {profile.digest}")
    lines.append("")
    lines.append(f"name = {_string(profile.name)}")
    if profile.description:
        lines.append(f"description = {_string(profile.description)}")
    lines.append(f"sandbox = {_value(profile.sandbox, '')}")
    lines.append(f"host = {_string(profile.host)}")
    for section in ("filesystem", "network", "env", "tooling", "limits", "commands", "hook"):
        table = data[section]
        nested = {k: v for k, v in table.items() if isinstance(v, dict)}
        flat = {k: v for k, v in table.items() if not isinstance(v, dict) and v is not None}
        lines += ["", f"[{section}]"]
        lines += [f"{_key(k)} = {_value(v, '')}" for k, v in flat.items()]
        for name, sub in nested.items():
            lines += ["", f"[{section}.{_key(name)}]"]
            lines += [f"{_key(k)} = {_value(v, '')}" for k, v in sub.items()]
    return "\n".join(lines) + "\n"


def profile_rows(profile: Profile) -> list[tuple[str, str]]:
    """(setting, value) rows for `profile show --format table`: plainly not TOML."""
    data = profile_summary(profile)
    rows = [("name", profile.name), ("source", profile.source),
            ("extends", " -> ".join(profile.extends) or "-"),
            ("sandbox", "on" if profile.sandbox else "OFF (full host access)"),
            ("host requests", profile.host)]
    for section in ("filesystem", "network", "env", "tooling", "limits", "commands", "hook"):
        for key, value in data[section].items():
            if isinstance(value, dict):
                text = ", ".join(f"{k}={v}" for k, v in value.items()) or "-"
            elif isinstance(value, list):
                text = "\n".join(value) or "-"
            elif value is None:
                text = "unset"
            else:
                text = str(value).lower() if isinstance(value, bool) else str(value)
            rows.append((f"{section}.{key}", text))
    rows.append(("digest", profile.digest))
    return rows
