"""Host facts that the run's environment alone decides: the home, ringfence's own
dirs, the credential table expanded for this home and environment, the names of
secret-shaped variables. ``compiler.host.probe`` asks for them on every run; a warm
process (a ``Session``, the MCP server) derives them once per distinct environment.
The password database is asked on every run (it decides the key).
"""

from __future__ import annotations

import os
from typing import Mapping

# What the run's environment alone decides (credential table, ringfence's own dirs,
# secret-shaped values), remembered per process for the last few environments: a
# warm Session's runs share one.
_ENV_FACTS: dict[tuple, dict] = {}
# The variables rfcore.paths reads whose relative values depend on the working dir.
_CWD_RELATIVE = ("RINGFENCE_HOME", "XDG_STATE_HOME", "XDG_CACHE_HOME", "XDG_CONFIG_HOME",
                 "HOME")


def _pw_home(uid: int) -> str:
    """The account's home in the password database, asked on every run (about 30 us):
    NSS may answer from elsewhere than /etc/passwd (``passwd: files systemd``:
    systemd-homed and userdb records), so no file's stat says it is unchanged."""
    import pwd

    try:
        return os.path.abspath(pwd.getpwuid(uid).pw_dir)
    except KeyError:
        return ""


def env_facts(uid: int, env: Mapping[str, str]) -> dict:
    pw_home = _pw_home(uid)
    home = os.path.abspath(env.get("HOME") or pw_home)
    others = tuple(h for h in (pw_home,) if h and h != home
                   and os.path.realpath(h) != os.path.realpath(home))
    # rfcore.paths makes a relative RINGFENCE_HOME / XDG_* absolute against the working
    # directory (os.path.abspath), which a warm process may change between runs.
    cwd = os.getcwd() if any(env.get(v) and not env[v].startswith("/")
                             for v in _CWD_RELATIVE) else ""
    key = (home, others, cwd, tuple(sorted(env.items())))
    hit = _ENV_FACTS.get(key)
    if hit is None:
        if len(_ENV_FACTS) >= 8:
            _ENV_FACTS.clear()      # no iteration: safe with runs in other threads
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
                                         "GIT_CONFIG_SYSTEM", "RUSTUP_HOME", "CARGO_HOME")
                    if env.get(v)),
        credential_paths=tuple(dict.fromkeys(
            [p for p, _ in credentials.locations(home, env)]
            + [p for h in others for p, _ in credentials.locations(h, {})])),
        other_homes=others,
        secret_env=credentials.secret_valued(env),
        mask_key=os.path.join(state_dir(env), "mask.key"))
