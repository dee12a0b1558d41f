"""Read a profile and everything it extends: files -> layers -> one merged :class:`Profile`.

The lowest layer of profile loading (no overlay, no activation): `load` builds on
it, and so does `pattern_cache.builtin_sources` (which is why it is its own module:
load -> pattern_cache -> chain, no cycle).

``extends`` (a built-in name, or a path relative to the extending file; one or
a list) is resolved depth-first, parents before children. Merge rules:
lists extend (parent first, duplicates dropped), so ``deny`` lists accumulate
and a child can never drop an inherited restriction; tables merge recursively;
scalars override. ``name`` and ``description`` are never inherited.
"""

from __future__ import annotations

import os
import re
import stat

from ringfence.rfcore.hashing import sha256
from ringfence.rfcore.records import field, record

from . import _toml_cache
from .model import (CommandRule, Credential, Env, Filesystem, Limits, Located, Network, Profile,
                    Tooling)
from .problem import Problem

# The built-ins' directory, as a str: the hot paths never import pathlib (its
# import, with urllib.parse and ipaddress, was milliseconds of every hook call).
# ``BUILTIN_DIR`` (a Path) is still there for callers that want one.
BUILTIN = os.path.dirname(os.path.realpath(__file__))
MAX_PROFILE_BYTES = 1 << 20
PUBLIC_BUILTINS = ("observe", "build", "strict", "host-assisted", "host")
DEFAULT_PROFILE = "build"
ACTIONS = ("deny", "ask", "allow")   # precedence order: deny over ask over allow

CODE_TOML = "RF500"
CODE_EXTENDS_MISSING = "RF503"
CODE_EXTENDS_CYCLE = "RF504"
@record(frozen=False)
class Layer:
    """One file of a resolved chain."""

    display: str                 # "builtin/build.toml" or the path as given/resolved
    path: str                    # the file (absolute once resolved against its base)
    text: str
    data: dict
    lines: dict[str, int]
    builtin: bool
    valid: bool = False          # known to pass schema.validate (a cached built-in)

    def where(self, key: str | None) -> Located:
        return Located(self.display, self.line(key), key)

    def line(self, key: str | None) -> int | None:
        while key:
            if key in self.lines:
                return self.lines[key]
            key = key.rsplit("[", 1)[0] if key.endswith("]") else key.rpartition(".")[0]
        return None


@record(frozen=False)
class Chain:
    layers: list[Layer] = field(default_factory=list)     # parents first, leaf last
    problems: list[tuple[Problem, Located]] = field(default_factory=list)


def list_builtins() -> list[tuple[str, str]]:
    """(name, description) of every public built-in profile, in the documented order."""
    out = []
    for name in PUBLIC_BUILTINS:
        with open(os.path.join(BUILTIN, f"{name}.toml"), encoding="utf-8") as f:
            data, _ = _parse_toml(f.read())
        data = data or {}
        out.append((name, data.get("description", "")))
    return out


def _builtin_path(name: str) -> str | None:
    if re.fullmatch(r"_?[a-z][a-z0-9-]*", name):
        p = os.path.join(BUILTIN, f"{name}.toml")
        if os.path.isfile(p):
            return p
    return None


def _is_path_ref(ref: str) -> bool:
    return "/" in ref or ref.endswith(".toml") or ref.startswith(".")


def _read(path: str, display: str, builtin: bool,
          at: Located) -> tuple[Layer | None, Problem | None, Located]:
    try:
        # Only regular files: a FIFO or a device (/dev/zero) would block or never
        # end, and a profile is small text.
        st = os.stat(path)
        if not stat.S_ISREG(st.st_mode):
            return None, Problem(CODE_TOML, f"profile {display} is not a regular file"), at
        if st.st_size > MAX_PROFILE_BYTES:
            return None, Problem(CODE_TOML, f"profile {display} is larger than "
                                 f"{MAX_PROFILE_BYTES // 1024} KiB"), at
        with open(path, "rb") as f:
            raw = f.read(MAX_PROFILE_BYTES + 1)     # bounded even if it grew since stat
        if len(raw) > MAX_PROFILE_BYTES:
            return None, Problem(CODE_TOML, f"profile {display} is larger than "
                                 f"{MAX_PROFILE_BYTES // 1024} KiB"), at
        text = raw.decode("utf-8")
    except FileNotFoundError:
        return None, Problem(CODE_EXTENDS_MISSING, f"profile file {display} does not exist"), at
    except UnicodeDecodeError as exc:
        return None, Problem(CODE_TOML, f"not UTF-8 text (byte {exc.start})"), \
            Located(display, None, None)
    except OSError as exc:
        return None, Problem(CODE_TOML, f"cannot read profile {display}: {exc.strerror}"), at
    entry = _toml_cache.cached_entry(os.path.basename(path), text) \
        if builtin and os.path.dirname(path) == BUILTIN else None
    if entry is not None:   # a shipped built-in: parsed, scanned and validated in advance
        data, lines, valid = entry
        return Layer(display, path, text, data, lines, builtin, valid), None, at
    data, error = _parse_toml(text)
    if error is not None:
        return None, *_toml_problem(error, display)
    from . import _lines

    return Layer(display, path, text, data, _lines.scan(text), builtin), None, at


