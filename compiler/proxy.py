"""The domain-filtering HTTP proxy (SPEC §4 "Network").

It runs inside the ringfence process, in a background thread with its own
asyncio loop (``run`` pays no extra process start), and listens on a Unix
socket in a private 0700 runtime directory. The socket is bound and listening
before ``start()`` returns; the asyncio loop (importing asyncio is ~20 ms of
start-up) is only started when the first client connects (the relay's start-up
probe, connect-and-close, does not count), so a sandboxed command that never
uses the network never pays for it. Until then connections
wait in the kernel's backlog, and every one is filtered by the same code. Inside the sandbox's network
namespace the relay (``compiler/relay.py``) forwards 127.0.0.1:PORT to it.

Supported: ``CONNECT host:port`` tunnels and absolute-form plain HTTP
(``GET http://host/path HTTP/1.1``), forwarded with ``Connection: close``.

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
* Plain HTTP: the ``Host`` header is rewritten to the vetted authority, so a
  request for an allowed host cannot be routed by the origin to another one.
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

from ringfence.profiles.domains import DomainPattern, decide, exact_allow, parse_pattern
from ringfence.rfcore.errors import SandboxError

if TYPE_CHECKING:
    import asyncio

MAX_HEAD = 16 * 1024          # request line + headers
MAX_HEADERS = 100
HEAD_TIMEOUT = 10.0           # slowloris: the whole head must arrive within this
CONNECT_TIMEOUT = 10.0
IDLE_TIMEOUT = 300.0          # a tunnel with no traffic either way for this long is closed
MAX_CLIENTS = 256
_HOP_BY_HOP = {"connection", "proxy-connection", "keep-alive", "proxy-authorization",
               "proxy-authenticate", "te", "trailer", "upgrade"}

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


class _Refused(Exception):
    def __init__(self, status: int, reason: str, rule: str | None = None) -> None:
        super().__init__(reason)
        self.status, self.reason, self.rule = status, reason, rule


def default_resolver(host: str, port: int) -> list[str]:
    infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    return list(dict.fromkeys(info[4][0] for info in infos))


def address_is_public(addr: str) -> bool:
    """True only for global unicast addresses (see module docstring)."""
    ip = ipaddress.ip_address(addr.split("%", 1)[0])
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    return ip.is_global and not ip.is_multicast


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
                 socket_path: str, *, resolver: Resolver | None = None,
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
        self.failure: str | None = None   # why the proxy loop could not start (fail closed)

    # --- lifecycle -------------------------------------------------------------
    @property
    def decisions(self) -> list[Decision]:
        with self._lock:
            return list(self._decisions)

    def start(self) -> "ProxyServer":
        parent = os.path.dirname(os.path.abspath(self.socket_path))
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
            raise SandboxError(f"cannot start the network proxy on {self.socket_path}: "
                               f"{exc}") from None
        try:
            sock.bind(self.socket_path)
            os.chmod(self.socket_path, 0o600)
            sock.listen(128)
        except OSError as exc:
            sock.close()
            raise SandboxError(f"cannot start the network proxy on {self.socket_path}: "
                               f"{exc}") from None
        self._sock = sock
        self._wake_r, self._wake_w = os.pipe()
        self._ready = threading.Event()
        self._thread = threading.Thread(target=self._main, name="ringfence-proxy", daemon=True)
        self._thread.start()
        return self

    def _main(self) -> None:
        """The proxy thread: wait for a first real client (or stop), then serve with asyncio."""
        sock, first = self._sock, None
        try:
            first = self._first_client(sock)
            if first is None:                  # stop() before any client: nothing to serve
                return
            global asyncio
            import asyncio                     # noqa: F811 - see the module docstring

            loop = asyncio.new_event_loop()
            self._server = loop.run_until_complete(asyncio.start_unix_server(
                self._client, sock=sock, limit=MAX_HEAD))
            self._tasks.add(loop.create_task(self._adopt(first)))
        except BaseException as exc:           # noqa: BLE001 - reported by stop()
            # Fail closed: close the socket so waiting clients get an error at once
            # (no network) instead of hanging; stop() reports the failure.
            self.failure = f"{type(exc).__name__}: {exc}"
            if first is not None:
                first.close()
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
        """The first connection that is more than the relay's start-up probe, or None on stop.

        The relay connects once and closes at once to check that we are there
        (``compiler/relay.py``): such a connection, at EOF before sending a byte, is
        closed here without starting asyncio. A connection that sends data, or a
        second one while the first is still silent, starts the loop; the accepted
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

    async def _adopt(self, conn: socket.socket) -> None:
        try:
            reader, writer = await asyncio.open_unix_connection(sock=conn, limit=MAX_HEAD)
        except OSError:
            conn.close()
            return
        await self._client(reader, writer)

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
        self._sock.close()
        for fd in (self._wake_r, self._wake_w):
            os.close(fd)
        try:
            os.unlink(self.socket_path)
        except FileNotFoundError:
            pass

    def __enter__(self) -> "ProxyServer":
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # --- per connection ----------------------------------------------------------
    def _record(self, host: str, port: int, allowed: bool, rule: str | None, reason: str) -> None:
        with self._lock:
            self._decisions.append(Decision(time.time(), host, port, allowed, rule, reason))

    async def _client(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        if task is not None:
            self._tasks.add(task)
        try:
            if len(self._tasks) > MAX_CLIENTS:
                raise _Refused(503, "too many concurrent proxy connections")
            await self._serve(reader, writer)
        except _Refused as r:
            await _reply(writer, r.status, r.reason, r.rule)
        except (ConnectionError, asyncio.IncompleteReadError, asyncio.CancelledError):
            pass
        finally:
            writer.close()
            if task is not None:
                self._tasks.discard(task)

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), self.head_timeout)
        except asyncio.TimeoutError:
            raise _Refused(408, "request head not received in time") from None
        except asyncio.LimitOverrunError:
            raise _Refused(431, f"request head larger than {MAX_HEAD} bytes") from None
        except asyncio.IncompleteReadError as exc:
            if not exc.partial:
                return
            raise _Refused(400, "connection closed inside the request head") from None
        method, target, headers = _parse_head(head)
        if method == "CONNECT":
            host, port = _split_authority(target, None)
            rest = b""
        else:
            if not target.lower().startswith("http://"):
                if target.lower().startswith("https://"):
                    raise _Refused(400, "use CONNECT for https:// URLs")
                raise _Refused(400, "not a proxy request: expected CONNECT or an absolute "
                                    "http:// URL")
            authority, _, path = target[7:].partition("/")
            host, port = _split_authority(authority, 80)
            rest = _rewrite_plain(method, "/" + path, headers, authority)
        upstream_r, upstream_w = await self._open(host, port)
        try:
            if method == "CONNECT":
                writer.write(b"HTTP/1.1 200 Connection established\r\n\r\n")
            else:
                upstream_w.write(rest)
            activity = [asyncio.get_running_loop().time()]
            await asyncio.gather(self._pipe(reader, upstream_w, activity),
                                 self._pipe(upstream_r, writer, activity))
        finally:
            upstream_w.close()

    async def _open(self, host: str, port: int) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
        allowed, rule, reason = decide(host, port, self.allow, self.deny)
        if not allowed:
            # Refused before any DNS lookup: a denied name is never resolved.
            self._record(host, port, False, rule, reason)
            raise _Refused(403, reason, rule)
        loop = asyncio.get_running_loop()
        try:
            addrs = await asyncio.wait_for(
                loop.run_in_executor(None, self.resolver, host, port), self.connect_timeout)
        except (OSError, asyncio.TimeoutError) as exc:
            why = f"{host} did not resolve: {exc or 'timeout'}"
            self._record(host, port, False, rule, why)
            raise _Refused(502, why, rule) from None
        explicit = exact_allow(host, port, self.allow)
        usable = [a for a in addrs if explicit is not None or address_is_public(a)]
        if not usable:
            why = (f"{host} resolves only to non-public addresses ({', '.join(addrs) or 'none'}); "
                   f"only an exact allow entry such as '{host}:{port}' may open them")
            self._record(host, port, False, rule, why)
            raise _Refused(403, why, rule)
        last: BaseException | None = None
        for addr in usable:
            try:
                r, w = await asyncio.wait_for(asyncio.open_connection(addr, port),
                                              self.connect_timeout)
            except (OSError, asyncio.TimeoutError) as exc:
                last = exc
                continue
            via = explicit.text if explicit is not None else rule
            self._record(host, port, True, via, f"{reason}; connected to {addr}")
            return r, w
        why = f"could not connect to {host}:{port}: {last}"
        self._record(host, port, False, rule, why)
        raise _Refused(502, why, rule)

    async def _pipe(self, src: asyncio.StreamReader, dst: asyncio.StreamWriter,
                    activity: list[float]) -> None:
        """Copy one direction. The idle clock is shared by both directions, so a
        long download with a silent client is not cut off, but a tunnel where
        neither side sends anything for ``idle_timeout`` is closed."""
        loop = asyncio.get_running_loop()
        try:
            while True:
                try:
                    data = await asyncio.wait_for(src.read(65536), self.idle_timeout)
                except asyncio.TimeoutError:
                    if loop.time() - activity[0] < self.idle_timeout:
                        continue
                    break
                if not data:
                    break
                activity[0] = loop.time()
                dst.write(data)
                await dst.drain()
        except (ConnectionError, OSError):
            pass
        finally:
            if dst.can_write_eof():
                try:
                    dst.write_eof()
                except OSError:
                    pass


