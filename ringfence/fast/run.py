"""`ringfence run`: its command line (stdlib + tree-sitter only; never typer/rich/lark).

This is CLI code: it parses the arguments by hand (argparse would eat the command's
flags), resolves the workspace and the profile, and hands one
:class:`ringfence.session.governor.Request` to :func:`ringfence.session.governor.govern`, the
library's request-to-outcome state machine.

Exit statuses (SPEC §4): the command's own status passes through; 125 when it
cannot run safely (nothing was run); 77 denied by the profile; 75 waiting for
approval; 124 wall-clock timeout; 128+N when ringfence received signal N.
"""

from __future__ import annotations

import os
from typing import Any

from ringfence.session.governor import Deps, Request, Streams, default_deps, govern
from ringfence.ledger.grants import current_session
from ringfence.ledger.store import Ledger


def main(argv: list[str]) -> int:
    return main_run(argv)


USAGE = """\
usage: ringfence run [-p|--profile P] [-w|--workspace DIR] [--host]
                     [--session S] [--sandbox on|off] [--timeout SECONDS]
                     [--no-stdin]
                     (-c 'STRING' | --command-file FILE|- | [--] ARGV...)

Run a command inside the sandbox compiled from a profile, or ask to run it on
the host with --host. Every run, refusal and approval request is recorded in
the ledger.

options:
  -p, --profile P        built-in name or TOML path (default: the active one)
  -w, --workspace DIR    the writable project directory (default: see below)
  --host                 ask to run on the host: granted, or 75 + an approval id
  --session S            session for grants (default: $RINGFENCE_SESSION)
  --sandbox on|off       off = profile 'host': full host access, recorded
  --timeout SECONDS      kill the whole sandbox after SECONDS (0 < s <= 604800)
  --no-stdin             the command reads /dev/null, not this terminal (for
                         callers that are not a person; hook --wrap sets it)
  -c 'STRING'            run STRING with bash inside the sandbox

examples:
  ringfence run -- pytest -q                    # the active profile (build)
  ringfence run -p strict -- python3 script.py  # no network, secrets hidden
  ringfence run -p observe -c 'git status 2>&1 | head -5'
  ringfence run -p ./my-profile.toml -w ~/src/app -- make test
  ringfence run --host -- longbridge quote AAPL.US
  ringfence run --sandbox off -- ./deploy.sh

--command-file reads the command string from FILE (or stdin for '-'), minus one
trailing newline: commands up to 1 MiB, past the argv limit. Without --workspace
the workspace is CLAUDE_PROJECT_DIR, else the git root of the cwd, else the cwd.

exit status: the command's own; 125 = could not run safely (nothing ran, also
for bad arguments); 77 = denied by the profile; 75 = waiting for approval
(approve with 'ringfence approve ID'); 124 = timed out.
"""


# A command longer than this could not be exec'd anyway (the kernel's ARG_MAX for the
# whole argv + environment is 2 MiB on most systems); docs/cli.md documents it.
MAX_COMMAND_FILE = 1024 * 1024
MAX_TIMEOUT = 7 * 86400   # a week: a longer "timeout" is a typo, not a limit


def parse_run_args(argv: list[str]) -> dict:
    """Parse `ringfence run` arguments by hand: argparse would eat the command's flags."""
    from ringfence.rfcore.errors import UsageError

    opts: dict[str, Any] = {"profile": None, "workspace": None, "host": False,
                            "session": None, "sandbox": "on", "timeout": None,
                            "command": None, "argv": None, "help": False, "no_stdin": False,
                            "command_file": None, "consent": None}
    takes = {"--profile": "profile", "-p": "profile", "--workspace": "workspace",
             "-w": "workspace", "--session": "session", "--sandbox": "sandbox",
             "--timeout": "timeout", "-c": "command", "--command-file": "command_file",
             "--hook-consent": "consent"}
    i = 0
    while i < len(argv):
        a = argv[i]
        if a == "--":
            opts["argv"] = argv[i + 1:]
            break
        if a in ("-h", "--help"):
            opts["help"] = True
        elif a == "--host":
            opts["host"] = True
        elif a == "--no-stdin":
            opts["no_stdin"] = True
        elif a.split("=", 1)[0] in takes:
            name, eq, value = a.partition("=")
            if not eq:
                if i + 1 >= len(argv):
                    raise UsageError(f"{name} needs a value", hint="ringfence run --help")
                i, value = i + 1, argv[i + 1]
            opts[takes[name]] = value
        elif a.startswith("-"):
            raise UsageError(f"unknown option {a!r} for 'ringfence run'",
                             hint="put the command after '--', e.g. ringfence run -- ls -la")
        else:
            opts["argv"] = argv[i:]
            break
        i += 1
    if opts["help"]:
        return opts
    if opts["command_file"] is not None:
        if opts["command"] is not None:
            raise UsageError("give -c 'STRING' or --command-file, not both")
        opts["command"] = _read_command_file(opts["command_file"])
    if opts["sandbox"] not in ("on", "off"):
        raise UsageError(f"--sandbox takes on or off, not {opts['sandbox']!r}")
    if opts["sandbox"] == "off" and opts["profile"] not in (None, "host"):
        raise UsageError(f"--sandbox off conflicts with --profile {opts['profile']}",
                         hint="--sandbox off means profile 'host'; drop one of them")
    if opts["timeout"] is not None and (opts["host"] or opts["sandbox"] == "off"):
        # Refused rather than ignored: a limit that silently does nothing is worse.
        raise UsageError("--timeout applies to sandboxed runs only (the sandbox is what "
                         "can be killed as a whole); drop it or drop --host/--sandbox off")
    if opts["timeout"] is not None:
        from ringfence.fast.numbers import number

        # SPEC §4: bad arguments to `run` exit 125 (nothing ran), so UsageError.
        opts["timeout"] = number(opts["timeout"], option="--timeout", whole=False, low=0,
                                 above_low=True, high=MAX_TIMEOUT, unit="seconds",
                                 example=30, error=UsageError)
    if opts["command"] is not None and not opts["command"].strip():
        raise UsageError("empty command string", hint="ringfence run -c 'STRING'")
    if (opts["command"] is None) == (not opts["argv"]):
        raise UsageError("give exactly one of -c 'STRING' or an argv after '--'",
                         hint="ringfence run -- ls -la   or   ringfence run -c 'ls | head'")
    return opts


