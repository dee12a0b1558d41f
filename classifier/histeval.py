"""RF117 beyond eval: bash builtins that run or stage shell code (bash(1)
"SHELL BUILTIN COMMANDS": fc, history, set -k)."""

from __future__ import annotations

from .ir import Word

# bash(1) builtins that run or stage shell code: `fc` re-runs history (-s now,
# else through an editor; -l only lists); `history -s/-r/-n` put lines into the
# history that `fc -s`/`!!` run, `-w`/`-a` write the history file; `set -k`
# makes every later NAME=VALUE word an assignment (what runs changes)
HISTORY_EVAL = frozenset({"fc", "history", "set"})


def history_eval(name: str, args: tuple[Word, ...]) -> str:
    """Why `fc`/`history`/`set` with these arguments runs or stages code, or ''."""
    letters = ""
    for k, w in enumerate(args):
        if not w.static:
            return f"`{name}` gets an argument decided at run time"
        v = w.value
        if v == "--":
            break
        if name == "set" and v in ("-o", "+o") and k + 1 < len(args) and \
                (not args[k + 1].static or args[k + 1].value == "keyword"):
            return "`set -o keyword` makes later NAME=VALUE words assignments"
        if len(v) > 1 and v[0] in "-+" and v[1] != "-":
            letters += v[1:]
    if name == "set":
        return "`set -k` makes later NAME=VALUE words assignments" if "k" in letters else ""
    if name == "history":
        hit = next((c for c in letters if c in "swarn"), "")
        return f"`history -{hit}` stages or writes shell history" if hit else ""
    if "l" in letters and not ("s" in letters or "e" in letters):
        return ""
    return "`fc` runs commands from the shell history"
