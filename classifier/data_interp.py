"""Shells and interpreters: which options mean "inline code follows" (RF107,
RF108, RF116).

Split out of classifier/data.py, which re-exports every name (callers use
``data.X``).
"""

from functools import lru_cache
from typing import NamedTuple

from ringfence.rfcore.lazyre import lazy


# --- shells and interpreters -------------------------------------------------


class Interp(NamedTuple):
    kind: str                                  # 'shell' or 'interpreter'
    inline_letters: str = ""                   # short letters meaning "code follows"
    inline_long: frozenset[str] = frozenset()  # exact long options meaning "code follows"
    value_letters: str = ""                    # short letters taking a value (attached or next)
    attached_letters: str = ""                 # short letters eating the rest of the cluster only
    digit_letters: str = ""                    # short letters followed by optional digits (-l0)
    value_long: frozenset[str] = frozenset()
    stop_letters: str = ""                     # -m module: the rest is the program's
    info: frozenset[str] = frozenset({"--version", "--help"})
    inline_subcommands: frozenset[str] = frozenset()   # deno eval
    case_insensitive_prefix: tuple[str, ...] = ()       # pwsh -Command / -EncodedCommand


_SHELL = Interp("shell", inline_letters="c", value_letters="oO",
                value_long=frozenset({"--rcfile", "--init-file"}),
                info=frozenset({"--version", "--help"}))
SHELLS = frozenset({"sh", "bash", "dash", "zsh", "ksh", "mksh", "ash", "yash", "rbash", "fish",
                    "tcsh", "csh", "busybox", "toybox"})

INTERPRETERS: dict[str, Interp] = {
    "python": Interp("interpreter", inline_letters="c", value_letters="WX", stop_letters="m",
                     info=frozenset({"-V", "--version", "-h", "--help"})),
    "node": Interp("interpreter", inline_letters="ep",
                   inline_long=frozenset({"--eval", "--print"}), value_letters="rC",
                   value_long=frozenset({"--require", "--import", "--loader", "--input-type",
                                         "--experimental-loader", "--conditions", "--env-file"}),
                   info=frozenset({"-v", "--version", "-h", "--help"})),
    "bun": Interp("interpreter", inline_letters="ep", inline_long=frozenset({"--eval", "--print"}),
                  info=frozenset({"-v", "--version", "-h", "--help"})),
    "deno": Interp("interpreter", inline_subcommands=frozenset({"eval"}),
                   info=frozenset({"-V", "--version", "-h", "--help"})),
    # perl -le: -l takes only optional digits, so the `e` after it is still -e
    "perl": Interp("interpreter", inline_letters="eE", attached_letters="CdDFiImMx",
                   digit_letters="0l", info=frozenset({"-v", "-V", "--version", "-h", "--help"})),
    "ruby": Interp("interpreter", inline_letters="e", value_letters="IrCE",
                   attached_letters="xFKTW", digit_letters="0", info=frozenset({"-v", "--version", "-h", "--help"})),
    "php": Interp("interpreter", inline_letters="rRBEd", value_letters="cfzSt",
                  info=frozenset({"-v", "--version", "-h", "--help", "-i", "-m"})),
    "lua": Interp("interpreter", inline_letters="e", value_letters="l",
                  info=frozenset({"-v"})),
    "Rscript": Interp("interpreter", inline_letters="e", info=frozenset({"--version", "--help"})),
    "R": Interp("interpreter", inline_letters="e", info=frozenset({"--version", "--help"})),
    "osascript": Interp("interpreter", inline_letters="e", value_letters="ls"),
    "pwsh": Interp("interpreter", case_insensitive_prefix=("-command", "-encodedcommand", "-ec"),
                   info=frozenset({"-v", "-version", "--version", "-h", "-help", "--help"})),
    "julia": Interp("interpreter", inline_letters="eE", info=frozenset({"-v", "--version"})),
    "expect": Interp("interpreter", inline_letters="c", value_letters="f"),
    "elixir": Interp("interpreter", inline_letters="e", info=frozenset({"-v", "--version"})),
}
INTERPRETER_ALIASES = {"nodejs": "node", "luajit": "lua", "powershell": "pwsh",
                       "pypy": "python", "pypy3": "python", "gawk": "awk"}
_PYTHON_NAME = lazy(r"python[0-9.]*|pypy[0-9.]*")
_LUA_NAME = lazy(r"lua[0-9.]*|luajit")


@lru_cache(maxsize=4096)
def interp_for(name: str) -> tuple[str, Interp] | None:
    """The shell/interpreter row for a program basename, if any."""
    if name in SHELLS:
        return name, _SHELL
    if _PYTHON_NAME.fullmatch(name):
        return "python", INTERPRETERS["python"]
    if _LUA_NAME.fullmatch(name):
        return "lua", INTERPRETERS["lua"]
    base = INTERPRETER_ALIASES.get(name, name)
    row = INTERPRETERS.get(base)
    return (base, row) if row else None
