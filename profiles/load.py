"""Load a profile: TOML file(s) -> validated, merged, frozen :class:`Profile`.

On the per-command hot path (hook, run, check --json --profile): stdlib and our
own packages only, never lark (patterns come from the compiled cache).

Reading and merging the ``extends`` chain is :mod:`.chain`; this module adds what
makes a chain a usable profile: domain and pattern checks, the workspace overlay
(a profile file inside the workspace may only tighten its base) and the SPEC §3
precedence of :func:`resolve_active`.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping

from ringfence.rfcore.errors import ProfileError
from ringfence.rfcore.records import field, record

from .chain import (ACTIONS, BUILTIN, CODE_EXTENDS_CYCLE, CODE_EXTENDS_MISSING,  # noqa: F401
                    CODE_TOML, DEFAULT_PROFILE, MAX_PROFILE_BYTES, PUBLIC_BUILTINS, Chain,
                    Layer, build, list_builtins, resolve_chain)
from .chain import _real
from .model import Located, Profile
from .problem import Problem

def looks_like_credential(name: str) -> bool:
    """True when an environment variable name looks like it carries a secret
    (the one rule: ``rfcore/credentials.py``)."""
    from ringfence.rfcore.credentials import name_looks_like_credential

    return name_looks_like_credential(name)


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
    message = problem.message
    if problem.code == "RF550":     # a limit out of its range: name the code (issue 23)
        message = f"{message} ({problem.code})"
    raise ProfileError(message, file=where.file, line=where.line,
                       key=problem.key or where.key, hint=problem.hint)


def _inside(path: str, root: str) -> bool:
    real, top = _real(path), _real(root)
    return real == top or real.startswith(top.rstrip("/") + "/")


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
    user = os.path.join(_config_home(env), "config.toml")
    if os.path.isfile(user):
        chain = resolve_chain(user)
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
    env = os.environ if env is None else env
    local = _local_layers(chain, workspace, env)
    if not local:
        return None
    from .overlay import loosenings
    base_why, base_chain = _base_of(workspace, env)
    out = Overlay(base_why, Chain(), local, list(base_chain.problems))
    if out.problems:
        return out
    have = {_real(lyr.path) for lyr in base_chain.layers}
    # A layer the base already merged (``extends`` naming the base, or one of its
    # parents) is not applied again: re-applying it would reset the base's own
    # overrides.
    out.chain.layers = base_chain.layers + [lyr for lyr in chain.layers
                                            if _real(lyr.path) not in have]
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
    # Shipped built-ins were checked when their cache was written (_toml_cache):
    # a chain of only those has valid domain patterns, so skip parsing them again.
    if not all(layer.valid for layer in chain.layers):
        for problem, where in domain_problems(profile, origins):
            _raise(problem, where)
    from .pattern_cache import compiled_rules

    compiled_rules(profile)   # pattern syntax errors surface at load time, with file:line
    return profile, ov


def _config_home(env: Mapping[str, str]) -> str:
    from ringfence.rfcore.paths import config_dir

    return str(config_dir(env))


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
    elif os.path.isfile(project := os.path.join(workspace, ".ringfence.toml")):
        ref, why = project, f"project file {project}"
    elif os.path.isfile(user := os.path.join(_config_home(env), "config.toml")):
        ref, why = user, f"user config {user}"
    else:
        ref, why = DEFAULT_PROFILE, "default"
    profile, ov = _load(ref, workspace, env)
    if ov is not None:
        why += (f", an overlay on {ov.base_why}: a profile file inside the workspace is applied "
                "on top of the profile that would be active without it and may only tighten it")
    return profile, why


def profile_summary(profile: Profile) -> dict:
    """Plain-data view of the resolved settings (see :mod:`.show`)."""
    from .show import profile_summary as summary

    return summary(profile)


def __getattr__(name: str):
    if name == "BUILTIN_DIR":   # a Path (chain.BUILTIN_DIR): pathlib only when asked for
        from . import chain

        return chain.BUILTIN_DIR
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
