"""Domain patterns for the network allow/deny lists (SPEC §3). Pure.

Syntax, one pattern per string:

  ``example.com``        exactly that host
  ``*.example.com``      any subdomain (``a.example.com``, ``a.b.example.com``), NOT the apex
  ``**.example.com``     the apex and every subdomain
  ``HOST:443``           only that port;  ``HOST:*``  any port
  ``127.0.0.1:8080``     an IP literal (exact only); IPv6 as ``[::1]:8080``

Ports. What a careful user expects from ``allow = ["pypi.org"]`` is "the web
site", not "every service on that host": an allow pattern WITHOUT a port
matches ports 80 and 443 only (the HTTP proxy otherwise could tunnel SSH or
SMTP via CONNECT to any port). A deny pattern without a port matches every
port, because a deny must never be narrower than the user thinks.

Names are compared case-insensitively, one trailing dot is dropped, and
Unicode names are compared in their IDNA (``xn--``) form, so ``BÜCHER.de.``
and ``xn--bcher-kva.de`` are the same host.

Rejected with ``ValueError(message)``: schemes and paths (``https://x``,
``x/y``), empty labels, a bare ``*``/``**``, wildcards anywhere but as the whole
first label, wildcards over a single label (``*.com``: a whole TLD), bad ports.
"""

from __future__ import annotations

import ipaddress
from ringfence.rfcore.records import record
from typing import Iterable, Literal

Kind = Literal["exact", "subdomains", "apex_and_subdomains"]

# Ports an allow pattern without ``:port`` covers (see module docstring).
WEB_PORTS = frozenset({80, 443})
ANY_PORT = "*"

_LABEL_CHARS = frozenset("abcdefghijklmnopqrstuvwxyz0123456789-_")


def normalize_host(host: str) -> str:
    """Canonical form of a host name or IP literal; ValueError if it is not one.

    Used on both patterns and requested hosts, so they compare equal exactly
    when they name the same host.
    """
    h = host.strip()
    if h.startswith("[") and h.endswith("]"):
        h = h[1:-1]
    if not h:
        raise ValueError("empty host name")
    try:
        return ipaddress.ip_address(h).compressed
    except ValueError:
        pass
    if h.endswith("."):
        h = h[:-1]
    if not h:
        raise ValueError("empty host name")
    labels = h.split(".")
    out = []
    for label in labels:
        if not label:
            raise ValueError(f"empty label in host name {host!r}")
        if label.isascii():
            label = label.lower()
        else:
            try:
                label = label.encode("idna").decode("ascii")
            except UnicodeError as exc:
                raise ValueError(f"invalid internationalized label {label!r}: {exc}") from None
        if len(label) > 63:
            raise ValueError(f"label longer than 63 characters in {host!r}")
        if not set(label) <= _LABEL_CHARS:
            bad = "".join(sorted(set(label) - _LABEL_CHARS))
            raise ValueError(f"invalid character(s) {bad!r} in host name {host!r}")
        if label.startswith("-") or label.endswith("-"):
            raise ValueError(f"label {label!r} starts or ends with '-' in {host!r}")
        out.append(label)
    name = ".".join(out)
    if len(name) > 253:
        raise ValueError(f"host name longer than 253 characters: {host[:40]!r}...")
    return name


def _parse_port(text: str, source: str) -> int | str:
    if text == ANY_PORT:
        return ANY_PORT
    if not text.isdigit() or not 1 <= int(text) <= 65535:
        raise ValueError(f"invalid port {text!r} in {source!r} (use 1-65535 or '*')")
    return int(text)


@record
class DomainPattern:
    text: str                  # the pattern as written (for messages and ledger rows)
    kind: Kind
    domain: str                # normalized: lower-case ASCII/IDNA, or a compressed IP
    port: int | str | None     # None: not given; "*": any port; else that port
    is_ip: bool = False

    @property
    def exact(self) -> bool:
        """An exact entry: no wildcard. Only these may open private addresses."""
        return self.kind == "exact"

    def covers_port(self, port: int, *, unported_means_any: bool = False) -> bool:
        if self.port == ANY_PORT:
            return True
        if self.port is None:
            return unported_means_any or port in WEB_PORTS
        return port == self.port

    def covers_host(self, host: str) -> bool:
        """``host`` must already be normalized (see :func:`normalize_host`)."""
        if self.kind == "exact":
            return host == self.domain
        sub = host.endswith("." + self.domain)
        if self.kind == "subdomains":
            return sub
        return sub or host == self.domain

    def matches(self, host: str, port: int, *, unported_means_any: bool = False) -> bool:
        """Does this pattern cover ``host:port``? ``host`` may be un-normalized."""
        try:
            h = normalize_host(host)
        except ValueError:
            return False
        return self.covers_host(h) and self.covers_port(port, unported_means_any=unported_means_any)