def _parse_head(head: bytes) -> tuple[str, str, list[tuple[str, str]]]:
    text = head.decode("latin-1")     # total: every byte maps to one character
    lines = text.split("\r\n")[:-2]
    if any("\r" in line or "\n" in line or "\0" in line for line in lines):
        # A bare CR/LF would let a client smuggle header lines past us.
        raise _Refused(400, "bare CR, LF or NUL in the request head")
    if not lines:
        raise _Refused(400, "empty request")
    parts = lines[0].split(" ")
    if len(parts) != 3 or not parts[2].startswith("HTTP/1."):
        raise _Refused(400, "malformed request line")
    method, target = parts[0], parts[1]
    if not method.isalpha() or not method.isupper():
        raise _Refused(400, "malformed request method")
    headers = []
    for line in lines[1:]:
        name, sep, value = line.partition(":")
        if not sep or not name or name != name.strip() or any(c in name for c in " \t\r\n"):
            raise _Refused(400, "malformed header line")
        headers.append((name, value.strip()))
    if len(headers) > MAX_HEADERS:
        raise _Refused(431, f"more than {MAX_HEADERS} header lines")
    return method, target, headers


def _split_authority(authority: str, default_port: int | None) -> tuple[str, int]:
    if "@" in authority:
        raise _Refused(400, "credentials in the proxy target are not supported")
    if authority.startswith("["):
        host, _, rest = authority[1:].partition("]")
        port_text = rest[1:] if rest.startswith(":") else ("" if not rest else "x")
    else:
        host, _, port_text = authority.rpartition(":") if ":" in authority else (authority, "", "")
    if not port_text:
        if default_port is None:
            raise _Refused(400, "CONNECT target needs host:port")
        return host, default_port
    if not port_text.isdigit() or not 1 <= int(port_text) <= 65535:
        raise _Refused(400, f"invalid port in {authority!r}")
    return host, int(port_text)


