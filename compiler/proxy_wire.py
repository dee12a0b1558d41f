"""What the proxy reads on the wire: HTTP/1.x request heads and bodies, TLS SNI.

Pure parsing (no sockets, no asyncio at import), used by ``compiler/proxy.py``:

* ``parse_head``: the request line and headers, strictly (bare CR/LF/NUL refused).
* ``body_framing``: how many body bytes follow a head (Content-Length, chunked,
  none), refusing the ambiguous combinations request smuggling relies on.
* ``client_hello_sni``: the ``server_name`` of a TLS ClientHello (RFC 8446
  §4.1.2, RFC 6066 §3), so a tunnel's TLS names only the host that was vetted.
* ``same_host``: the comparison behind the domain-fronting rule.
"""

from __future__ import annotations

import re

MAX_HEADERS = 100
_HOP_BY_HOP = {"connection", "proxy-connection", "keep-alive", "proxy-authorization",
               "proxy-authenticate", "te", "trailer", "upgrade"}
FRONTING_RULE = "domain-fronting"
# "METHOD target HTTP/1.x" once leading blank lines are skipped (RFC 9112 §2.2
# lets a server ignore them): the first line of anything an HTTP server would
# read as a request that can name a host.
_REQUEST_LINE = re.compile(rb"[!-~]+ [!-~]+ HTTP/\d")


class Refused(Exception):
    def __init__(self, status: int, reason: str, rule: str | None = None) -> None:
        super().__init__(reason)
        self.status, self.reason, self.rule = status, reason, rule
        self.drain = False        # answers to requests already forwarded come first
        self.quiet = False        # inside TLS: no HTTP answer can be sent, only a close


def parse_head(head: bytes) -> tuple[str, str, list[tuple[str, str]]]:
    text = head.decode("latin-1")     # total: every byte maps to one character
    lines = text.split("\r\n")[:-2]
    if any("\r" in line or "\n" in line or "\0" in line for line in lines):
        # A bare CR/LF would let a client smuggle header lines past us.
        raise Refused(400, "bare CR, LF or NUL in the request head")
    if not lines:
        raise Refused(400, "empty request")
    parts = lines[0].split(" ")
    if len(parts) != 3 or not parts[2].startswith("HTTP/1."):
        raise Refused(400, "malformed request line")
    method, target = parts[0], parts[1]
    if not method.isalpha() or not method.isupper():
        raise Refused(400, "malformed request method")
    headers = []
    for line in lines[1:]:
        name, sep, value = line.partition(":")
        if not sep or not name or name != name.strip() or any(c in name for c in " \t\r\n"):
            raise Refused(400, "malformed header line")
        headers.append((name, value.strip()))
    if len(headers) > MAX_HEADERS:
        raise Refused(431, f"more than {MAX_HEADERS} header lines")
    return method, target, headers


def split_authority(authority: str, default_port: int | None) -> tuple[str, int]:
    if "@" in authority:
        raise Refused(400, "credentials in the proxy target are not supported")
    if authority.startswith("["):
        host, _, rest = authority[1:].partition("]")
        port_text = rest[1:] if rest.startswith(":") else ("" if not rest else "x")
    else:
        host, _, port_text = authority.rpartition(":") if ":" in authority else (authority, "", "")
    if not host:
        raise Refused(400, f"no host in {authority!r}")
    if not port_text:
        if default_port is None:
            raise Refused(400, "CONNECT target needs host:port")
        return host, default_port
    if not port_text.isdigit() or not 1 <= int(port_text) <= 65535:
        raise Refused(400, f"invalid port in {authority!r}")
    return host, int(port_text)


def rewrite_plain(method: str, path: str, headers: list[tuple[str, str]], authority: str) -> bytes:
    out = [f"{method} {path} HTTP/1.1", f"Host: {authority}"]
    for name, value in headers:
        if name.lower() in _HOP_BY_HOP or name.lower() == "host":
            continue
        out.append(f"{name}: {value}")
    out.append("Connection: close")
    return ("\r\n".join(out) + "\r\n\r\n").encode("latin-1")


def body_framing(headers: list[tuple[str, str]]) -> int | str:
    """Body length after this head: a byte count, or ``"chunked"``. Refused when ambiguous."""
    lengths = {v for n, v in headers if n.lower() == "content-length"}
    codings = [v.strip().lower() for n, v in headers if n.lower() == "transfer-encoding"]
    if codings:
        if lengths:
            raise Refused(400, "both Content-Length and Transfer-Encoding (request smuggling)")
        if codings != ["chunked"]:
            raise Refused(400, f"unsupported Transfer-Encoding {', '.join(codings)!r}")
        return "chunked"
    if len(lengths) > 1:
        raise Refused(400, "conflicting Content-Length headers")
    if lengths:
        value = lengths.pop()
        if not value.isdigit():
            raise Refused(400, f"invalid Content-Length {value!r}")
        return int(value)
    return 0


