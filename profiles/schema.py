"""The profile TOML schema, and validation of one parsed file against it.

Validation collects every problem (lint shows them all; the loader raises the
first). Each problem names its key path, so the line scanner can place it.
The schema is data: one row per key with its type and its documentation, which
``docs/profiles.md`` mirrors (a test checks every key is documented there).
"""

from __future__ import annotations

import re
from typing import Any, Callable

from .ranges import out_of_range
from .problem import Problem  # noqa: F401 (re-exported: the schema's problems)

CODE_UNKNOWN_KEY = "RF501"
CODE_BAD_VALUE = "RF502"
CODE_OUT_OF_RANGE = "RF550"


class _Coded(str):
    """A check's message that carries its own code (RF550 for a number out of range)."""

    code = CODE_OUT_OF_RANGE


Check = Callable[[Any], "str | None"]   # returns an error message, or None if fine


_NUL = "must not contain a NUL byte (no path, name or value can hold one)"


def _is_str(v: Any) -> str | None:
    if isinstance(v, str):
        return _NUL if "\0" in v else None
    return f"must be a string, not {_tname(v)}"


def _is_bool(v: Any) -> str | None:
    return None if isinstance(v, bool) else f"must be true or false, not {_tname(v)}"


def _limit(name: str) -> Check:
    """A number in its documented range (profiles/ranges.py); out of range is RF550."""
    def check(v: Any) -> str | None:
        bad = out_of_range(name, v)
        if bad is None:
            return None
        wrong_type, msg = bad
        return msg if wrong_type else _Coded(msg)
    return check


def _enum(*values: str) -> Check:
    def check(v: Any) -> str | None:
        if isinstance(v, str) and v in values:
            return None
        shown = " | ".join(f'"{x}"' for x in values)
        return f"must be one of {shown}, not {v!r}"
    return check


def _str_list(item: Check | None = None) -> Check:
    def check(v: Any) -> str | None:
        if not isinstance(v, list):
            return f"must be a list of strings, not {_tname(v)}"
        for i, x in enumerate(v):
            if not isinstance(x, str):
                return f"[{i}] must be a string, not {_tname(x)}"
            if "\0" in x:
                return f"[{i}] {_NUL}"
            if item is not None and (msg := item(x)) is not None:
                return f"[{i}] {msg}"
        return None
    return check


_TEMPLATE = re.compile(r"\{([^}]*)\}")


def _path(*, relative_ok: bool) -> Check:
    """A path template: absolute, ``~``-relative, or under {workspace}/{tooling}."""
    def check(p: str) -> str | None:
        if not p:
            return "must not be empty"
        if "\0" in p:
            return _NUL
        for name in _TEMPLATE.findall(p):
            if name not in ("workspace", "tooling"):
                return f"{p!r}: unknown placeholder {{{name}}} (use {{workspace}} or {{tooling}})"
        if relative_ok or p.startswith(("/", "~/", "{workspace}", "{tooling}")) or p == "~":
            return None
        return (f"{p!r} must be absolute, start with ~/ or with {{workspace}} / {{tooling}} "
                "(a relative path would depend on the current directory)")
    return check


_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_ENV_GLOB = re.compile(r"[A-Za-z0-9_*?]+")


def _env_name(glob: bool) -> Check:
    rx = _ENV_GLOB if glob else _ENV_NAME
    def check(n: str) -> str | None:
        return None if rx.fullmatch(n) else f"{n!r} is not a valid environment variable name"
    return check


def _env_set(v: Any) -> str | None:
    if not isinstance(v, dict):
        return f"must be a table of NAME = \"value\", not {_tname(v)}"
    for k, x in v.items():
        if not _ENV_NAME.fullmatch(k):
            return f"{k!r} is not a valid environment variable name"
        if not isinstance(x, str):
            return f"{k}: value must be a string, not {_tname(x)}"
        if "\0" in x:
            return f"{k}: {_NUL}"
    return None


def _extends(v: Any) -> str | None:
    if isinstance(v, str):
        return None if v else "must not be empty"
    if isinstance(v, list) and v and all(isinstance(x, str) and x for x in v):
        return None
    return "must be a profile name or path, or a non-empty list of them"


