"""Load a profile: TOML file(s) -> validated, merged, frozen :class:`Profile`.

On the per-command hot path (hook, run, check --json --profile): stdlib and our
own packages only, never lark (patterns come from the compiled cache).

``extends`` (a built-in name, or a path relative to the extending file; one or
a list) is resolved depth-first, parents before children. Merge rules:
lists extend (parent first, duplicates dropped), so ``deny`` lists accumulate
and a child can never drop an inherited restriction; tables merge recursively;
scalars override. ``name`` and ``description`` are never inherited.
"""

from __future__ import annotations

from rfcore.hashing import sha256
import os
import re
from rfcore.records import field, record
from pathlib import Path
from typing import Any, Mapping

from rfcore.errors import ProfileError

from . import _lines, _toml_cache, schema
from .model import (CommandRule, Env, Filesystem, Limits, Located, Network, Profile,
                    Tooling)
from .schema import Problem

BUILTIN_DIR = Path(__file__).resolve().parent
PUBLIC_BUILTINS = ("observe", "build", "strict", "host-assisted", "host")
DEFAULT_PROFILE = "build"
ACTIONS = ("deny", "ask", "allow")   # precedence order: deny over ask over allow

CODE_TOML = "RF500"
CODE_EXTENDS_MISSING = "RF503"
CODE_EXTENDS_CYCLE = "RF504"

# Credential-looking environment variable names: passed into a sandbox only
# with an explicit opt-in (env.allow_credentials). SSH_AUTH_SOCK is a key too:
# the agent socket signs with the user's keys.
_CRED_RE = re.compile(
    r"TOKEN|SECRET|PASSW(?:OR)?D|PASSPHRASE|CREDENTIAL|API_?KEY|PRIVATE|ACCESS_?KEY"
    r"|(?:^|_)KEY(?:$|_)|(?:^|_)AUTH|COOKIE|SESSION|(?:^|_)PAT$|SSH_AUTH_SOCK|KUBECONFIG"
    r"|DATABASE_URL|_DSN$", re.IGNORECASE)


def looks_like_credential(name: str) -> bool:
    """True when an environment variable name looks like it carries a secret."""
    return bool(_CRED_RE.search(name))


@record(frozen=False)
class Layer:
    """One file of a resolved chain."""

    display: str                 # "builtin/build.toml" or the path as given/resolved
    path: Path
    text: str
    data: dict
    lines: dict[str, int]
    builtin: bool

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
        raw = path.read_bytes()
        text = raw.decode("utf-8")
    except FileNotFoundError:
        return None, Problem(CODE_EXTENDS_MISSING, f"profile file {display} does not exist"), at
    except UnicodeDecodeError as exc:
        return None, Problem(CODE_TOML, f"not UTF-8 text (byte {exc.start})"), \
            Located(display, None, None)
    except OSError as exc:
        return None, Problem(CODE_TOML, f"cannot read profile: {exc.strerror}"), at
    data = _toml_cache.cached(path.name, text) if builtin and path.parent == BUILTIN_DIR \
        else None
    if data is None:
        data, error = _parse_toml(text)
        if error is not None:
            return None, *_toml_problem(error, display)
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
        real = path.resolve()
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
        digest=_digest(chain.layers),
    )
    return profile, origins


def _layer_name(layer: Layer) -> str:
    return layer.path.stem if layer.builtin else str(layer.path)


def domain_problems(profile: Profile, origins: dict) -> list[tuple[Problem, Located]]:
    """Unusable domain patterns (schemes, paths, TLD wildcards, ...)."""
    from .domains import parse_pattern

    out = []
    for kind in ("allow", "deny"):
        for pat in getattr(profile.network, kind):
            try:
                parse_pattern(pat)
            except ValueError as exc:
                code = "RF508" if _is_tld_wildcard(pat) else "RF509"
                where = origins.get((f"network.{kind}", pat), Located())
                out.append((Problem(code, f"bad domain pattern {pat!r}: {exc}", where.key), where))
    return out


def _is_tld_wildcard(pat: str) -> bool:
    host = pat.split(":", 1)[0].rstrip(".")
    return bool(re.fullmatch(r"\*{1,2}(\.[^.*]+)?", host))


def _raise(problem: Problem, where: Located) -> None:
    raise ProfileError(problem.message, file=where.file, line=where.line,
                       key=problem.key or where.key, hint=problem.hint)


def _inside(path: Path, root: str) -> bool:
    try:
        path.resolve().relative_to(Path(root).resolve())
        return True
    except ValueError:
        return False


CODE_WORKSPACE = "RF513"
_WS_HINT = ("put it in your user config ($XDG_CONFIG_HOME/ringfence/config.toml) or a profile "
            "file outside the workspace")