def _rewrite_plain(method: str, path: str, headers: list[tuple[str, str]], authority: str) -> bytes:
    out = [f"{method} {path} HTTP/1.1", f"Host: {authority}"]
    for name, value in headers:
        if name.lower() in _HOP_BY_HOP or name.lower() == "host":
            continue
        out.append(f"{name}: {value}")
    out.append("Connection: close")
    return ("\r\n".join(out) + "\r\n\r\n").encode("latin-1")


_STATUS = {400: "Bad Request", 403: "Forbidden", 408: "Request Timeout", 431:
           "Request Header Fields Too Large", 502: "Bad Gateway", 503: "Service Unavailable"}


async def _reply(writer: asyncio.StreamWriter, status: int, reason: str, rule: str | None) -> None:
    if status == 403:
        body = (f"ringfence: network access refused by the sandbox policy.\n"
                f"rule: {rule or 'default deny (not in the allowlist)'}\n"
                f"reason: {reason}\n"
                f"This is a policy decision; retrying will not help. Ask the user to "
                f"allow it in the profile's network.allow list or to run it on the host.\n")
    else:
        body = f"ringfence proxy: {reason}\n"
    data = body.encode()
    head = (f"HTTP/1.1 {status} {_STATUS.get(status, 'Error')}\r\n"
            f"Content-Type: text/plain; charset=utf-8\r\nContent-Length: {len(data)}\r\n"
            f"X-Ringfence-Rule: {rule or 'default-deny'}\r\nConnection: close\r\n\r\n")
    try:
        writer.write(head.encode("latin-1", "replace") + data)
        await writer.drain()
    except (ConnectionError, OSError):
        pass
