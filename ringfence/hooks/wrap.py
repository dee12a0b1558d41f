"""``hook claude-code --wrap``: what runs in Claude's shell and what in the sandbox.

Claude Code's Bash tool keeps one shell between calls, so shell-state commands
(``cd``, ``export``, ``source``, ``set``, ``alias``, ``unset``, ...) only mean
something in *that* shell. Three plans:

* ``state``: the whole command only changes shell state. It is not wrapped: it
  runs in Claude's shell, so it is judged as a host command (``cd src`` is a
  helper and passes; ``source .venv/bin/activate`` runs code and asks).
* ``wrap`` with a prefix: leading static ``cd``/``pushd`` steps joined by ``&&``
  or ``;`` stay in Claude's shell and the rest runs sandboxed in the directory
  they lead to: ``cd src && pytest`` becomes ``cd src && ringfence run ... pytest``.
* ``wrap``: everything runs under ``ringfence run``.

The command text reaches ``ringfence run`` through a quoted here-document on
stdin (``--command-file -``), never argv, so commands of any size work (the
kernel caps one argv string at 128 KiB). The delimiter is random and checked
against every line of the command; bash passes a quoted here-document through
byte for byte.
"""

from __future__ import annotations

import os
import sys

STATE_PROGRAMS = frozenset({"cd", "pushd", "popd", "export", "unset", "set", "source", ".",
                            "alias", "unalias", "shopt", "umask", "declare", "typeset",
                            "readonly", "local", "hash", "ulimit"})
STATE_KINDS = frozenset({"declaration", "unset", "assign"})
HOISTABLE = frozenset({"cd", "pushd"})


def self_invocation() -> list[str]:
    """How to run this very ringfence again, independent of the agent's PATH."""
    script = sys.argv[0] if sys.argv else ""
    if os.path.basename(script) == "ringfence":
        import shutil

        found = script if os.sep in script else shutil.which(script)
        if found:
            return [os.path.abspath(found)]
    return [sys.executable, "-m", "ringfence"]


def profile_ref(profile) -> str:
    src = profile.source or ""
    return src.split(":", 1)[1] if src.startswith("builtin:") else (src or profile.name)


def _is_state(cmd) -> bool:
    if cmd.kind in STATE_KINDS:
        return True
    return (cmd.kind == "simple" and bool(cmd.words) and not cmd.words[0].dynamic
            and cmd.words[0].value in STATE_PROGRAMS)


def plan(command: str) -> tuple[str, str, str]:
    """``(kind, prefix, body)``: kind ``state`` (run unwrapped) or ``wrap``."""
    from ringfence.classifier.parse import parse

    script = parse(command)
    cmds = script.commands
    if script.problems or not cmds:
        return "wrap", "", command
    if all(_is_state(c) and not c.in_subst and not c.background for c in cmds):
        return "state", command, ""
    # Hoist leading static `cd DIR` steps: plain commands, one pipeline stage, each
    # followed by exactly `&&` or `;`, with nothing else (redirects, constructs) in them.
    cut = 0
    for i, c in enumerate(cmds[:-1]):
        if not (c.kind == "simple" and c.words and c.words[0].value in HOISTABLE
                and len(c.words) <= 2 and all(w.static for w in c.words)
                and c.stage is None and not c.in_subst and not c.background):
            break
        if any(r.span[0] < c.span[1] and c.span[0] < r.span[1] for r in script.redirects):
            break
        gap = command[c.span[1]:cmds[i + 1].span[0]].strip()
        if gap not in ("&&", ";"):
            break
        cut = cmds[i + 1].span[0]
    if cut and not any(k.span[0] < cut for k in script.constructs):
        return "wrap", command[:cut].rstrip(), command[cut:]
    return "wrap", "", command


def _delimiter(body: str) -> str:
    lines = set(body.split("\n"))
    while True:
        d = "RINGFENCE_CMD_" + os.urandom(6).hex().upper()
        if d not in lines:
            return d


def wrap_command(body: str, profile, session: str | None, *, workspace: str | None = None,
                 consent: str | None = None, prefix: str = "",
                 prog: list[str] | None = None) -> str:
    """The shell text that runs ``body`` under ``ringfence run`` (after ``prefix``)."""
    # --no-stdin: the wrapped command is an agent's, not a person's at a terminal
    # (its stdin carries the command text to `run`; the command reads /dev/null).
    parts = [*(prog or ["ringfence"]), "run", "--no-stdin", "--profile", profile_ref(profile)]
    if session:
        parts += ["--session", session]
    if workspace:
        parts += ["--workspace", workspace]
    if consent:
        parts += ["--hook-consent", consent]
    parts += ["--command-file", "-"]
    delim = _delimiter(body)
    import shlex   # only a wrapped call quotes; every other hook call skips the import

    run = f"{shlex.join(parts)} <<'{delim}'\n{body}\n{delim}"
    # The prefix ends in its own `&&` or `;`, so the original semantics hold: after
    # `cd src &&` a failed cd runs nothing.
    return f"{prefix} {run}" if prefix else run
