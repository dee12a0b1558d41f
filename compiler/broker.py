"""The per-run credential broker (issue 21): host side.

A profile's ``[[credentials]]`` names what a task may use (``name``, ``from`` =
``env:NAME`` | ``file:PATH`` | ``command:CMD``, ``domains``). When a run starts,
ringfence reads each source HERE, on the host (a command is run without a shell,
so ``gh auth token`` mints or fetches a token for this run), and keeps the value
in this process only. The sandbox gets:

* one end of a SOCK_SEQPACKET socket pair as an inherited descriptor (no path:
  nothing in the sandbox can open it again, and seccomp forbids new AF_UNIX
  sockets anyway);
* ``compiler/credhelper.py`` as git's credential helper, read-only, from a memfd.

Each request is answered only while the run lives (the thread stops and the
socket closes when the sandbox is gone), only over https and only for a host in
the credential's ``domains`` (exact names; ``host:port`` when a port is given).
Every request, given or refused, is a record in the run's ledger row
(``ledger show``). The value never appears in the sandbox's environment, argv or
files; after the run, ``compiler/leakscan.py`` looks for it (raw and re-encoded)
in what the run wrote, and a hit is held (RF653).
"""

from __future__ import annotations

import os
import socket
import threading
import time

from ringfence.rfcore.errors import SandboxError

HELPER_PATH = "/run/ringfence/git-credential-ringfence"
MAX_REQUEST = 64 * 1024
MAX_USES = 256          # records kept per run; more requests are refused
_SOURCE_TIMEOUT = 30


def read_source(name: str, source: str, env, forbidden=()) -> str:
    """The value of one credential, read on the host; SandboxError (RF652) if none.

    ``forbidden``: the workspace and the writable roots (real paths). A sandbox
    writes there, so nothing of a source may come from there: a ``file:`` inside
    one is refused, and a ``command:`` runs from ``/`` with a PATH stripped of
    relative entries and of entries inside them (a planted ``./keyring.py`` or
    ``rftok`` is never found), with ``PYTHONSAFEPATH=1``, and is refused when its
    program or an argument naming an existing path lies inside one."""
    kind, _, arg = source.partition(":")
    arg = arg.strip()
    value = ""
    forbidden = tuple(os.path.realpath(r) for r in forbidden if r)
    try:
        if kind == "env":
            value = env.get(arg, "")
        elif kind == "file":
            given = os.path.expanduser(arg)
            path = os.path.realpath(given)
            # as written AND resolved: a link the sandbox planted in the workspace
            # must not choose which host file becomes the credential
            if not os.path.isabs(given) or _under(path, forbidden) or \
                    _under(os.path.normpath(given), forbidden):
                raise _refused(name, source, f"{arg} is not an absolute path outside the "
                                             "workspace and the writable roots (a sandbox "
                                             "could write it)")
            with open(path, encoding="utf-8") as fh:
                value = fh.read(MAX_REQUEST)
        elif kind == "command":
            import subprocess

            argv, run_env = _command(name, source, arg, env, forbidden)
            proc = subprocess.run(argv, capture_output=True, text=True, cwd="/",
                                  timeout=_SOURCE_TIMEOUT, env=run_env,
                                  stdin=subprocess.DEVNULL)
            if proc.returncode != 0:
                raise OSError(f"{arg!r} exited with {proc.returncode}: "
                              f"{proc.stderr.strip()[:200]}")
            value = proc.stdout
    except SandboxError:
        raise
    except (OSError, ValueError, UnicodeDecodeError) as exc:
        raise _unreadable(name, source, str(exc)) from None
    except Exception as exc:            # subprocess.TimeoutExpired and friends
        raise _unreadable(name, source, type(exc).__name__) from None
    value = value.strip()
    if not value or "\n" in value or "\0" in value:
        raise _unreadable(name, source, "empty, or more than one line")
    return value


def _under(path: str, roots) -> bool:
    return any(path == r or path.startswith(r.rstrip("/") + "/") for r in roots)


def _safe_path(value: str, forbidden) -> str:
    """PATH (or PYTHONPATH) without relative entries (the empty one is the current
    directory) and without any entry inside a forbidden root."""
    keep = []
    for entry in value.split(":"):
        if entry.startswith("/") and not _under(os.path.realpath(entry), forbidden):
            keep.append(entry)
    return ":".join(keep)


def _command(name: str, source: str, arg: str, env, forbidden):
    import shlex
    import shutil

    argv = shlex.split(arg)
    if not argv:
        raise ValueError("no command")
    run_env = dict(env)
    run_env["PATH"] = _safe_path(env.get("PATH", "/usr/bin:/bin"), forbidden)
    for var in ("PYTHONPATH", "PERL5LIB", "RUBYLIB", "NODE_PATH"):
        if var in run_env:
            run_env[var] = _safe_path(run_env[var], forbidden)
    run_env["PYTHONSAFEPATH"] = "1"     # python -m / -c: no current dir on sys.path
    prog = argv[0]
    if "/" in prog:
        if not prog.startswith("/"):
            raise _refused(name, source, f"{prog} is a relative program path")
        found = prog
    else:
        found = shutil.which(prog, path=run_env["PATH"])
        if found is None:
            raise OSError(f"{prog} is not on PATH (relative PATH entries and entries "
                          "inside the workspace or a writable root are not searched)")
    real = os.path.realpath(found)
    if _under(real, forbidden) or _under(os.path.dirname(os.path.abspath(found)), forbidden):
        raise _refused(name, source, f"its program {found} lies inside the workspace or "
                                     "a writable root (a sandbox could write it)")
    for a in argv[1:]:
        if a.startswith("/") and (_under(os.path.realpath(a), forbidden)
                                  or _under(os.path.normpath(a), forbidden)):
            raise _refused(name, source, f"its argument {a} lies inside the workspace or "
                                         "a writable root (a sandbox could write it)")
    return [found] + argv[1:], run_env


