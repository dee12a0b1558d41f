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

from ringfence.rfcore.hashing import sha256
import os
import re
import stat
from ringfence.rfcore.records import field, record
from pathlib import Path
from typing import Any, Mapping

from ringfence.rfcore.errors import ProfileError

from . import _lines, _toml_cache, schema
from .model import (CommandRule, Env, Filesystem, Limits, Located, Network, Profile,
                    Tooling)
from .schema import Problem

BUILTIN_DIR = Path(__file__).resolve().parent
MAX_PROFILE_BYTES = 1 << 20
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


@record(frozen=False)
class Overlay:
    """A chain with profile files inside the workspace, applied on top of its base."""

    base_why: str                # "user config PATH" or "built-in build (no user config)"
    chain: Chain                 # base layers first, then the requested chain's own layers
    local: list[Layer]           # the layers inside the workspace (agent-editable)
    problems: list[tuple[Problem, Located]] = field(default_factory=list)
    built: tuple | None = None   # build(chain), kept so the loader does not merge twice


def _local_layers(chain: Chain, workspace: str, env: Mapping[str, str]) -> list[Layer]:
    # The user config dir is read-denied inside every sandbox, so it stays the
    # user's even when the workspace is (an ancestor of) the home directory.
    user_dir = str(_config_home(env))
    return [lyr for lyr in chain.layers if not lyr.builtin and _inside(lyr.path, workspace)
            and not _inside(lyr.path, user_dir)]


def _base_of(workspace: str, env: Mapping[str, str]) -> tuple[str, Chain]:
    """Why, and the chain of the profile that would be active without any workspace
    file (SPEC §3 levels 3-4)."""
    user = _config_home(env) / "config.toml"
    if user.is_file():
        chain = resolve_chain(str(user))
        # A user config that itself extends a workspace file is no trusted base.
        if not _local_layers(chain, workspace, env):
            return f"user config {user}", chain
    return f"built-in {DEFAULT_PROFILE} (no user config)", resolve_chain(DEFAULT_PROFILE)


def overlay(chain: Chain, workspace: str, env: Mapping[str, str] | None = None
            ) -> Overlay | None:
    """Apply a chain with workspace files on top of its base; None if it has none.

    The agent can edit workspace files and a cloned repository brings its own,
    so such a file may only tighten: it is merged over the base with the normal
    rules (as if it extended the base; its own ``extends`` merges after the
    base) and the result must be no looser than the base (``overlay.loosenings``).
    Every loosening is an RF513 problem placed where it was written, or at the
    ``extends`` that brought it in.
    """
    from .overlay import loosenings

    env = os.environ if env is None else env
    local = _local_layers(chain, workspace, env)
    if not local:
        return None
    base_why, base_chain = _base_of(workspace, env)
    out = Overlay(base_why, Chain(), local, list(base_chain.problems))
    if out.problems:
        return out
    have = {lyr.path.resolve() for lyr in base_chain.layers}
    # A layer the base already merged (``extends`` naming the base, or one of its
    # parents) is not applied again: re-applying it would reset the base's own
    # overrides.
    out.chain.layers = base_chain.layers + [lyr for lyr in chain.layers
                                            if lyr.path.resolve() not in have]
    base, _ = build(base_chain)
    result, origins = out.built = build(out.chain)
    local_files = {lyr.display for lyr in local}
    via = next((lyr for lyr in reversed(local) if "extends" in lyr.data), local[-1])
    for key, what, item in loosenings(base, result):
        where = origins.get((key, item) if item is not None else key) or Located()
        if where.file not in local_files:     # brought in by an extends, or a drop
            import json   # rare path: keep it off the hot path
            where = via.where("extends") if "extends" in via.data else via.where(None)
            what += (f" (through extends = {json.dumps(via.data['extends'])})"
                     if "extends" in via.data else "")
        out.problems.append((Problem(
            CODE_WORKSPACE, f"a profile file inside the workspace may only tighten its base "
            f"({base_why}); it cannot {what} (the agent can edit it)",
            where.key or key, hint=_WS_HINT), where))
    return out


def workspace_problems(chain: Chain, workspace: str,
                       env: Mapping[str, str] | None = None) -> list[tuple[Problem, Located]]:
    """RF513: every way the workspace files of ``chain`` loosen their base (see overlay)."""
    ov = overlay(chain, workspace, env)
    return ov.problems if ov is not None else []


def load_profile(name_or_path: str, *, workspace: str | None = None,
                 env: Mapping[str, str] | None = None) -> Profile:
    """Load a built-in by name or a TOML profile by path; ProfileError on any problem.

    ``workspace``: a profile file inside it is writable by the agent, so it is
    an overlay on the base (the user config, else ``build``) that may only
    tighten it (see :func:`overlay`). ``env`` locates the user config
    (default: the process environment).
    """
    return _load(name_or_path, workspace, env)[0]


def _load(name_or_path: str, workspace: str | None,
          env: Mapping[str, str] | None) -> tuple[Profile, Overlay | None]:
    chain = resolve_chain(name_or_path)
    if chain.problems:
        _raise(*chain.problems[0])
    ov = overlay(chain, workspace, env) if workspace is not None else None
    if ov is not None:
        if ov.problems:   # the code up front: `ringfence rule RF513` explains it
            problem, where = ov.problems[0]
            _raise(Problem(problem.code, f"{problem.code} {problem.message}", problem.key,
                           problem.hint), where)
        chain = ov.chain
    profile, origins = ov.built if ov is not None else build(chain)
    for problem, where in domain_problems(profile, origins):
        _raise(problem, where)
    from .patterns import compiled_rules

    compiled_rules(profile)   # pattern syntax errors surface at load time, with file:line
    return profile, ov


def _config_home(env: Mapping[str, str]) -> Path:
    from ringfence.rfcore.paths import config_dir

    return Path(config_dir(env))


def resolve_active(cli_value: str | None, *, env: Mapping[str, str],
                   workspace: str) -> tuple[Profile, str]:
    """The active profile and why (SPEC §3 precedence).

    A workspace file (``.ringfence.toml``, or a ``--profile`` path inside the
    workspace) never replaces the levels below it: it is an overlay on them
    that may only tighten (:func:`overlay`), and the reason says so.
    """
    if cli_value:
        ref, why = cli_value, "--profile"
    elif env.get("RINGFENCE_PROFILE"):
        ref, why = env["RINGFENCE_PROFILE"], "RINGFENCE_PROFILE"
    elif (project := Path(workspace) / ".ringfence.toml").is_file():
        ref, why = str(project), f"project file {project}"
    elif (user := _config_home(env) / "config.toml").is_file():
        ref, why = str(user), f"user config {user}"
    else:
        ref, why = DEFAULT_PROFILE, "default"
    profile, ov = _load(ref, workspace, env)
    if ov is not None:
        why += (f", an overlay on {ov.base_why}: a profile file inside the workspace is applied "
                "on top of the profile that would be active without it and may only tighten it")
    return profile, why


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