# key -> (check, doc). A nested dict is a table.
SCHEMA: dict[str, Any] = {
    "name": (_is_str, "profile name shown by `profile list` (default: file name)"),
    "description": (_is_str, "one line: what the profile is for"),
    "extends": (_extends, "parent profile(s): built-in name or path relative to this file"),
    "sandbox": (_is_bool, "false only for full host access (`host`, `--sandbox off`)"),
    "host": (_enum("deny", "ask", "escalate"), "what a host request does"),
    "filesystem": {
        "writable": (_str_list(_path(relative_ok=False)), "writable roots"),
        "private_tmp": (_is_bool, "private empty writable /tmp"),
        "read_deny": (_str_list(_path(relative_ok=False)), "paths masked inside the sandbox"),
        "write_protect": (_str_list(_path(relative_ok=True)),
                          "read-only even inside writable roots (relative = in each root)"),
        "mask_home": (_is_bool, "hide the home directory except the toolchain allowlist"),
        "read_allow": (_str_list(_path(relative_ok=False)),
                       "home paths added to the allowlist (read-only)"),
    },
    "credentials": (lambda v: _credentials(v),
                    "[[credentials]] name, from (env:NAME | file:PATH | command:CMD), "
                    "domains: brokered to git per run"),
    "network": {
        "mode": (_enum("none", "proxy"), "no network, or only through the filtering proxy"),
        "allow": (_str_list(), "domain patterns reachable through the proxy"),
        "deny": (_str_list(), "domain patterns always refused (deny beats allow)"),
        "allow_unix_sockets": (_is_bool, "permit socket(AF_UNIX) inside the sandbox"),
    },
    "env": {
        "pass": (_str_list(_env_name(glob=True)), "variables kept (names or globs)"),
        "set": (_env_set, "variables set to fixed values"),
        "allow_credentials": (_str_list(_env_name(glob=True)),
                              "credential-looking names explicitly allowed through"),
    },
    "tooling": {
        "dir": (lambda v: _is_str(v) or _path(relative_ok=False)(v),
                "writable tool cache directory"),
        "enabled": (_is_bool, "bind the tooling dir and point cache variables into it"),
    },
    "limits": {
        "timeout": (_limit("timeout"), "wall-clock seconds (more than 0, at most 604800)"),
        "memory_mb": (_limit("memory_mb"), "memory limit of the whole run (MiB, 16 to 4194304)"),
        "pids": (_limit("pids"), "process limit (8 to 4194304)"),
        "file_size_mb": (_limit("file_size_mb"),
                         "largest file a command may write (MiB, 1 to 8388608)"),
        "stage_mb": (_limit("stage_mb"),
                     "all the writes one run may stage (MiB, 1 to 16777216)"),
    },
    "hook": {
        "grant": (_enum("session", "once"),
                  "what a yes to an ask in Claude Code grants: the capability for that "
                  "Claude session, or that one call only"),
    },
    "commands": {
        "allow": (_str_list(), "patterns allowed without asking (host requests)"),
        "ask": (_str_list(), "patterns that always need approval"),
        "deny": (_str_list(), "patterns that are always refused"),
    },
}


_CRED_FROM = ("env:", "file:", "command:")


def _credentials(v: Any) -> str | None:
    if not isinstance(v, list):
        return f"must be an array of tables ([[credentials]]), not {_tname(v)}"
    names = set()
    for i, item in enumerate(v):
        if not isinstance(item, dict):
            return f"[{i}] must be a table, not {_tname(item)}"
        extra = set(item) - {"name", "from", "domains", "username"}
        if extra:
            return f"[{i}] unknown key {sorted(extra)[0]!r} (name, from, domains, username)"
        if not isinstance(item.get("username", ""), str) or \
                any(c in item.get("username", "") for c in "\n\0="):
            return f"[{i}] username must be a one-line string"
        name, src, doms = item.get("name"), item.get("from"), item.get("domains")
        if not isinstance(name, str) or not _ENV_NAME.fullmatch(name.replace("-", "_")):
            return f"[{i}] name must be a word such as \"github\""
        if name in names:
            return f"[{i}] name {name!r} is used twice"
        names.add(name)
        if not isinstance(src, str) or not src.startswith(_CRED_FROM) or \
                not src.split(":", 1)[1].strip():
            return f"[{i}] from must be env:NAME, file:PATH or command:CMD"
        if not isinstance(doms, list) or not doms or \
                not all(isinstance(d, str) and d and "*" not in d for d in doms):
            return (f"[{i}] domains must be a non-empty list of host names "
                    "(exact names: a token goes only where it is meant to)")
    return None


def _tname(v: Any) -> str:
    return {bool: "a boolean", int: "an integer", float: "a number", str: "a string",
            list: "a list", dict: "a table"}.get(type(v), type(v).__name__)


def suggest(word: str, choices) -> str | None:
    import difflib  # lazy: only a misspelled key needs it

    best = difflib.get_close_matches(word, list(choices), n=1, cutoff=0.6)
    return best[0] if best else None


def validate(data: dict, schema: dict | None = None, path: str = "") -> list[Problem]:
    """Every schema problem of one parsed file, in document order."""
    schema = SCHEMA if schema is None else schema
    out: list[Problem] = []
    for key, value in data.items():
        kp = f"{path}.{key}" if path else key
        spec = schema.get(key)
        if spec is None:
            best = suggest(key, schema)
            where = f"in [{path}]" if path else "at the top level"
            if best:
                msg = f'unknown key "{key}": did you mean "{best}"?'
            else:
                msg = f'unknown key "{key}" {where}'
            out.append(Problem(CODE_UNKNOWN_KEY, msg, kp,
                               hint="known keys: " + ", ".join(schema)))
        elif isinstance(spec, dict):
            if not isinstance(value, dict):
                out.append(Problem(CODE_BAD_VALUE, f"{kp} must be a table ([{kp}]), "
                                   f"not {_tname(value)}", kp))
            else:
                out.extend(validate(value, spec, kp))
        else:
            msg = spec[0](value)
            if msg is not None:
                m = re.match(r"\[(\d+)\] ", msg)
                sub = f"{kp}[{m.group(1)}]" if m else kp
                code = getattr(msg, "code", CODE_BAD_VALUE)
                out.append(Problem(code, f"{kp}{msg if m else ' ' + msg}", sub))
    return out


def all_keys(schema: dict | None = None, path: str = "") -> list[str]:
    """Every documented key path (for the docs test)."""
    schema = SCHEMA if schema is None else schema
    out = []
    for key, spec in schema.items():
        kp = f"{path}.{key}" if path else key
        out.extend(all_keys(spec, kp) if isinstance(spec, dict) else [kp])
    return out
