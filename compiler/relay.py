"""In-sandbox launcher: TCP relay to the proxy, then seccomp, then exec.

Run INSIDE the sandbox, before the command, as:

  python3 -I -S /run/ringfence/relay.py [--listen 127.0.0.1:PORT --unix /run/ringfence/proxy.sock]
                                        [--seccomp-fd N] -- ARGV...

1. If ``--listen`` is given: bind and listen on 127.0.0.1:PORT *first* (so the
   port is ready before the command starts), then fork a relay child that
   copies bytes between each TCP client and a fresh connection to the proxy's
   Unix socket. The child must stay outside the seccomp filter, since it needs
   ``socket(AF_UNIX)``. It dies with the command (PR_SET_PDEATHSIG) and holds
   none of the command's stdio open.
2. If ``--seccomp-fd`` is given: read the BPF program from that fd, set
   PR_SET_NO_NEW_PRIVS and install it with PR_SET_SECCOMP on this process.
3. ``execvp(ARGV)``.

Fail closed: any failure in 1 or 2 prints ``ringfence: ...`` on stderr
and exits 125 WITHOUT running the command. If the command itself cannot be
executed, the exit status is 127 (not found) or 126 (not executable), as a
shell would report, so callers can tell "sandbox broken" from "no such program".

Stdlib only and no ``site``: this runs on every sandboxed command with network,
so it imports as little as it can (ctypes only when a filter is installed).
"""

import os
import sys

EXIT_UNSAFE = 125
PR_SET_PDEATHSIG = 1
PR_SET_DUMPABLE = 4
PR_SET_SECCOMP = 22
PR_SET_NO_NEW_PRIVS = 38
SECCOMP_MODE_FILTER = 2
SIGKILL = 9


class Fail(Exception):
    pass


def parse_args(args):
    opts = {"listen": None, "unix": None, "seccomp_fd": None}
    i = 0
    while i < len(args):
        a = args[i]
        if a == "--":
            argv = args[i + 1:]
            break
        if a in ("--listen", "--unix", "--seccomp-fd"):
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
    if (opts["listen"] is None) != (opts["unix"] is None):
        raise Fail("--listen and --unix go together")
    if opts["listen"] is not None:
        host, _, port = opts["listen"].rpartition(":")
        if host != "127.0.0.1" or not port.isdigit() or not 0 < int(port) < 65536:
            # Only loopback: the relay must never listen where another
            # namespace could reach it.
            raise Fail(f"--listen must be 127.0.0.1:PORT, not {opts['listen']!r}")
        opts["listen"] = (host, int(port))
    if opts["seccomp_fd"] is not None:
        if not opts["seccomp_fd"].isdigit():
            raise Fail(f"--seccomp-fd must be a file descriptor number, not {opts['seccomp_fd']!r}")
        opts["seccomp_fd"] = int(opts["seccomp_fd"])
    return opts, argv


_LIBC = []


def _libc():
    # Loaded once, before the fork when a filter follows, so parent and relay
    # child share it instead of both paying the import.
    if not _LIBC:
        import ctypes
        _LIBC.extend((ctypes, ctypes.CDLL(None, use_errno=True)))
    return _LIBC[0], _LIBC[1]


def start_relay(listen, unix_path):
    # _socket, not socket: the wrapper module imports enum/selectors (~5 ms) and
    # this runs before every networked command.
    import _socket as socket
    try:
        lsock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        lsock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        lsock.bind(listen)
        lsock.listen(128)
    except OSError as exc:
        raise Fail(f"cannot listen on {listen[0]}:{listen[1]}: {exc.strerror}") from None
    # Probe the proxy now so a missing socket fails the run instead of every request.
    try:
        probe = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        probe.connect(unix_path)
        probe.close()
    except OSError as exc:
        raise Fail(f"cannot reach the proxy at {unix_path}: {exc.strerror}") from None
    parent = os.getpid()
    pid = os.fork()
    if pid:
        lsock.close()          # the command never holds the listener
        return
    try:
        ctypes, libc = _libc()
        libc.prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0)
        # The relay runs without the full filter (it must reach the proxy's Unix
        # socket). Non-dumpable: the command, same uid, cannot ptrace it or write
        # its memory through /proc/PID/mem to borrow its AF_UNIX access.
        if libc.prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) != 0:
            os._exit(125)
        if os.getppid() != parent:       # the command already exited
            os._exit(0)
        null = os.open("/dev/null", os.O_RDWR)
        for fd in (0, 1, 2):             # never keep the command's pipes open
            os.dup2(null, fd)
        # Nor any other inherited fd (status pipes, the seccomp program): the
        # relay holds only its listener and the sockets it creates.
        keep = lsock.fileno()
        os.closerange(3, keep)
        os.closerange(keep + 1, 65536)
        serve(lsock, unix_path)
    finally:
        os._exit(0)


def serve(lsock, unix_path):
    """Copy bytes both ways between TCP clients and the Unix socket, forever.

    Two threads per connection with blocking I/O: a slow reader on one
    connection can never stall another (a single select loop with blocking
    sends could). Threads exist only in this child, never in the command.
    """
    import _socket as socket
    import threading
    import time

    def pump(src, dst, done):
        try:
            while True:
                data = src.recv(65536)
                if not data:
                    break
                dst.sendall(data)
        except OSError:
            pass
        try:
            dst.shutdown(socket.SHUT_WR)      # pass the EOF on (half-close)
        except OSError:
            pass
        if done.acquire(blocking=False):      # the first pump to finish
            return
        src.close()
        dst.close()

    while True:
        try:
            fd, _ = lsock._accept()
            client = socket.socket(fileno=fd)
        except OSError:
            time.sleep(0.05)      # e.g. EMFILE: back off instead of spinning
            continue
        up = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            up.connect(unix_path)
        except OSError:
            client.close()
            up.close()
            continue
        done = threading.Lock()
        for a, b in ((client, up), (up, client)):
            threading.Thread(target=pump, args=(a, b, done), daemon=True).start()


def apply_seccomp(fd):
    try:
        with os.fdopen(fd, "rb", closefd=True) as f:
            program = f.read()
    except OSError as exc:
        raise Fail(f"cannot read the seccomp program from fd {fd}: {exc.strerror}") from None
    if not program or len(program) % 8 or len(program) // 8 > 4096:
        raise Fail(f"invalid seccomp program ({len(program)} bytes)")
    ctypes, libc = _libc()

    class SockFprog(ctypes.Structure):
        _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]

    buf = ctypes.create_string_buffer(program, len(program))
    prog = SockFprog(len(program) // 8, ctypes.cast(buf, ctypes.c_void_p))
    if libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
        raise Fail(f"prctl(PR_SET_NO_NEW_PRIVS) failed: {os.strerror(ctypes.get_errno())}")
    if libc.prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, ctypes.byref(prog), 0, 0) != 0:
        raise Fail(f"installing the seccomp filter failed: {os.strerror(ctypes.get_errno())}")


def main(args):
    try:
        opts, argv = parse_args(args)
        if opts["listen"] is not None:
            _libc()
            start_relay(opts["listen"], opts["unix"])
        if opts["seccomp_fd"] is not None:
            apply_seccomp(opts["seccomp_fd"])
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
