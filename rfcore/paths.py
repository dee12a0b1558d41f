"""Where ringfence keeps its own files. One definition for every stage.

- state:  ``$RINGFENCE_HOME`` or ``$XDG_STATE_HOME/ringfence`` (ledger, grants,
          approvals, protected-path journal, quarantine)
- cache:  ``$RINGFENCE_HOME/cache`` or ``$XDG_CACHE_HOME/ringfence`` (compiled
          pattern cache under ``patterns/``; the default tooling dir also lives
          here, which is why only ``patterns/`` is ringfence-private)
- config: ``$XDG_CONFIG_HOME/ringfence`` (the user's global profile)

These directories decide what runs without asking (grants, the user's profile), so
the compiler hides them inside every sandbox: see :func:`private_dirs`.
"""

from __future__ import annotations

import os
from typing import Mapping


def _env(env: Mapping[str, str] | None) -> Mapping[str, str]:
    return os.environ if env is None else env


def _home(env: Mapping[str, str]) -> str:
    return env.get("HOME") or os.path.expanduser("~")


def state_dir(env: Mapping[str, str] | None = None) -> str:
    env = _env(env)
    if env.get("RINGFENCE_HOME"):
        return os.path.abspath(env["RINGFENCE_HOME"])
    base = env.get("XDG_STATE_HOME") or os.path.join(_home(env), ".local", "state")
    return os.path.join(os.path.abspath(base), "ringfence")


def cache_dir(env: Mapping[str, str] | None = None) -> str:
    env = _env(env)
    if env.get("RINGFENCE_HOME"):
        return os.path.join(os.path.abspath(env["RINGFENCE_HOME"]), "cache")
    base = env.get("XDG_CACHE_HOME") or os.path.join(_home(env), ".cache")
    return os.path.join(os.path.abspath(base), "ringfence")


def tooling_dir(env: Mapping[str, str] | None = None) -> str:
    """Where the default tooling dir (``tooling.dir`` left at its default) lives: in
    ringfence's cache dir, so it follows ``RINGFENCE_HOME`` and ``XDG_CACHE_HOME``
    like the rest of ringfence's files (issue 23)."""
    return os.path.join(cache_dir(env), "tooling")


def pattern_cache_dir(env: Mapping[str, str] | None = None) -> str:
    return os.path.join(cache_dir(env), "patterns")


def config_dir(env: Mapping[str, str] | None = None) -> str:
    env = _env(env)
    base = env.get("XDG_CONFIG_HOME") or os.path.join(_home(env), ".config")
    return os.path.join(os.path.abspath(base), "ringfence")


def private_dirs(env: Mapping[str, str] | None = None) -> tuple[str, ...]:
    """ringfence's own directories that no sandboxed command may read or write.

    A sandbox that could write the ledger could forge a grant ("always" for any
    capability); one that could read it would see the output tails of earlier host
    runs. The user's config is the global profile. With ``RINGFENCE_HOME``
    everything is under it, so the one directory covers the cache as well.
    """
    env = _env(env)
    if env.get("RINGFENCE_HOME"):
        return (state_dir(env), config_dir(env))
    return (state_dir(env), pattern_cache_dir(env), config_dir(env))
