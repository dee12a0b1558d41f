"""The domain-filtering HTTP proxy (SPEC §4 "Network"): lifecycle and policy.

It runs inside the ringfence process, in a background thread with its own
asyncio loop (``run`` pays no extra process start). Two ways in:

* ``ProxyServer(allow, deny)`` (what ``ringfence run`` uses): ``start()``
  makes a socket pair; ``handoff_fd`` is the end the sandbox inherits. The
  in-sandbox launcher (``compiler/relay.py``) listens on 127.0.0.1:PORT in the
  sandbox's network namespace and sends that listening socket over the pair;
  the proxy thread acknowledges it and accepts the command's connections on
  it directly. Nothing inside the sandbox holds a Unix socket or copies bytes.
* ``ProxyServer(allow, deny, socket_path)``: a Unix socket in a private 0700
  directory, bound and listening before ``start()`` returns (tests, bench).

The asyncio loop (importing asyncio is ~20 ms of start-up) is only started
when the first client sends something, so a sandboxed command that never uses
the network never pays for it. Until then connections wait in the kernel's
backlog, and every one is filtered by the same code (``proxy_serve.py``).

Security properties (each is tested):

* Decisions follow ``ringfence.profiles.domains.decide``; deny beats allow.
* A name that is not allowed is NEVER resolved: the decision happens on the
  name before any DNS, so DNS cannot carry data out.
* An allowed name is resolved once, here, and we connect to a vetted address
  (never re-resolve: that would reopen DNS rebinding). Addresses that are not
  global unicast (loopback, link-local and the cloud metadata endpoints
  169.254.169.254 / fd00:ec2::254, RFC 1918/ULA private, CGNAT, unspecified,
  multicast, reserved, IPv4-mapped forms of these) are refused unless the host
  is allowed EXPLICITLY: by an exact, non-wildcard allow entry that covers this
  host and port (``localhost:8080``, ``10.0.0.5:443``). A ``**.corp.com``
  wildcard never opens private addresses.
* Every request on every connection is judged: plain HTTP is one request per
  connection with its ``Host`` rewritten to the vetted authority; inside a
  ``CONNECT`` tunnel, a TLS SNI or an HTTP ``Host`` naming another host is
  refused as domain fronting (``proxy_serve.py``).
* Refusals are ``403`` with a body naming the rule and saying that retrying
  will not help. Every decision is recorded as a :class:`Decision`.
* Bounded: request head size, header count and header-read time; idle
  tunnels time out; concurrent connections are capped.
"""

from __future__ import annotations

import ipaddress
import os
import select
import socket
import stat
import threading
import time
from ringfence.rfcore.records import record
from typing import TYPE_CHECKING, Callable, Iterable, Sequence

from ringfence.profiles.domains import DomainPattern, parse_pattern
from ringfence.rfcore.errors import SandboxError

from .proxy_wire import address_is_public  # noqa: F401 - public here; proxy_serve needs it too

if TYPE_CHECKING:
    import asyncio

MAX_HEAD = 16 * 1024          # request line + headers
HEAD_TIMEOUT = 10.0           # slowloris: the whole head must arrive within this
CONNECT_TIMEOUT = 10.0
IDLE_TIMEOUT = 300.0          # a tunnel with no traffic either way for this long is closed

Resolver = Callable[[str, int], Sequence[str]]


@record
class Decision:
    """One allow/deny decision, as the ledger stores it."""

    time: float
    host: str
    port: int
    allowed: bool
    rule: str | None
    reason: str


def default_resolver(host: str, port: int) -> list[str]:
    infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    return list(dict.fromkeys(info[4][0] for info in infos))


_NAME_CHARS = "abcdefghijklmnopqrstuvwxyz234567"


def make_runtime_dir(prefix: str = "ringfence-") -> str:
    """A fresh private directory (0700) for the proxy socket.

    In $XDG_RUNTIME_DIR if usable, else in tempfile's temporary directory.
    Created like ``tempfile.mkdtemp`` (exclusive ``mkdir`` with mode 0700 of an
    unguessable name, retried on a collision) without importing tempfile,
    which pulls ``random`` (~3 ms of every networked run).
    """
    base = os.environ.get("XDG_RUNTIME_DIR")
    if not base or not os.path.isdir(base) or not os.access(base, os.W_OK):
        base = _temp_base()
    for _ in range(100):
        # 8 characters, like tempfile's names: the socket path must stay short
        # (AF_UNIX paths are limited to 108 bytes). 32 symbols: byte % 32 is uniform.
        name = "".join(_NAME_CHARS[b % 32] for b in os.urandom(8))
        path = os.path.join(base, prefix + name)
        try:
            os.mkdir(path, 0o700)
        except FileExistsError:
            continue
        return os.path.abspath(path)
    raise FileExistsError(f"no free runtime directory name under {base}")