def _parse_toml(text: str):
    """(data, None) or (None, the TOMLDecodeError)."""
    # Imported here: built-ins come from _toml_cache, so the hot paths never load it.
    import tomllib

    try:
        return tomllib.loads(text), None
    except tomllib.TOMLDecodeError as exc:
        return None, exc


def _toml_problem(exc: ValueError, display: str) -> tuple[Problem, Located]:
    m = re.search(r"\(at line (\d+), column (\d+)\)", str(exc))
    msg = re.sub(r"\s*\(at line \d+, column \d+\)", "", str(exc))
    line = int(m.group(1)) if m else None
    col = f", column {m.group(2)}" if m else ""
    return Problem(CODE_TOML, f"invalid TOML: {msg}{col}"), Located(display, line, None)


def _resolve_ref(ref: str, base: str | None, *,
                 builtin_parent: bool) -> tuple[str | None, str, bool]:
    """(path or None, display name, is_builtin) for a profile reference."""
    if not _is_path_ref(ref):
        p = _builtin_path(ref)
        return p, (f"builtin/{ref}.toml" if p else ref), p is not None
    path = _clean(os.path.expanduser(ref))
    absolute = os.path.isabs(path)
    if not absolute and base is not None:
        path = _clean(os.path.join(base, path))
    return path, path if base is not None or absolute else ref, builtin_parent


def _clean(path: str) -> str:
    """str(Path(path)): no empty or "." components, ".." kept."""
    parts = [p for p in path.split("/") if p and p != "."]
    lead = "/" if path.startswith("/") else ""
    return lead + "/".join(parts) if parts else (lead or ".")


def _unknown_profile(ref: str) -> Problem:
    from . import schema

    names = list(PUBLIC_BUILTINS)
    best = schema.suggest(ref, names)
    hint = f'did you mean "{best}"?' if best else "built-ins: " + ", ".join(names)
    return Problem(CODE_EXTENDS_MISSING,
                   f'unknown profile "{ref}": not a built-in and not a path to a .toml file',
                   hint=hint)


def _real(path: str) -> str:
    """The path with every symbolic link resolved (like Path.resolve); RuntimeError
    for a link loop, as Path.resolve raises."""
    try:
        return os.path.realpath(path, strict=True)
    except FileNotFoundError:
        return os.path.realpath(path)
    except OSError as exc:
        import errno

        if exc.errno == errno.ELOOP:
            raise RuntimeError(f"symlink loop at {path!r}") from exc
        return os.path.realpath(path)


def resolve_chain(ref: str, *, base: str | os.PathLike | None = None) -> Chain:
    """Read ``ref`` and everything it extends; collect (never raise) problems."""
    chain = Chain()
    seen: set[str] = set()

    def visit(ref: str, base: str | None, stack: list[str], at: Located,
              builtin_parent: bool) -> None:
        path, display, builtin = _resolve_ref(ref, base, builtin_parent=builtin_parent)
        if path is None:
            chain.problems.append((_unknown_profile(ref), at))
            return
        try:
            real = _real(path)
        except (RuntimeError, OSError):      # a symlink loop
            chain.problems.append((Problem(CODE_TOML, f"cannot read profile {display}: "
                                           "symbolic link loop"), at))
            return
        if real in stack:
            cycle = " -> ".join([os.path.basename(p) for p in stack[stack.index(real):]]
                                + [os.path.basename(real)])
            chain.problems.append((Problem(CODE_EXTENDS_CYCLE, f"extends cycle: {cycle}",
                                           at.key), at))
            return
        if real in seen:  # diamond: already merged once, parents first
            return
        layer, problem, where = _read(path, display, builtin, at)
        if layer is None:
            if problem.code == CODE_EXTENDS_MISSING and at.file is None:
                problem = _unknown_profile(ref) if not _is_path_ref(ref) else problem
            chain.problems.append((problem, where))
            return
        if not layer.valid:
            from . import schema

            for p in schema.validate(layer.data):
                chain.problems.append((p, layer.where(p.key)))
        parents = layer.data.get("extends", [])
        if isinstance(parents, str):
            parents = [parents]
        if isinstance(parents, list):
            for i, parent in enumerate(parents):
                if not isinstance(parent, str) or not parent:
                    continue
                key = "extends" if isinstance(layer.data["extends"], str) else f"extends[{i}]"
                visit(parent, os.path.dirname(real), stack + [real], layer.where(key),
                      builtin)
        seen.add(real)
        chain.layers.append(layer)

    visit(ref, None if base is None else os.fspath(base), [], Located(None, None, None), False)
    return chain