def _refused(name: str, source: str, why: str) -> SandboxError:
    return SandboxError(f"credential {name!r}: refusing to read it from {source}: {why}; "
                        "nothing was run (RF652)",
                        hint="name a program and files outside the workspace and the "
                             "sandbox's writable roots")


def _unreadable(name: str, source: str, why: str) -> SandboxError:
    return SandboxError(f"credential {name!r}: cannot read it from {source}: {why}; "
                        "nothing was run (RF652)",
                        hint="set the variable, create the file or fix the command the "
                             "profile's [[credentials]] entry names")


def _parse(data: bytes) -> dict[str, str]:
    out: dict[str, str] = {}
    for line in data.decode("utf-8", "replace").splitlines():
        if not line:
            break
        key, sep, value = line.partition("=")
        if sep and key and key not in out:
            out[key] = value
    return out


def _is_pipe(fd: int) -> bool:
    import stat

    try:
        return stat.S_ISFIFO(os.fstat(fd).st_mode)
    except OSError:
        return False


def _host_matches(host: str, domains) -> bool:
    host = host.lower().rstrip(".")
    return any(host == d.lower().rstrip(".") for d in domains)


class Broker:
    """Serves one run's credentials over ``sandbox_fd``; ``stop()`` after the run."""

    def __init__(self, entries, env, forbidden=()) -> None:
        # entries: ((name, source, domains, username), ...) from the spec's Broker op;
        # forbidden: the workspace and writable roots (nothing of a source from there)
        self._creds = [(name, read_source(name, source, env, forbidden), tuple(domains),
                        user)
                       for name, source, domains, user in entries]
        self.uses: list[dict] = []
        host_end, self._sandbox = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        self._host = host_end
        self._sandbox.set_inheritable(True)
        self._stop_r, self._stop_w = os.pipe()
        self._thread = threading.Thread(target=self._serve, name="rf-broker", daemon=True)
        self._thread.start()

    @property
    def sandbox_fd(self) -> int:
        return self._sandbox.fileno()

    def secrets(self) -> list[str]:
        return [value for _, value, _, _ in self._creds]

    def helper_source(self, python: str) -> bytes:
        path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "credhelper.py")
        with open(path, encoding="utf-8") as fh:
            text = fh.read()
        text = text.replace("\nFD = -1 ", f"\nFD = {self.sandbox_fd} ", 1)
        return f"#!{python} -IS\n{text}".encode()

    def close_sandbox_end(self) -> None:
        try:
            self._sandbox.close()
        except OSError:
            pass

    def stop(self) -> None:
        """The run is over: no more answers, ever (the socket is closed)."""
        os.write(self._stop_w, b"x")
        self._thread.join(timeout=5)
        for s in (self._host, self._sandbox):
            try:
                s.close()
            except OSError:
                pass
        for fd in (self._stop_r, self._stop_w):
            os.close(fd)

    def _serve(self) -> None:
        import select

        while True:
            ready, _, _ = select.select([self._host, self._stop_r], [], [])
            if self._stop_r in ready:
                return
            try:
                data, fds, _flags, _addr = socket.recv_fds(self._host, MAX_REQUEST, 1)
            except OSError:
                return
            if not data and not fds:
                return                      # every sandbox end is closed
            for extra in fds[1:]:
                os.close(extra)
            if fds and not _is_pipe(fds[0]):
                os.close(fds[0])            # the answer goes into a pipe, nothing else
                fds = []
            reply = self._answer(_parse(data)) if fds else b""
            if fds:
                try:
                    os.set_blocking(fds[0], False)
                    os.write(fds[0], reply)
                except OSError:
                    pass
                finally:
                    os.close(fds[0])

    def _answer(self, req: dict[str, str]) -> bytes:
        host, protocol = req.get("host", ""), req.get("protocol", "")
        use = {"kind": "credential", "host": host, "protocol": protocol, "at": time.time(),
               "credential": None, "given": False}
        if len(self.uses) >= MAX_USES:
            return b""
        self.uses.append(use)
        if protocol != "https":
            use["reason"] = "only https requests get a credential"
            return b""
        for name, value, domains, user in self._creds:
            if _host_matches(host, domains):
                use.update(credential=name, given=True, reason="host in its domains")
                user = req.get("username") or user or "x-access-token"
                return f"username={user}\npassword={value}\n\n".encode()
        use["reason"] = "no brokered credential for this host"
        return b""