def _temp_base() -> str:
    # tempfile.gettempdir()'s candidates, in its order. The expensive import is
    # only paid when none of them is a writable directory (it then decides).
    for name in ("TMPDIR", "TEMP", "TMP"):
        d = os.environ.get(name)
        if d and os.path.isdir(d) and os.access(d, os.W_OK | os.X_OK):
            return d
    for d in ("/tmp", "/var/tmp", "/usr/tmp"):
        if os.path.isdir(d) and os.access(d, os.W_OK | os.X_OK):
            return d
    import tempfile

    return tempfile.gettempdir()


class ProxyServer:
    """``ProxyServer(allow, deny, socket_path)``; ``start()``, ``stop()``, ``decisions``."""

    def __init__(self, allow: Iterable[str | DomainPattern], deny: Iterable[str | DomainPattern],
                 socket_path: str | None = None, *, resolver: Resolver | None = None,
                 head_timeout: float = HEAD_TIMEOUT, idle_timeout: float = IDLE_TIMEOUT,
                 connect_timeout: float = CONNECT_TIMEOUT) -> None:
        try:
            self.allow = tuple(p if isinstance(p, DomainPattern) else parse_pattern(p) for p in allow)
            self.deny = tuple(p if isinstance(p, DomainPattern) else parse_pattern(p) for p in deny)
        except ValueError as exc:
            raise SandboxError(f"network pattern rejected: {exc}") from None
        self.socket_path = socket_path
        self.resolver = resolver or default_resolver
        self.head_timeout, self.idle_timeout = head_timeout, idle_timeout
        self.connect_timeout = connect_timeout
        self._decisions: list[Decision] = []
        self._lock = threading.Lock()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._server: asyncio.AbstractServer | None = None
        self._tasks: set[asyncio.Task] = set()
        self._sock: socket.socket | None = None
        self._chan: socket.socket | None = None     # hand-off channel (host end)
        self.handoff_fd: int | None = None          # the sandbox's end; the caller closes it
        self.failure: str | None = None   # why the proxy loop could not start (fail closed)

    # --- lifecycle -------------------------------------------------------------
    @property
    def decisions(self) -> list[Decision]:
        with self._lock:
            return list(self._decisions)

    def start(self) -> "ProxyServer":
        if self.socket_path is None:
            self._chan, inner = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
            inner.set_inheritable(True)
            self.handoff_fd = inner.detach()
        else:
            self._sock = self._bind_unix(self.socket_path)
        self._wake_r, self._wake_w = os.pipe()
        self._ready = threading.Event()
        self._thread = threading.Thread(target=self._main, name="ringfence-proxy", daemon=True)
        self._thread.start()
        return self

    @staticmethod
    def _bind_unix(path: str) -> socket.socket:
        parent = os.path.dirname(os.path.abspath(path))
        try:
            st = os.stat(parent)
        except OSError as exc:
            raise SandboxError(f"proxy runtime dir {parent}: {exc.strerror}") from None
        # Anyone who can reach the socket gets our network policy: the directory
        # must be ours and closed to everyone else.
        if st.st_uid != os.getuid() or stat.S_IMODE(st.st_mode) & 0o077:
            raise SandboxError(f"proxy runtime dir {parent} must be owned by uid {os.getuid()} "
                               f"with mode 0700 (is {stat.S_IMODE(st.st_mode):o})",
                               hint="use compiler.proxy.make_runtime_dir()")
        try:
            sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        except OSError as exc:
            raise SandboxError(f"cannot start the network proxy on {path}: {exc}") from None
        try:
            sock.bind(path)
            os.chmod(path, 0o600)
            sock.listen(128)
        except OSError as exc:
            sock.close()
            raise SandboxError(f"cannot start the network proxy on {path}: {exc}") from None
        return sock

    def _take_listener(self) -> socket.socket | None:
        """The sandbox's listening socket, sent over the hand-off channel; None on stop.

        One message, one descriptor, and it must be a listening TCP socket;
        anything else closes the channel (the launcher then fails closed).
        """
        chan = self._chan
        try:
            readable, _, _ = select.select([chan, self._wake_r], [], [])
            if self._wake_r in readable:
                return None
            msg, fds, _, _ = socket.recv_fds(chan, 16, 2)
            if msg == b"" and not fds:
                return None                    # the sandbox never started the launcher
            if len(fds) != 1:
                for fd in fds:
                    os.close(fd)
                raise OSError(f"expected one listening socket, got {len(fds)} descriptors")
            sock = socket.socket(fileno=fds[0])
            if (sock.family not in (socket.AF_INET, socket.AF_INET6)
                    or sock.type != socket.SOCK_STREAM
                    or not sock.getsockopt(socket.SOL_SOCKET, socket.SO_ACCEPTCONN)):
                sock.close()
                raise OSError("the hand-off descriptor is not a listening TCP socket")
            chan.sendall(b"k")
            return sock
        finally:
            chan.close()

    def _main(self) -> None:
        """The proxy thread: wait for a first real client (or stop), then serve with asyncio."""
        sock, first = self._sock, None
        try:
            if sock is None:
                sock = self._sock = self._take_listener()
                if sock is None:
                    return
            first = self._first_client(sock)
            if first is None:                  # stop() before any client: nothing to serve
                return
            global asyncio
            import asyncio                     # noqa: F811 - see the module docstring

            from .proxy_serve import Handler

            handler = Handler(self)
            loop = asyncio.new_event_loop()
            self._server = loop.run_until_complete(asyncio.start_server(
                handler.client, sock=sock, limit=MAX_HEAD))
            self._tasks.add(loop.create_task(handler.adopt(first)))
        except BaseException as exc:           # noqa: BLE001 - reported by stop()
            # Fail closed: close the socket so waiting clients get an error at once
            # (no network) instead of hanging; stop() reports the failure.
            self.failure = f"{type(exc).__name__}: {exc}"
            if first is not None:
                first.close()
            if sock is not None:
                sock.close()
            return
        finally:
            if self._server is None:
                self._ready.set()
        self._loop = loop
        self._ready.set()
        try:
            loop.run_forever()
        finally:
            loop.close()

    def _first_client(self, sock: socket.socket) -> socket.socket | None:
        """The first connection that sends something (or a second one), or None on stop.

        A connection at EOF before sending a byte (a port probe) is closed here
        without starting asyncio. A connection that sends data, or a second
        one while the first is still silent, starts the loop; the accepted
        socket is handed to it and served (and timed out) like any other.
        """
        while True:
            readable, _, _ = select.select([sock, self._wake_r], [], [])
            if self._wake_r in readable:
                return None
            conn, _ = sock.accept()
            readable, _, _ = select.select([conn, sock, self._wake_r], [], [])
            if self._wake_r in readable:
                conn.close()
                return None
            if conn in readable:
                try:
                    probe = conn.recv(1, socket.MSG_PEEK) == b""
                except OSError:
                    probe = True
                if probe:
                    conn.close()
                    continue
            return conn

    def stop(self) -> None:
        thread = self._thread
        if thread is None:
            return
        os.write(self._wake_w, b"x")
        self._ready.wait()
        loop = self._loop

        async def shutdown() -> None:
            if self._server is not None:
                self._server.close()
            for task in list(self._tasks):
                task.cancel()
            await asyncio.gather(*self._tasks, return_exceptions=True)
            loop.stop()

        if loop is not None and thread.is_alive():
            asyncio.run_coroutine_threadsafe(shutdown(), loop)
        thread.join(timeout=10)
        self._loop = self._thread = None
        if self._sock is not None:
            self._sock.close()
        if self._chan is not None:
            self._chan.close()
        for fd in (self._wake_r, self._wake_w):
            os.close(fd)
        if self.socket_path is not None:
            try:
                os.unlink(self.socket_path)
            except FileNotFoundError:
                pass

    def __enter__(self) -> "ProxyServer":
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # --- per connection (compiler/proxy_serve.py) --------------------------------
    def _record(self, host: str, port: int, allowed: bool, rule: str | None, reason: str) -> None:
        with self._lock:
            self._decisions.append(Decision(time.time(), host, port, allowed, rule, reason))
