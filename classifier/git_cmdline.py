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


# git-config(1): options that take a value, the read-only forms, and the
# subcommand words of git 2.46+ (`git config set KEY VALUE`)
_CONFIG_VALUE = frozenset({"-f", "--file", "--blob", "--type", "--default", "--comment",
                           "--value"})
_CONFIG_LONGS = frozenset({
    "--global", "--system", "--local", "--worktree", "--file", "--blob", "--get", "--get-all",
    "--get-regexp", "--get-urlmatch", "--replace-all", "--add", "--unset", "--unset-all",
    "--rename-section", "--remove-section", "--list", "--fixed-value", "--edit",
    "--get-color", "--get-colorbool", "--type", "--bool", "--int", "--bool-or-int",
    "--bool-or-str", "--path", "--expiry-date", "--null", "--name-only", "--includes",
    "--no-includes", "--show-origin", "--show-scope", "--default", "--comment", "--value",
    "--all", "--regexp", "--url", "--no-type"})
_CONFIG_READS = frozenset({"--get", "--get-all", "--get-regexp", "--get-urlmatch", "--list",
                           "-l", "--get-color", "--get-colorbool", "--unset", "--unset-all",
                           "--remove-section"})
_CONFIG_SUBS_READ = frozenset({"get", "list", "unset", "remove-section"})


def config_write_runs(rest: tuple[Word, ...]) -> Word | None:
    """`git config ...` (the words after `config`): the word whose write makes
    git run a program later (key_can_run_program: an unknown key can), or None.
    Reads, --unset and --remove-section write nothing that runs; --edit,
    --rename-section and a key decided at run time can write anything."""
    operands: list[Word] = []
    opts: list[str] = []
    i, n = 0, len(rest)
    while i < n:
        w = rest[i]
        if not w.static:
            return w
        v = w.value
        if v.startswith("--") and len(v) > 2:
            name, eq, _ = v.partition("=")
            hits = [k for k in _CONFIG_LONGS if k.startswith(name)]
            name = name if name in _CONFIG_LONGS else hits[0] if len(hits) == 1 else name
            if name not in _CONFIG_LONGS:
                return w                 # an option git-config may read some other way
            opts.append(name)
            i += 1 if eq or name not in _CONFIG_VALUE else 2
            continue
        if v.startswith("-") and len(v) > 1:
            opts.extend("-" + c for c in v[1:])
            i += 2 if v[-1] == "f" else 1
            continue
        operands.append(w)
        i += 1
    if any(o in ("--edit", "-e", "--rename-section") for o in opts):
        return rest[0] if rest else None
    if any(o in _CONFIG_READS for o in opts):
        return None
    if operands and operands[0].value in _CONFIG_SUBS_READ:
        return None
    if operands and operands[0].value in ("set", "edit", "rename-section"):
        if operands[0].value != "set":
            return operands[0]
        operands = operands[1:]
    if len(operands) < 2:
        return None                      # `git config KEY`: prints it
    key, value = operands[0], operands[1]
    return key if key_can_run_program(key.value, value.value) else None


# short options of these subcommands that take a value (a cluster ends there)
_SUB_VALUE_SHORTS = {"rebase": "sXSC", "clone": "objc", "difftool": "t", "push": "o",
                     "fetch": "jo", "pull": "jsXo"}


def sub_option_runs(sub: str, trig: frozenset[str], w: Word) -> str:
    """The option of ``trig`` that the word ``w`` of `git SUB` gives, as git's
    parse-options reads it: a unique or ambiguous prefix of a long one
    (`--exe`; an ambiguous one git refuses, so judging it runs costs nothing)
    or a letter in a short-option cluster (`-ix CMD`); else ''."""
    v = w.value
    if v.startswith("--") and len(v) > 2:
        name = v.partition("=")[0]
        for t in sorted(trig):
            if t.startswith("--") and t.startswith(name):
                return t
        return ""
    if v.startswith("-") and len(v) > 1:
        stops = _SUB_VALUE_SHORTS.get(sub, "")
        for c in v[1:]:
            if "-" + c in trig:
                return "-" + c
            if c in stops:
                break
    return ""