def chunk_size(line: bytes) -> int:
    """The size on a chunk-size line (extensions ignored); Refused when malformed."""
    text = line.split(b";", 1)[0].strip()
    if not text or len(text) > 16 or not all(c in b"0123456789abcdefABCDEF" for c in text):
        raise Refused(400, "malformed chunk size")
    return int(text, 16)


def normalize_host(host: str) -> str:
    host = host.strip().rstrip(".").lower()
    if host.startswith("[") and host.endswith("]"):
        host = host[1:-1]
    if not host.isascii():
        try:
            host = host.encode("idna").decode("ascii")
        except UnicodeError:
            pass
    return host


def same_host(name: str, port: int | None, host: str, vetted_port: int) -> bool:
    """Does ``name[:port]`` (a Host header or SNI) name the vetted ``host:vetted_port``?"""
    return normalize_host(name) == normalize_host(host) and (port is None or port == vetted_port)


def host_header(headers: list[tuple[str, str]]) -> str:
    """The one Host header's value; Refused when missing or repeated."""
    values = [v for n, v in headers if n.lower() == "host"]
    if len(values) != 1:
        raise Refused(400, "a request in a tunnel needs exactly one Host header")
    return values[0]


def looks_like_http(data: bytes) -> bool | None:
    """True: an HTTP request starts here; False: it cannot; None: not enough bytes yet."""
    data = data.lstrip(b"\r\n")
    line, sep, _ = data.partition(b"\r\n")
    if sep:
        return _REQUEST_LINE.match(line) is not None
    if not data or (all(0x20 <= c < 0x7F for c in data) and len(data) < 8192):
        return None          # still printable and no line end: wait for more
    return _REQUEST_LINE.match(data) is not None


def tls_record_needed(data: bytes) -> int:
    """Bytes of ``data`` that hold the whole ClientHello handshake message (0: unknown yet).

    The message may span several TLS records; each record is 5 header bytes
    plus its length. Refused when this is not a TLS handshake record.
    """
    msg = bytearray()
    pos = 0
    while True:
        if len(data) < pos + 5:
            return 0
        if data[pos] != 0x16 or data[pos + 1] != 0x03:
            raise Refused(400, "not a TLS handshake record")
        length = int.from_bytes(data[pos + 3:pos + 5], "big")
        if len(data) < pos + 5 + length:
            return 0
        msg += data[pos + 5:pos + 5 + length]
        pos += 5 + length
        if len(msg) >= 4:
            need = 4 + int.from_bytes(msg[1:4], "big")
            if need > 65536:
                raise Refused(400, "TLS ClientHello too large")
            if len(msg) >= need:
                return pos
        if pos > 65536 + 5 * 16:
            raise Refused(400, "TLS ClientHello too large")


def client_hello_sni(data: bytes) -> str | None:
    """The server_name in a complete ClientHello (``data`` as ``tls_record_needed``
    accepted it), or None when the client sent none. Refused when malformed."""
    msg = bytearray()
    pos = 0
    while pos < len(data):
        length = int.from_bytes(data[pos + 3:pos + 5], "big")
        msg += data[pos + 5:pos + 5 + length]
        pos += 5 + length
    try:
        if msg[0] != 1:
            raise Refused(400, "the first TLS handshake message is not a ClientHello")
        p = 4 + 2 + 32                                   # type+length, version, random
        p += 1 + msg[p]                                  # session id
        p += 2 + int.from_bytes(msg[p:p + 2], "big")     # cipher suites
        p += 1 + msg[p]                                  # compression methods
        if p == len(msg):
            return None                                  # no extensions at all
        end = p + 2 + int.from_bytes(msg[p:p + 2], "big")
        p += 2
        while p + 4 <= end:
            etype = int.from_bytes(msg[p:p + 2], "big")
            elen = int.from_bytes(msg[p + 2:p + 4], "big")
            body = msg[p + 4:p + 4 + elen]
            if len(body) != elen:
                break
            if etype == 0:                               # server_name
                q = 2
                names = []
                while q + 3 <= len(body):
                    ntype, nlen = body[q], int.from_bytes(body[q + 1:q + 3], "big")
                    if ntype == 0:
                        names.append(bytes(body[q + 3:q + 3 + nlen]).decode("ascii"))
                    q += 3 + nlen
                if len(names) != 1:
                    raise Refused(400, "a TLS server_name extension must hold one host name")
                return names[0]
            p += 4 + elen
    except (IndexError, UnicodeDecodeError):
        pass
    else:
        return None
    raise Refused(400, "malformed TLS ClientHello")


def address_is_public(addr: str) -> bool:
    """True only for global unicast addresses (see compiler/proxy.py's docstring).

    Here, not in proxy.py, so that proxy_serve.py needs no import of proxy.py."""
    import ipaddress

    ip = ipaddress.ip_address(addr.split("%", 1)[0])
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    return ip.is_global and not ip.is_multicast
