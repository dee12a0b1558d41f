"""Reads on the host stay in the project (issue 20 §3).

The built-in profiles allow read-only programs on the host (observe.toml's
``commands.allow``: ``ls``, ``cat``, ``grep``, ``git status``, ``sed -n``, ...), so
``ringfence hook claude-code`` without ``--wrap`` does not prompt for them, as
stock Claude Code does not. On the host nothing masks ``~/.ssh``, so an allow
rule covers such a program only while every path it is given stays inside the
directory it runs in, and that directory is inside the project: an operand or
option value that is absolute outside the project (``/etc``), starts at a home directory (``~``), holds
an expansion (``$HOME``) or climbs out (``..``, ``.*``), a file it reads by
redirection (``< ~/.aws/credentials``), a ``cd ..`` before it, or a working
directory outside the project (Claude's shell after ``cd ~``) makes it ask.
A symlink inside the project that points out is not seen (known problem: run
with ``--wrap``, the default, where the sandbox masks credential stores).

Applies to the programs in :data:`READERS` (by basename), whatever rule or grant
covers them: a yes to `cat ../notes` grants `cat`, which then covers reads inside
the project only; on the host a read outside it asks every time. Pure: stdlib only.
"""

from __future__ import annotations

from ringfence.rfcore.actions import READERS


_GLOB = frozenset("*?[")


def _escapes(word: str, root: str | None = None) -> bool:
    if word.startswith("/") and root and not any(c in word for c in "$`{*?["):
        import os

        path = os.path.normpath(word)       # an absolute path inside the project is in
        return path != root and not path.startswith(root.rstrip("/") + "/")
    if word.startswith(("/", "~")) or any(c in word for c in "$`{"):
        return True     # absolute, a home, or an expansion whose value is unknown
    for part in word.replace("\\", "/").split("/"):
        # `..`, and a glob that can match it (`.*`, `.?`, `.[.]`)
        if part == ".." or (part.startswith(".") and any(c in _GLOB for c in part)):
            return True
    return False


def dir_moves(command: str) -> list[tuple[str, ...]]:
    """Every `cd`/`pushd`/`popd` in ``command``, as argv after quote removal (so
    `"cd" ..`, `\\cd ..`, `c'd' ..`, `cd .''.` are all seen), after `builtin`,
    `command` or `exec` and their options; a command name the parse cannot know
    (`$c ..`) counts as one."""
    from ringfence.classifier.parse import parse

    out: list[tuple[str, ...]] = []
    for cmd in parse(command).commands:
        if cmd.kind != "simple" or not cmd.words:
            continue
        words = list(cmd.words)
        while words and words[0].static and words[0].value in ("builtin", "command", "exec"):
            words = words[1:]
            while words and words[0].static and words[0].value.startswith("-"):
                words = words[1:]
        if words and (not words[0].static or words[0].value in ("cd", "pushd", "popd")):
            out.append(tuple(w.value if w.static else "$?" for w in words))
    return out


def _stays(argv: tuple[str, ...]) -> bool:
    """Provably the same directory: `cd .`, `cd ./`, `cd ./.` (never CDPATH'd, no
    options, no link to follow). Anything else (`cd src`, `pushd`, `popd`) moves."""
    import os

    return (len(argv) == 2 and argv[0] == "cd" and argv[1].startswith(".")
            and os.path.normpath(argv[1]) == "." and "\\" not in argv[1])


def _moves_out(verdict) -> str | None:
    """A `cd`/`pushd`/`popd` in the command that does not provably stay in the
    directory it was asked in."""
    for argv in dir_moves(verdict.command):
        if not _stays(argv):
            return f"runs after `{' '.join(argv)}`, outside the directory it was asked in"
    return None


def _launched(cap, verdict) -> str | None:
    """A launcher gives the reader operands at run time (`xargs cat`: RF202), or a
    wrapper runs it elsewhere (`env -C ..`, `env --chdir=..`): the argv is not all."""
    span = tuple(cap.span)
    for f in verdict.findings:
        if not (f.span[0] < span[1] and span[0] < f.span[1]):
            continue
        if f.code == "RF202":
            return "gets its operands at run time from a launcher"
        if f.code == "RF201":
            from ringfence.classifier.parse import parse

            for cmd in parse(verdict.command[span[0]:span[1]]).commands:
                for w in cmd.words:
                    v = w.value
                    if not w.static or v.startswith("--ch") or (
                            v[:1] == "-" and v[1:2] != "-" and "C" in v):
                        return f"runs under a wrapper that may change directory (`{v}`)"
    return None


def cwd_outside(cwd: str | None, workspace: str | None, home: str | None) -> str | None:
    """The working directory is not inside the project (or the project is / or home)."""
    import os

    if not cwd or not workspace:
        return None
    cwd, ws = os.path.realpath(cwd), os.path.realpath(workspace)
    if ws == "/" or (home and ws == os.path.realpath(home)):
        return f"runs in {cwd}, and the project is {ws}"
    if cwd != ws and not cwd.startswith(ws.rstrip("/") + "/"):
        return f"runs in {cwd}, outside the project {ws}"
    return None


def reads_outside(cap, verdict=None, *, cwd: str | None = None,
                  workspace: str | None = None, home: str | None = None) -> str | None:
    """Why an allow rule cannot cover ``cap`` on the host (the first path it would read
    outside its working directory, or an opaque option), or None."""
    if not cap.argv or cap.argv[0].rsplit("/", 1)[-1] not in READERS:
        return None
    where = cwd_outside(cwd, workspace, home) or (
        (_moves_out(verdict) or _launched(cap, verdict)) if verdict else None)
    if where:
        return where
    import os

    from ringfence.session.reader_opts import scan, sed_programs

    root = os.path.realpath(workspace) if workspace else None
    prog = cap.argv[0].rsplit("/", 1)[-1]
    opaque, values, _ = scan(prog, cap.argv[1:])
    if opaque is not None:
        return f"takes `{opaque}`, a script, a file list or an output the rule cannot see into"
    for word in (*cap.argv[1:], *values):
        value = word.split("=", 1)[1] if word.startswith("-") and "=" in word else word
        if _escapes(value, root):
            return f"would read {word!r}, outside the directory it runs in"
    if prog in ("sed", "gsed"):
        from ringfence.classifier.embedded import sed_reads

        for script in sed_programs(cap.argv[1:]) or ():
            files = sed_reads(script)
            if files is None:
                return "runs a sed script the rule cannot follow"
            for f in files:
                if not f or _escapes(f, root):
                    return f"its sed script reads {f!r}, outside the directory it runs in"
    for effect in cap.effects:
        if effect.startswith("read:") and _escapes(effect[5:], root):
            return f"would read {effect[5:]!r}, outside the directory it runs in"
    return None


__all__ = ["READERS", "reads_outside"]