def _merge(layers: list[Layer]) -> tuple[dict, dict]:
    """Merged data and origins: (key path, list item) or key path -> Located."""
    merged: dict = {}
    origins: dict = {}

    def merge(dst: dict, src: dict, path: str, layer: Layer) -> None:
        for k, v in src.items():
            if not path and k in ("extends", "name", "description"):
                continue
            kp = f"{path}.{k}" if path else k
            if isinstance(v, dict) and isinstance(dst.get(k, {}), dict):
                merge(dst.setdefault(k, {}), v, kp, layer)
            elif isinstance(v, list) and isinstance(dst.get(k, []), list):
                have = dst.setdefault(k, [])
                for i, item in enumerate(v):
                    if item not in have:
                        have.append(item)
                        key = ("table", str(item.get("name"))) if isinstance(item, dict) \
                            else item
                        origins[(kp, key)] = layer.where(f"{kp}[{i}]")
            else:
                dst[k] = v
                origins[kp] = layer.where(kp)

    for layer in layers:
        merge(merged, layer.data, "", layer)
    return merged, origins


def _digest(layers: list[Layer]) -> str:
    h = sha256()
    for layer in layers:
        h.update(layer.display.encode() + b"\0" + layer.text.encode() + b"\0")
    return h.hexdigest()


def build(chain: Chain) -> tuple[Profile, dict]:
    """The Profile of a problem-free chain, and the origins map (for lint)."""
    merged, origins = _merge(chain.layers)
    leaf = chain.layers[-1]
    fs, net, env = (merged.get(k, {}) for k in ("filesystem", "network", "env"))
    tooling, limits, cmds = (merged.get(k, {}) for k in ("tooling", "limits", "commands"))
    rules = tuple(CommandRule(action, pat, origins.get((f"commands.{action}", pat), Located()))
                  for action in ACTIONS for pat in cmds.get(action, []))
    if leaf.builtin:
        name = _stem(leaf.path)
        source = f"builtin:{name}"
    else:
        name = leaf.data.get("name") or _stem(leaf.path).lstrip(".") or "profile"
        source = leaf.path
    profile = Profile(
        name=name,
        description=leaf.data.get("description", ""),
        source=source,
        extends=tuple(_layer_name(lyr) for lyr in reversed(chain.layers[:-1])),
        sandbox=merged.get("sandbox", True),
        filesystem=Filesystem(
            writable=tuple(fs.get("writable", ())), private_tmp=fs.get("private_tmp", True),
            read_deny=tuple(fs.get("read_deny", ())),
            write_protect=tuple(fs.get("write_protect", ())),
            mask_home=fs.get("mask_home", False), read_allow=tuple(fs.get("read_allow", ()))),
        network=Network(mode=net.get("mode", "none"), allow=tuple(net.get("allow", ())),
                        deny=tuple(net.get("deny", ())),
                        allow_unix_sockets=net.get("allow_unix_sockets", False)),
        env=Env(pass_=tuple(env.get("pass", ())), set=tuple(env.get("set", {}).items()),
                allow_credentials=tuple(env.get("allow_credentials", ()))),
        tooling=Tooling(**{k: tooling[k] for k in ("dir", "enabled") if k in tooling}),
        limits=Limits(**{k: limits[k] for k in ("timeout", "memory_mb", "pids", "file_size_mb",
                                                "stage_mb") if k in limits}),
        host=merged.get("host", "ask"),
        rules=rules,
        credentials=tuple(
            Credential(c["name"], c["from"], tuple(c["domains"]), c.get("username", ""),
                       origins.get(("credentials", ("table", c["name"])), Located()))
            for c in merged.get("credentials", []) if isinstance(c, dict)),
        hook_grant=merged.get("hook", {}).get("grant", "session"),
        digest=_digest(chain.layers),
    )
    return profile, origins


def _layer_name(layer: Layer) -> str:
    return _stem(layer.path) if layer.builtin else layer.path


def _stem(path: str) -> str:
    """Path(path).stem: the last component without its final suffix."""
    name = os.path.basename(path)
    i = name.rfind(".")
    return name[:i] if 0 < i < len(name) - 1 else name


def __getattr__(name: str):
    if name == "BUILTIN_DIR":   # a Path, for callers that want one (not the hot paths)
        from pathlib import Path

        return Path(BUILTIN)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
