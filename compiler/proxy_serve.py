"""Serving one proxy connection: judge every request on it, then relay (asyncio).

Imported by the proxy thread only once a first client arrives (asyncio costs
~20 ms to import; see ``compiler/proxy.py``).

* ``CONNECT host:port``: the target is judged, then so is what the client
  sends through the tunnel. A TLS ClientHello whose ``server_name`` is not the
  vetted host, or a plain-text HTTP request whose ``Host`` (or absolute URL)
  names another host, is domain fronting: the tunnel is closed (a 403 for
  HTTP) and the refusal recorded under the rule ``domain-fronting``. Every
  plain-text request in the tunnel is parsed and judged, pipelined or not.
  Other protocols (SSH, a database) are relayed as they are.
* Absolute-form plain HTTP: ONE request per client connection. It goes
  upstream with ``Connection: close``, its ``Host`` rewritten to the vetted
  authority and exactly its framed body; bytes after it are never forwarded.
"""

from __future__ import annotations

import asyncio

from ringfence.profiles.domains import decide, exact_allow

from .proxy_wire import (FRONTING_RULE, Refused, body_framing, chunk_size, client_hello_sni,
                         host_header, looks_like_http, parse_head, rewrite_plain, same_host,
                         split_authority, tls_record_needed)

MAX_HEAD = 16 * 1024          # request line + headers
MAX_CLIENTS = 256
MAX_HELLO = 70 * 1024


class _Stream:
    """A StreamReader with bytes already taken from it put back in front."""

    def __init__(self, reader: asyncio.StreamReader, handler: "Handler", activity: list,
                 data: bytes = b"") -> None:
        self.reader, self.handler, self.activity = reader, handler, activity
        self.buf = bytearray(data)

    async def fill(self) -> bool:
        data = await self.handler.read(self.reader, self.activity)
        self.buf += data
        return bool(data)

    async def until(self, sep: bytes, limit: int) -> bytes | None:
        """Bytes up to and including ``sep``; None at EOF before any byte."""
        while (at := self.buf.find(sep)) < 0:
            if len(self.buf) > limit:
                raise Refused(431, f"request head larger than {limit} bytes")
            if not await self.fill():
                if self.buf:
                    raise Refused(400, "connection closed inside a request")
                return None
        out = bytes(self.buf[:at + len(sep)])
        del self.buf[:at + len(sep)]
        return out

    async def exactly(self, n: int) -> bytes:
        while len(self.buf) < n:
            if not await self.fill():
                raise Refused(400, "connection closed inside a request body")
        out = bytes(self.buf[:n])
        del self.buf[:n]
        return out


