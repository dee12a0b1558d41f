"""Fast path for `ringfence run` (stdlib + tree-sitter only; never typer/rich/lark).

Exit statuses (SPEC §4): the command's own status passes through; 125 when it
cannot run safely (nothing was run); 77 denied by the profile; 75 waiting for
approval; 124 wall-clock timeout; 128+N when ringfence received signal N.
"""

from __future__ import annotations

import argparse
import sys

from rfcore.errors import UsageError

EPILOG = """\
examples:
  ringfence run -- pytest -q                       # active profile (default: build)
  ringfence run -p strict -- python3 script.py     # no network, secrets hidden
  ringfence run -p observe -c 'git status 2>&1 | head -5'
  ringfence run -p ./my-profile.toml -w ~/src/app -- make test
  ringfence run --sandbox off -- ./deploy.sh       # explicit full host access, recorded

exit status: the command's own; 125 = could not run safely (nothing ran);
77 = denied by the profile; 75 = waiting for approval; 124 = timed out.
"""


class _Parser(argparse.ArgumentParser):
    # Bad arguments to `run` are exit 125 (SPEC §4), not argparse's 2.
    def error(self, message: str):
        raise UsageError(message, hint="ringfence run --help")


def parser() -> argparse.ArgumentParser:
    p = _Parser(prog="ringfence run", formatter_class=argparse.RawDescriptionHelpFormatter,
                description="Run a command inside the sandbox compiled from a profile.",
                epilog=EPILOG)
    p.add_argument("-p", "--profile", help="built-in name (observe, build, strict, "
                   "host-assisted, host) or a path to a TOML profile")
    p.add_argument("-w", "--workspace", help="the writable project directory "
                   "(default: the current directory)")
    p.add_argument("--sandbox", choices=("on", "off"), default="on",
                   help="'off' = profile 'host': full host access for this command")
    p.add_argument("--timeout", type=float, metavar="S",
                   help="wall-clock limit in seconds; kills the whole sandbox")
    p.add_argument("-c", dest="command", metavar="STRING",
                   help="run STRING with bash inside the sandbox")
    p.add_argument("argv", nargs=argparse.REMAINDER, help="-- ARGV... the command to run")
    return p


def main(argv: list[str]) -> int:
    args = parser().parse_args(argv)
    rest = list(args.argv)
    if rest and rest[0] == "--":
        rest = rest[1:]
    if args.command is not None and rest:
        raise UsageError("give either -c 'STRING' or -- ARGV..., not both")
    if args.command is None and not rest:
        raise UsageError("no command given", hint="ringfence run -- ARGV...  or  -c 'STRING'")
    if args.timeout is not None and not args.timeout > 0:
        raise UsageError("--timeout must be a positive number of seconds")
    profile = args.profile
    if args.sandbox == "off":
        if profile not in (None, "host"):
            raise UsageError(f"--sandbox off conflicts with --profile {profile}",
                             hint="--sandbox off means profile 'host'; drop one of them")
        profile = "host"
    from ringfence.runner import describe_refusal, run

    result = run(rest or None, command=args.command, profile=profile,
                 workspace=args.workspace, timeout=args.timeout)
    if result.status in ("denied", "waiting_for_approval"):
        print(f"ringfence run: {describe_refusal(result)}", file=sys.stderr)
    return result.exit_code
