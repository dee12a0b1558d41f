"""Host facts that the run's environment alone decides: the home, ringfence's own
dirs, the credential table expanded for this home and environment, the names of
secret-shaped variables. ``compiler.host.probe`` asks for them on every run; a warm
process (a ``Session``, the MCP server) derives them once per distinct environment.
The password database is read again whenever ``/etc/passwd`` changes.
"""

from __future__ import annotations

import os
from typing import Mapping

# What the run's environment alone decides (credential table, ringfence's own dirs,
# secret-shaped values), remembered per process for the last few environments: a
# warm Session's runs share one. The password database is read again when it changes.
_ENV_FACTS: dict[tuple, dict] = {}
_PW_HOME: dict[tuple, str] = {}


def _pw_home(uid: int) -> str:
    """The account's home in the password database (re-read when the file changes)."""
    try:
        st = os.stat("/etc/passwd")
        key = (uid, st.st_ino, st.st_mtime_ns, st.st_ctime_ns, st.st_size)
    except OSError:
        key = None
    if key is not None and key in _PW_HOME:
        return _PW_HOME[key]
    import pwd

    try:
        home = os.path.abspath(pwd.getpwuid(uid).pw_dir)
    except KeyError:
        home = ""
    if key is not None:
        _PW_HOME.clear()
        _PW_HOME[key] = home
    return home


def env_facts(uid: int, env: Mapping[str, str]) -> dict:
    pw_home = _pw_home(uid)
    home = os.path.abspath(env.get("HOME") or pw_home)
    others = tuple(h for h in (pw_home,) if h and h != home
                   and os.path.realpath(h) != os.path.realpath(home))
    key = (home, others, tuple(sorted(env.items())))
    hit = _ENV_FACTS.get(key)
    if hit is None:
        if len(_ENV_FACTS) >= 8:
            _ENV_FACTS.pop(next(iter(_ENV_FACTS)))
        hit = _ENV_FACTS[key] = _derive_env_facts(home, others, env)
    return hit


def _derive_env_facts(home: str, others: tuple[str, ...], env: Mapping[str, str]) -> dict:
    from ringfence.rfcore import credentials
    from ringfence.rfcore.paths import pattern_cache_dir, private_dirs, state_dir, tooling_dir

    return dict(
        home=home, env_names=tuple(sorted(env)),
        private_dirs=private_dirs(env), mask_cache=pattern_cache_dir(env),
        tooling_default=tooling_dir(env),
        xdg=tuple((v, env[v]) for v in ("XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_CACHE_HOME",
                                         "XDG_STATE_HOME", "GIT_CONFIG_GLOBAL",
                                         "GIT_CONFIG_SYSTEM") if env.get(v)),
        credential_paths=tuple(dict.fromkeys(
            [p for p, _ in credentials.locations(home, env)]
            + [p for h in others for p, _ in credentials.locations(h, {})])),
        other_homes=others,
        secret_env=credentials.secret_valued(env),
        mask_key=os.path.join(state_dir(env), "mask.key"))