class Handler:
    """Per-connection logic for a ``ProxyServer`` (its policy, timeouts and record)."""

    def __init__(self, server) -> None:
        self.s = server

    async def client(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        tasks = self.s._tasks
        task = asyncio.current_task()
        if task is not None:
            tasks.add(task)
        try:
            if len(tasks) > MAX_CLIENTS:
                raise Refused(503, "too many concurrent proxy connections")
            await self.serve(reader, writer)
        except Refused as r:
            if not r.quiet:
                await reply(writer, r.status, r.reason, r.rule)
        except (ConnectionError, asyncio.IncompleteReadError, asyncio.CancelledError):
            pass
        finally:
            writer.close()
            if task is not None:
                tasks.discard(task)

    async def adopt(self, conn) -> None:
        try:
            reader, writer = await asyncio.open_connection(sock=conn, limit=MAX_HEAD)
        except OSError:
            conn.close()
            return
        await self.client(reader, writer)

    async def serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), self.s.head_timeout)
        except asyncio.TimeoutError:
            raise Refused(408, "request head not received in time") from None
        except asyncio.LimitOverrunError:
            raise Refused(431, f"request head larger than {MAX_HEAD} bytes") from None
        except asyncio.IncompleteReadError as exc:
            if not exc.partial:
                return
            raise Refused(400, "connection closed inside the request head") from None
        method, target, headers = parse_head(head)
        loop = asyncio.get_running_loop()
        activity = [loop.time()]
        if method == "CONNECT":
            host, port = split_authority(target, None)
            upstream_r, upstream_w = await self.open(host, port)
            writer.write(b"HTTP/1.1 200 Connection established\r\n\r\n")
            back = asyncio.ensure_future(self.pipe(upstream_r, writer, activity, eof=False))
            fwd = asyncio.ensure_future(
                self.tunnel(reader, writer, upstream_w, host, port, activity))
            try:
                await asyncio.wait({fwd, back}, return_when=asyncio.FIRST_COMPLETED)
                if not fwd.done():
                    _eof(writer)            # upstream is done: pass its EOF on at once
                try:
                    await fwd
                except Refused as r:
                    if r.drain and not back.done():
                        # Requests already judged and forwarded still get their
                        # answers; the refusal follows them.
                        _eof(upstream_w)
                        await asyncio.wait({back}, timeout=self.s.head_timeout)
                    raise
                await back
                _eof(writer)
            finally:
                for task in (fwd, back):
                    task.cancel()
                await asyncio.gather(fwd, back, return_exceptions=True)
                upstream_w.close()
            return
        if not target.lower().startswith("http://"):
            if target.lower().startswith("https://"):
                raise Refused(400, "use CONNECT for https:// URLs")
            raise Refused(400, "not a proxy request: expected CONNECT or an absolute "
                               "http:// URL")
        authority, _, path = target[7:].partition("/")
        host, port = split_authority(authority, 80)
        framing = body_framing(headers)
        upstream_r, upstream_w = await self.open(host, port)
        try:
            upstream_w.write(rewrite_plain(method, "/" + path, headers, authority))
            body = asyncio.ensure_future(
                self.body(_Stream(reader, self, activity), upstream_w, framing))
            try:
                await self.pipe(upstream_r, writer, activity)
            finally:
                body.cancel()
                await asyncio.gather(body, return_exceptions=True)
        finally:
            upstream_w.close()

    async def open(self, host: str, port: int):
        s = self.s
        allowed, rule, reason = decide(host, port, s.allow, s.deny)
        if not allowed:
            # Refused before any DNS lookup: a denied name is never resolved.
            s._record(host, port, False, rule, reason)
            raise Refused(403, reason, rule)
        loop = asyncio.get_running_loop()
        try:
            addrs = await asyncio.wait_for(
                loop.run_in_executor(None, s.resolver, host, port), s.connect_timeout)
        except (OSError, asyncio.TimeoutError) as exc:
            why = f"{host} did not resolve: {exc or 'timeout'}"
            s._record(host, port, False, rule, why)
            raise Refused(502, why, rule) from None
        from .proxy_wire import address_is_public

        explicit = exact_allow(host, port, s.allow)
        usable = [a for a in addrs if explicit is not None or address_is_public(a)]
        if not usable:
            why = (f"{host} resolves only to non-public addresses ({', '.join(addrs) or 'none'}); "
                   f"only an exact allow entry such as '{host}:{port}' may open them")
            s._record(host, port, False, rule, why)
            raise Refused(403, why, rule)
        last: BaseException | None = None
        for addr in usable:
            try:
                # asyncio sets TCP_NODELAY on every TCP transport it makes.
                r, w = await asyncio.wait_for(asyncio.open_connection(addr, port),
                                              s.connect_timeout)
            except (OSError, asyncio.TimeoutError) as exc:
                last = exc
                continue
            via = explicit.text if explicit is not None else rule
            s._record(host, port, True, via, f"{reason}; connected to {addr}")
            return r, w
        why = f"could not connect to {host}:{port}: {last}"
        s._record(host, port, False, rule, why)
        raise Refused(502, why, rule)

    def front(self, name: str, host: str, port: int, what: str) -> Refused:
        why = (f"{what} names {name!r}, not the vetted target {host}:{port} "
               "(domain fronting)")
        self.s._record(host, port, False, FRONTING_RULE, why)
        return Refused(403, why, FRONTING_RULE)

    async def tunnel(self, reader, writer, upstream_w, host: str, port: int,
                     activity: list) -> None:
        """Client to upstream through a CONNECT tunnel, judging what it carries.

        A refusal raised after plain-text requests were forwarded has ``drain`` set."""
        stream = _Stream(reader, self, activity)
        kind = None
        while kind is None:
            if not await stream.fill():
                if stream.buf:
                    upstream_w.write(bytes(stream.buf))
                return _eof(upstream_w)
            data = bytes(stream.buf)
            if data[0] == 0x16:
                need = tls_record_needed(data)
                if need:
                    sni = client_hello_sni(data[:need])
                    if sni is not None and not same_host(sni, None, host, port):
                        refused = self.front(sni, host, port, "the TLS ClientHello (SNI)")
                        refused.quiet = True      # the client speaks TLS: just close
                        raise refused
                    kind = "opaque"
                elif len(data) > MAX_HELLO:
                    raise Refused(400, "TLS ClientHello too large")
            else:
                http = looks_like_http(data)
                if http is not None:
                    kind = "http" if http else "opaque"
        if kind == "opaque":
            upstream_w.write(bytes(stream.buf))
            stream.buf.clear()
            return await self.pipe(reader, upstream_w, activity)
        sent = False
        while True:
            try:
                more = await self.judged_request(stream, upstream_w, host, port)
            except Refused as r:
                r.drain = sent
                raise
            if not more:
                return _eof(upstream_w)
            sent = True

    async def judged_request(self, stream: _Stream, upstream_w, host: str, port: int) -> bool:
        """Judge and forward one plain-text request from a tunnel; False at EOF."""
        head = await stream.until(b"\r\n\r\n", MAX_HEAD)
        if head is None:
            return False
        method, target, headers = parse_head(head.lstrip(b"\r\n"))
        names = [("the Host header", host_header(headers))]
        if "://" in target:
            names.append(("the request URL", target.partition("://")[2].partition("/")[0]))
        for what, name in names:
            try:
                n_host, n_port = split_authority(name, 0)
            except Refused:
                raise self.front(name, host, port, what) from None
            if not same_host(n_host, n_port or None, host, port):
                raise self.front(name, host, port, what)
        if method == "CONNECT" or any(n.lower() == "upgrade" for n, _ in headers):
            why = "a protocol switch inside a plain-text tunnel cannot be judged"
            self.s._record(host, port, False, FRONTING_RULE, why)
            raise Refused(403, why, FRONTING_RULE)
        framing = body_framing(headers)
        upstream_w.write(head)
        await self.body(stream, upstream_w, framing)
        return True

    async def body(self, stream: _Stream, dst, framing: int | str) -> None:
        """Forward exactly one request body (``framing`` from ``body_framing``)."""
        if framing == "chunked":
            while True:
                line = await stream.until(b"\r\n", 1024)
                if line is None:
                    raise Refused(400, "connection closed inside a chunked body")
                size = chunk_size(line[:-2])
                dst.write(line)
                if size == 0:
                    while (trailer := await stream.until(b"\r\n", MAX_HEAD)) not in (b"\r\n", None):
                        dst.write(trailer)
                    dst.write(b"\r\n")
                    break
                data = await stream.exactly(size + 2)
                if not data.endswith(b"\r\n"):
                    raise Refused(400, "malformed chunk")
                dst.write(data)
                await dst.drain()
            return
        left = framing
        while left:
            if not stream.buf and not await stream.fill():
                raise Refused(400, "connection closed inside a request body")
            part = bytes(stream.buf[:left])
            del stream.buf[:len(part)]
            left -= len(part)
            dst.write(part)
            await dst.drain()

    async def read(self, src: asyncio.StreamReader, activity: list) -> bytes:
        """Up to 64 KiB; b"" at EOF or when neither side sent anything for idle_timeout.

        The idle clock is shared by both directions, so a long download with a
        silent client is not cut off."""
        loop = asyncio.get_running_loop()
        while True:
            try:
                data = await asyncio.wait_for(src.read(65536), self.s.idle_timeout)
            except asyncio.TimeoutError:
                if loop.time() - activity[0] < self.s.idle_timeout:
                    continue
                return b""
            if data:
                activity[0] = loop.time()
            return data

    async def pipe(self, src: asyncio.StreamReader, dst: asyncio.StreamWriter,
                   activity: list, eof: bool = True) -> None:
        """Copy one direction until EOF or idle, then pass the EOF on (if ``eof``)."""
        try:
            while data := await self.read(src, activity):
                dst.write(data)
                await dst.drain()
        except (ConnectionError, OSError):
            pass
        if eof:            # never when cancelled: a refusal may still answer the client
            _eof(dst)


def _eof(dst) -> None:
    if dst.can_write_eof():
        try:
            dst.write_eof()
        except OSError:
            pass


_STATUS = {400: "Bad Request", 403: "Forbidden", 408: "Request Timeout", 431:
           "Request Header Fields Too Large", 502: "Bad Gateway", 503: "Service Unavailable"}


async def reply(writer: asyncio.StreamWriter, status: int, reason: str, rule: str | None) -> None:
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
    except (ConnectionError, OSError, RuntimeError):     # RuntimeError: already at EOF
        pass