def _read_command_file(path: str) -> str:
    """The command text of --command-file (``-`` = stdin), minus ONE trailing newline
    (a here-document always ends in one). Read as bytes and decoded strictly."""
    import sys

    from ringfence.rfcore.errors import UsageError

    try:
        if path == "-":
            data = sys.stdin.buffer.read(MAX_COMMAND_FILE + 1)
        else:
            with open(path, "rb") as fh:
                data = fh.read(MAX_COMMAND_FILE + 1)    # /dev/zero never ends
    except OSError as exc:
        raise UsageError(f"cannot read --command-file {path!r}: {exc.strerror}") from None
    if len(data) > MAX_COMMAND_FILE:
        raise UsageError(f"the --command-file text is longer than {MAX_COMMAND_FILE // 1024} "
                         "KiB; nothing was run",
                         hint="put a long script in a file in the workspace and run it: "
                              "ringfence run -- bash script.sh")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise UsageError("the --command-file text is not valid UTF-8 (RF008); nothing was run",
                         hint="pass the command as UTF-8 text") from None
    return text[:-1] if text.endswith("\n") else text


def _check_command(opts: dict) -> None:
    """Refuse what cannot be run, recorded and approved faithfully (125, nothing ran)."""
    from ringfence.rfcore.errors import UsageError

    words = [opts["command"]] if opts["command"] is not None else list(opts["argv"] or ())
    if opts["argv"] and not opts["argv"][0]:
        raise UsageError("the program name is empty; nothing was run",
                         hint="ringfence run -- PROGRAM [ARGS...]")
    for w in words:
        try:
            w.encode("utf-8")
        except UnicodeEncodeError:
            raise UsageError("the command is not valid UTF-8 (RF008): ringfence cannot record "
                             "or approve it faithfully, so nothing was run",
                             hint="pass the command as UTF-8 text") from None


def main_run(argv_list: list[str], *, deps: Deps | None = None, ledger: Ledger | None = None,
             streams: Streams | None = None, env=None) -> int:
    """The whole `ringfence run` CLI: parse, resolve the profile, govern, exit status."""
    env = os.environ if env is None else env
    streams = streams or Streams()
    opts = parse_run_args(list(argv_list))
    if opts["help"]:
        streams.out.write(USAGE.encode())
        streams.out.flush()
        return 0
    _check_command(opts)
    if env.get("RINGFENCE_SESSION_TTL"):
        from ringfence.ledger.grants import session_ttl

        session_ttl(env)        # a bad TTL is refused before anything runs (issue 23)
    from ringfence.rfcore.workspace import find_workspace

    workspace, _rule = find_workspace(env=env, explicit=opts["workspace"])
    if not os.path.isdir(workspace):
        from ringfence.rfcore.errors import UsageError

        raise UsageError(f"workspace {workspace!r} is not a directory; nothing was run (RF609)",
                         hint="pass --workspace DIR with an existing directory")
    deps = deps or default_deps()
    if opts["sandbox"] == "off":
        profile = deps.load_profile("host", workspace=workspace)
    else:
        from ringfence.profiles.load import resolve_active

        profile, _why = resolve_active(opts["profile"], env=env, workspace=workspace)
    session, _named = current_session(opts["session"], env)
    req = Request(profile=profile, command=opts["command"],
                  argv=tuple(opts["argv"]) if opts["argv"] else None, workspace=workspace,
                  cwd=os.getcwd(), host=opts["host"], session=session,
                  timeout=opts["timeout"], interactive=not opts["no_stdin"],
                  consent=opts["consent"])
    own = ledger is None
    ledger = ledger or Ledger(env=env)
    try:
        return govern(req, ledger=ledger, deps=deps, streams=streams).exit_code
    finally:
        if own:
            ledger.close()
