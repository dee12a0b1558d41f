"""git configuration given on the command line: judged by the key, not the spelling.

``git -c KEY=VAL``, ``git --config-env=KEY=ENVVAR`` and the environment triple
``GIT_CONFIG_COUNT`` / ``GIT_CONFIG_KEY_<n>`` / ``GIT_CONFIG_VALUE_<n>``
(git(1) "-c", "--config-env", "ENVIRONMENT VARIABLES") all set a configuration
key for one run. Whether that can run a program depends only on the key (and
for a few keys the value): the one table in ``ringfence.staging.git.keys`` decides,
and an unknown key can (fail closed). ``user.email`` or ``color.ui`` run nothing;
``core.pager`` does.
"""

from __future__ import annotations


from ringfence.rfcore.lazyre import lazy
from ringfence.staging.git.keys import key_can_run_program

from .ir import Word

_ENV_NAME = lazy(r"GIT_CONFIG_(?:COUNT|KEY_(\d+)|VALUE_(\d+))")


def option_runs_program(opt: str, value: Word | None) -> bool:
    """``git -c VALUE`` / ``git --config-env VALUE``: can it make git run a program?"""
    if opt == "--exec-path" or value is None or not value.static:
        return True
    key, eq, val = value.value.partition("=")
    if opt == "-c":
        # `-c key` alone sets the key to true (git(1))
        return key_can_run_program(key, val if eq else "true")
    # --config-env=KEY=ENVVAR: the value comes from the environment, unseen
    return not eq or not val or key_can_run_program(key, None)


def harmless_env(pairs: list[tuple[str, Word | None]]) -> frozenset[str]:
    """The GIT_CONFIG_* names among ``pairs`` (every assignment of the command:
    prefix, bare, export, env) that set only keys which run nothing. A value or a
    count whose key is not set in the same command may pair with a key from the
    environment, so it is not harmless; nor is a name assigned twice (each
    assignment may reach another git)."""
    assigned: dict[str, Word | None] = {}
    for name, w in pairs:
        assigned[name] = None if name in assigned else w
    keys: dict[str, str | None] = {}
    for name, w in assigned.items():
        m = _ENV_NAME.fullmatch(name)
        if m and m.group(1) is not None:
            keys[m.group(1)] = w.value if w is not None and w.static else None
    safe: set[str] = set()
    good: set[str] = set()
    for n, key in keys.items():
        vname = f"GIT_CONFIG_VALUE_{n}"
        value = assigned.get(vname)
        val = value.value if value is not None and value.static else None
        known_value = vname not in assigned or (value is not None and value.static)
        if key is not None and known_value and not key_can_run_program(key, val):
            good.add(n)
            safe.add(f"GIT_CONFIG_KEY_{n}")
            if vname in assigned:
                safe.add(vname)
    count = assigned.get("GIT_CONFIG_COUNT")
    if count is not None and count.static and count.value.isdigit() and \
            all(str(i) in good for i in range(int(count.value))):
        safe.add("GIT_CONFIG_COUNT")
    return frozenset(safe)


__all__ = ["harmless_env", "option_runs_program"]
