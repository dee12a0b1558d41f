"""In-sandbox launcher: hand the 127.0.0.1 listener to the proxy, then exec.

Run INSIDE the sandbox, before the command, as:

  python3 -I -S /tmp/.ringfence-proxy/relay.py [--listen 127.0.0.1:PORT --handoff-fd N] -- ARGV...

1. If ``--listen`` is given: bind and listen on 127.0.0.1:PORT in the
   sandbox's own network namespace, send the listening socket to the host's
   proxy over fd N (a connected socket pair ringfence created, SCM_RIGHTS),
   wait for the proxy's one-byte acknowledgement, then close both. From then
   on the proxy, outside, accepts the command's connections itself: no
   process in the sandbox copies bytes, and none holds a socket the command
   could not open (SPEC §4: no process the command can reach through ptrace
   access holds a right the command lacks).
2. ``execvp(ARGV)``.

The seccomp filter is bwrap's (``--seccomp``): the same program binds bwrap's
init, this launcher and the command. The launcher needs only ``socket(AF_INET)``
and ``sendmsg`` on an inherited descriptor, which the command may use too.

Fail closed: any failure in 1 prints ``ringfence: ...`` on stderr and exits
125 WITHOUT running the command. If the command itself cannot be
executed, the exit status is 127 (not found) or 126 (not executable), as a
shell would report, so callers can tell "sandbox broken" from "no such program".

Stdlib only and no ``site``: this runs before every sandboxed command with
network, so it imports ``os``, ``sys`` and ``_socket`` only.
"""

import os
import sys

EXIT_UNSAFE = 125
ACK_TIMEOUT = 10.0
ACK = b"k"


class Fail(Exception):
    pass


def parse_args(args):
    opts = {"listen": None, "handoff_fd": None}
    i = 0
    while i < len(args):
        a = args[i]
        if a == "--":
            argv = args[i + 1:]
            break
        if a in ("--listen", "--handoff-fd"):
            if i + 1 >= len(args):
                raise Fail(f"{a} needs a value")
            opts[a[2:].replace("-", "_")] = args[i + 1]
            i += 2
            continue
        raise Fail(f"unknown argument {a!r}")
    else:
        raise Fail("missing '--' before the command")
    if not argv:
        raise Fail("no command given after '--'")
    if (opts["listen"] is None) != (opts["handoff_fd"] is None):
        raise Fail("--listen and --handoff-fd go together")
    if opts["listen"] is not None:
        host, _, port = opts["listen"].rpartition(":")
        if host != "127.0.0.1" or not port.isdigit() or not 0 < int(port) < 65536:
            # Only loopback: the listener must never be reachable from another
            # namespace.
            raise Fail(f"--listen must be 127.0.0.1:PORT, not {opts['listen']!r}")
        opts["listen"] = (host, int(port))
        if not opts["handoff_fd"].isdigit():
            raise Fail("--handoff-fd must be a file descriptor number, "
                       f"not {opts['handoff_fd']!r}")
        opts["handoff_fd"] = int(opts["handoff_fd"])
    return opts, argv


def hand_off(listen, fd):
    """Listen on ``listen`` and give the listener to the proxy over ``fd``."""
    # _socket, not socket: the wrapper module imports enum/selectors (~5 ms).
    import _socket as socket
    try:
        chan = socket.socket(fileno=fd)
    except OSError as exc:
        raise Fail(f"no proxy hand-off channel on fd {fd}: {exc.strerror}") from None
    try:
        try:
            lsock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            lsock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            lsock.bind(listen)
            lsock.listen(128)
        except OSError as exc:
            raise Fail(f"cannot listen on {listen[0]}:{listen[1]}: {exc.strerror}") from None
        try:
            chan.sendmsg([b"L"], [(socket.SOL_SOCKET, socket.SCM_RIGHTS,
                                   lsock.fileno().to_bytes(4, sys.byteorder))])
            chan.settimeout(ACK_TIMEOUT)
            ack = chan.recv(1)
        except OSError as exc:
            raise Fail(f"cannot hand the listener to the proxy: {exc.strerror or exc}") from None
        finally:
            lsock.close()          # the command never holds the listener
        if ack != ACK:
            raise Fail("the proxy did not take the listener")
    finally:
        chan.close()               # nor the channel


def main(args):
    try:
        opts, argv = parse_args(args)
        if opts["listen"] is not None:
            hand_off(opts["listen"], opts["handoff_fd"])
    except Fail as exc:
        sys.stderr.write(f"ringfence: the sandbox could not be set up: {exc}; "
                         "the command was not run\n")
        return EXIT_UNSAFE
    sys.stdout.flush()
    try:
        os.execvp(argv[0], argv)
    except OSError as exc:
        # What the user sees: their program's name and what went wrong, in the
        # shell's words and with the shell's status, never this helper's name.
        code = 127 if isinstance(exc, FileNotFoundError) else 126
        what = "command not found" if code == 127 else (exc.strerror or "cannot run").lower()
        sys.stderr.write(f"ringfence: {argv[0]}: {what} in the sandbox (exit {code})\n")
        return code
    return EXIT_UNSAFE   # not reached


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
