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
from pathlib import Path

from ringfence.rfcore.hashing import sha256
from ringfence.rfcore.records import field, record

from . import _toml_cache
from .model import (CommandRule, Env, Filesystem, Limits, Located, Network, Profile,
                    Tooling)
from .problem import Problem

BUILTIN_DIR = Path(__file__).resolve().parent
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
    path: Path
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
        data, _ = _parse_toml((BUILTIN_DIR / f"{name}.toml").read_text(encoding="utf-8"))
        data = data or {}
        out.append((name, data.get("description", "")))
    return out


def _builtin_path(name: str) -> Path | None:
    if re.fullmatch(r"_?[a-z][a-z0-9-]*", name):
        p = BUILTIN_DIR / f"{name}.toml"
        if p.is_file():
            return p
    return None


def _is_path_ref(ref: str) -> bool:
    return "/" in ref or ref.endswith(".toml") or ref.startswith(".")


def _read(path: Path, display: str, builtin: bool,
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
        raw = path.read_bytes()
        text = raw.decode("utf-8")
    except FileNotFoundError:
        return None, Problem(CODE_EXTENDS_MISSING, f"profile file {display} does not exist"), at
    except UnicodeDecodeError as exc:
        return None, Problem(CODE_TOML, f"not UTF-8 text (byte {exc.start})"), \
            Located(display, None, None)
    except OSError as exc:
        return None, Problem(CODE_TOML, f"cannot read profile: {exc.strerror}"), at
    entry = _toml_cache.cached_entry(path.name, text) \
        if builtin and path.parent == BUILTIN_DIR else None
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


def _resolve_ref(ref: str, base: Path | None, *,
                 builtin_parent: bool) -> tuple[Path | None, str, bool]:
    """(path or None, display name, is_builtin) for a profile reference."""
    if not _is_path_ref(ref):
        p = _builtin_path(ref)
        return p, (f"builtin/{ref}.toml" if p else ref), p is not None
    path = Path(os.path.expanduser(ref))
    if not path.is_absolute() and base is not None:
        path = base / path
    return path, str(path) if base is not None or path.is_absolute() else ref, builtin_parent


def _unknown_profile(ref: str) -> Problem:
    from . import schema

    names = list(PUBLIC_BUILTINS)
    best = schema.suggest(ref, names)
    hint = f'did you mean "{best}"?' if best else "built-ins: " + ", ".join(names)
    return Problem(CODE_EXTENDS_MISSING,
                   f'unknown profile "{ref}": not a built-in and not a path to a .toml file',
                   hint=hint)


def resolve_chain(ref: str, *, base: Path | None = None) -> Chain:
    """Read ``ref`` and everything it extends; collect (never raise) problems."""
    chain = Chain()
    seen: set[Path] = set()

    def visit(ref: str, base: Path | None, stack: list[Path], at: Located,
              builtin_parent: bool) -> None:
        path, display, builtin = _resolve_ref(ref, base, builtin_parent=builtin_parent)
        if path is None:
            chain.problems.append((_unknown_profile(ref), at))
            return
        try:
            real = path.resolve()
        except (RuntimeError, OSError):      # a symlink loop
            chain.problems.append((Problem(CODE_TOML, f"cannot read profile {display}: "
                                           "symbolic link loop"), at))
            return
        if real in stack:
            cycle = " -> ".join([p.name for p in stack[stack.index(real):]] + [real.name])
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
                visit(parent, real.parent, stack + [real], layer.where(key), builtin)
        seen.add(real)
        chain.layers.append(layer)

    visit(ref, base, [], Located(None, None, None), False)
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
                        origins[(kp, item)] = layer.where(f"{kp}[{i}]")
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
        name = leaf.path.stem
        source = f"builtin:{name}"
    else:
        name = leaf.data.get("name") or leaf.path.stem.lstrip(".") or "profile"
        source = str(leaf.path)
    profile = Profile(
        name=name,
        description=leaf.data.get("description", ""),
        source=source,
        extends=tuple(_layer_name(lyr) for lyr in reversed(chain.layers[:-1])),
        sandbox=merged.get("sandbox", True),
        filesystem=Filesystem(
            writable=tuple(fs.get("writable", ())), private_tmp=fs.get("private_tmp", True),
            read_deny=tuple(fs.get("read_deny", ())),
            write_protect=tuple(fs.get("write_protect", ()))),
        network=Network(mode=net.get("mode", "none"), allow=tuple(net.get("allow", ())),
                        deny=tuple(net.get("deny", ())),
                        allow_unix_sockets=net.get("allow_unix_sockets", False)),
        env=Env(pass_=tuple(env.get("pass", ())), set=tuple(env.get("set", {}).items()),
                allow_credentials=tuple(env.get("allow_credentials", ()))),
        tooling=Tooling(**{k: tooling[k] for k in ("dir", "enabled") if k in tooling}),
        limits=Limits(**{k: limits[k] for k in ("timeout", "memory_mb", "pids", "file_size_mb")
                         if k in limits}),
        host=merged.get("host", "ask"),
        rules=rules,
        hook_grant=merged.get("hook", {}).get("grant", "session"),
        digest=_digest(chain.layers),
    )
    return profile, origins


def _layer_name(layer: Layer) -> str:
    return layer.path.stem if layer.builtin else str(layer.path)