def parse_pattern(text: str) -> DomainPattern:
    """Parse one pattern; ``ValueError`` with a message naming the problem."""
    if not isinstance(text, str):
        raise ValueError(f"domain pattern must be a string, not {type(text).__name__}")
    src = text.strip()
    if not src:
        raise ValueError("empty domain pattern")
    if "://" in src:
        raise ValueError(f"{text!r}: a domain pattern has no scheme; write just the host, "
                         "e.g. 'example.com'")
    if any(c in src for c in "/?#@"):
        raise ValueError(f"{text!r}: a domain pattern is a host (and optional :port), "
                         "not a URL with a path, query or user")
    if any(c.isspace() for c in src):
        raise ValueError(f"{text!r}: whitespace inside a domain pattern")
    host, port = src, None
    if src.startswith("["):                       # [v6] or [v6]:port
        end = src.find("]")
        if end < 0:
            raise ValueError(f"{text!r}: unclosed '[' in IPv6 literal")
        host, rest = src[: end + 1], src[end + 1:]
        if rest:
            if not rest.startswith(":"):
                raise ValueError(f"{text!r}: unexpected text after IPv6 literal")
            port = _parse_port(rest[1:], text)
    elif src.count(":") == 1:
        host, p = src.split(":")
        port = _parse_port(p, text)
    elif src.count(":") > 1:
        try:                                       # bare IPv6 without brackets
            ipaddress.IPv6Address(src)
        except ValueError:
            raise ValueError(f"{text!r}: too many ':'; write IPv6 as [addr]:port") from None

    kind: Kind = "exact"
    if host.startswith("**."):
        kind, host = "apex_and_subdomains", host[3:]
    elif host.startswith("*."):
        kind, host = "subdomains", host[2:]
    if host in ("*", "**", ""):
        raise ValueError(f"{text!r}: a bare wildcard matches every host; list the domains "
                         "you need instead")
    if "*" in host:
        raise ValueError(f"{text!r}: '*' or '**' is only allowed as the whole first label, "
                         "e.g. '*.example.com'")
    domain = normalize_host(host)
    is_ip = _is_ip(domain)
    if is_ip and kind != "exact":
        raise ValueError(f"{text!r}: wildcards do not apply to IP addresses")
    if kind != "exact" and "." not in domain:
        raise ValueError(f"{text!r}: a wildcard over a top-level domain matches a whole "
                         "TLD; name the registered domain, e.g. '*.example.com'")
    return DomainPattern(text=src, kind=kind, domain=domain, port=port, is_ip=is_ip)


def _is_ip(text: str) -> bool:
    try:
        ipaddress.ip_address(text)
        return True
    except ValueError:
        return False


def _patterns(items: Iterable[str | DomainPattern]) -> list[DomainPattern]:
    return [p if isinstance(p, DomainPattern) else parse_pattern(p) for p in items]


def decide(host: str, port: int, allow: Iterable[str | DomainPattern],
           deny: Iterable[str | DomainPattern] = ()) -> tuple[bool, str | None, str]:
    """Decide ``host:port``: ``(allowed, rule, reason)``. Deny beats allow.

    ``rule`` is the text of the deciding pattern (``None`` for the default
    deny). When several allow patterns match, an exact one is reported first,
    because only an exact entry may open private addresses (see the proxy).
    """
    try:
        h = normalize_host(host)
    except ValueError as exc:
        return False, None, f"invalid host name: {exc}"
    if not isinstance(port, int) or not 1 <= port <= 65535:
        return False, None, f"invalid port {port!r}"
    for p in _patterns(deny):
        if p.covers_host(h) and p.covers_port(port, unported_means_any=True):
            return False, p.text, f"{h}:{port} matches deny pattern {p.text!r}"
    best = None
    for p in _patterns(allow):
        if p.covers_host(h) and p.covers_port(port):
            if p.exact:
                return True, p.text, f"{h}:{port} matches allow pattern {p.text!r}"
            best = best or p
    if best is not None:
        return True, best.text, f"{h}:{port} matches allow pattern {best.text!r}"
    near = [p.text for p in _patterns(allow) if p.covers_host(h)]
    if near:
        return False, None, (f"{h} is allowed only on other ports by {near[0]!r} "
                             f"(a pattern without ':port' covers 80 and 443)")
    return False, None, f"{h}:{port} is not in the allowlist"


def exact_allow(host: str, port: int, allow: Iterable[str | DomainPattern]) -> DomainPattern | None:
    """The exact (non-wildcard) allow entry covering ``host:port``, if any."""
    try:
        h = normalize_host(host)
    except ValueError:
        return None
    for p in _patterns(allow):
        if p.exact and p.covers_host(h) and p.covers_port(port):
            return p
    return None