def workspace_problems(chain: Chain, workspace: str) -> list[tuple[Problem, Located]]:
    """Settings a profile file inside the workspace may not make.

    The agent can edit workspace files (its own Edit tool bypasses any sandbox)
    and a cloned repository brings its own; such a file must not be able to
    loosen the boundary for the next command: no sandbox off, no allow rules
    (they skip approval of host requests), no writable roots outside the
    workspace/tooling dir//tmp, no credential opt-ins. Tightening is fine.
    """
    out: list[tuple[Problem, Located]] = []
    # The user config dir is read-denied inside every sandbox, so it stays the
    # user's even when the workspace is (an ancestor of) the home directory.
    user_dir = str(_config_home(os.environ))
    for layer in chain.layers:
        if (layer.builtin or not _inside(layer.path, workspace)
                or _inside(layer.path, user_dir)):
            continue
        d = layer.data

        def bad(key: str, what: str) -> None:
            out.append((Problem(CODE_WORKSPACE, f"a profile file inside the workspace cannot "
                                f"{what} (the agent can edit it)", key, hint=_WS_HINT),
                        layer.where(key)))

        if d.get("sandbox") is False:
            bad("sandbox", "turn the sandbox off; use --profile host / --sandbox off explicitly")
        parents = d.get("extends", [])
        for i, ref in enumerate([parents] if isinstance(parents, str) else parents):
            if ref == "host":
                bad("extends" if isinstance(parents, str) else f"extends[{i}]",
                    "extend the host profile (no sandbox)")
        cmds, fs, env = (d.get(k, {}) if isinstance(d.get(k), dict) else {}
                         for k in ("commands", "filesystem", "env"))
        for i, _pat in enumerate(cmds.get("allow", []) or []):
            bad(f"commands.allow[{i}]", "add allow rules")
        for i, w in enumerate(fs.get("writable", []) or []):
            if not (isinstance(w, str) and (w.startswith(("{workspace}", "{tooling}", "/tmp/"))
                                            or w == "/tmp") and "/../" not in w + "/"):
                bad(f"filesystem.writable[{i}]", f"make {w!r} writable (outside the workspace)")
        for i, _name in enumerate(env.get("allow_credentials", []) or []):
            bad(f"env.allow_credentials[{i}]", "opt credentials into the sandbox")
    return out


def load_profile(name_or_path: str, *, workspace: str | None = None) -> Profile:
    """Load a built-in by name or a TOML profile by path; ProfileError on any problem.

    ``workspace``: a profile file inside it is writable by the agent, so it may
    only tighten the policy (see :func:`workspace_problems`).
    """
    chain = resolve_chain(name_or_path)
    if chain.problems:
        _raise(*chain.problems[0])
    profile, origins = build(chain)
    for problem, where in domain_problems(profile, origins):
        _raise(problem, where)
    if workspace is not None:
        for problem, where in workspace_problems(chain, workspace):
            _raise(problem, where)
        user_dir = str(_config_home(os.environ))
        local = [lyr for lyr in chain.layers if not lyr.builtin and _inside(lyr.path, workspace)
                 and not _inside(lyr.path, user_dir)]
        if local and not profile.sandbox:   # e.g. extends a sandbox-off file by path
            _raise(Problem(CODE_WORKSPACE, "a profile file inside the workspace cannot turn the "
                           "sandbox off (the agent can edit it)", "extends",
                           hint="use --profile host / --sandbox off explicitly"),
                   local[-1].where("extends"))
    from .patterns import compiled_rules

    compiled_rules(profile)   # pattern syntax errors surface at load time, with file:line
    return profile


def _config_home(env: Mapping[str, str]) -> Path:
    from rfcore.paths import config_dir

    return Path(config_dir(env))


def resolve_active(cli_value: str | None, *, env: Mapping[str, str],
                   workspace: str) -> tuple[Profile, str]:
    """The active profile and why (SPEC §3 precedence)."""
    if cli_value:
        return load_profile(cli_value, workspace=workspace), "--profile"
    if env.get("RINGFENCE_PROFILE"):
        return load_profile(env["RINGFENCE_PROFILE"], workspace=workspace), "RINGFENCE_PROFILE"
    project = Path(workspace) / ".ringfence.toml"
    if project.is_file():
        return load_profile(str(project), workspace=workspace), f"project file {project}"
    user = _config_home(env) / "config.toml"
    if user.is_file():
        return load_profile(str(user), workspace=workspace), f"user config {user}"
    return load_profile(DEFAULT_PROFILE, workspace=workspace), "default"


def profile_summary(profile: Profile) -> dict[str, Any]:
    """Plain-data view of the resolved settings (for `profile show`)."""
    return {
        "name": profile.name, "source": profile.source, "extends": list(profile.extends),
        "sandbox": profile.sandbox, "host": profile.host,
        "filesystem": {"writable": list(profile.filesystem.writable),
                       "private_tmp": profile.filesystem.private_tmp,
                       "read_deny": list(profile.filesystem.read_deny),
                       "write_protect": list(profile.filesystem.write_protect)},
        "network": {"mode": profile.network.mode, "allow": list(profile.network.allow),
                    "deny": list(profile.network.deny),
                    "allow_unix_sockets": profile.network.allow_unix_sockets},
        "env": {"pass": list(profile.env.pass_), "set": dict(profile.env.set),
                "allow_credentials": list(profile.env.allow_credentials)},
        "tooling": {"dir": profile.tooling.dir, "enabled": profile.tooling.enabled},
        "limits": {k: getattr(profile.limits, k) for k in
                   ("timeout", "memory_mb", "pids", "file_size_mb")},
        "commands": {a: [r.pattern for r in profile.rules if r.action == a] for a in ACTIONS},
        "digest": profile.digest,
    }
