"""Domain pattern semantics (SPEC §3), asserted case by case."""

from __future__ import annotations

import pytest

from ringfence.profiles.domains import decide, exact_allow, normalize_host, parse_pattern


@pytest.mark.parametrize("pattern,host,port,expected", [
    # exact
    ("example.com", "example.com", 443, True),
    ("example.com", "EXAMPLE.com.", 443, True),
    ("example.com", "www.example.com", 443, False),
    ("example.com", "badexample.com", 443, False),
    ("example.com", "example.com.evil.net", 443, False),
    # *. subdomains only
    ("*.example.com", "a.example.com", 443, True),
    ("*.example.com", "a.b.example.com", 80, True),
    ("*.example.com", "example.com", 443, False),
    ("*.example.com", "xexample.com", 443, False),
    # **. apex and subdomains
    ("**.example.com", "example.com", 443, True),
    ("**.example.com", "deep.a.example.com", 443, True),
    ("**.example.com", "notexample.com", 443, False),
    # ports: unported allow means 80/443 only
    ("example.com", "example.com", 80, True),
    ("example.com", "example.com", 22, False),
    ("example.com:8443", "example.com", 8443, True),
    ("example.com:8443", "example.com", 443, False),
    ("example.com:*", "example.com", 22, True),
    # IDNA
    ("bücher.de", "xn--bcher-kva.de", 443, True),
    ("xn--bcher-kva.de", "BÜCHER.de", 443, True),
    # IP literals
    ("127.0.0.1:8080", "127.0.0.1", 8080, True),
    ("[::1]:8080", "::1", 8080, True),
    ("[::1]:8080", "[0:0::1]", 8080, True),
])
def test_matches(pattern, host, port, expected):
    assert parse_pattern(pattern).matches(host, port) is expected


@pytest.mark.parametrize("text,fragment", [
    ("https://example.com", "no scheme"),
    ("example.com/path", "not a URL"),
    ("user@example.com", "not a URL"),
    ("", "empty"),
    ("*", "bare wildcard"),
    ("**", "bare wildcard"),
    ("*.com", "top-level domain"),
    ("**.org:443", "top-level domain"),
    ("a..com", "empty label"),
    (".example.com", "empty label"),
    ("foo.*.com", "whole first label"),
    ("*foo.com", "whole first label"),
    ("example.com:0", "invalid port"),
    ("example.com:99999", "invalid port"),
    ("example.com:http", "invalid port"),
    ("exa mple.com", "whitespace"),
    ("ex!ample.com", "invalid character"),
    ("*.10.0.0.1", "IP addresses"),
    ("a:b:c", "too many ':'"),
    ("-bad.com", "starts or ends with '-'"),
])
def test_rejects(text, fragment):
    with pytest.raises(ValueError) as exc:
        parse_pattern(text)
    assert fragment in str(exc.value)


def test_pattern_fields():
    p = parse_pattern("**.Example.COM.:8080")
    assert (p.kind, p.domain, p.port, p.exact) == ("apex_and_subdomains", "example.com", 8080, False)
    assert parse_pattern("localhost:1234").exact


def test_deny_beats_allow():
    assert decide("api.example.com", 443, ["**.example.com"], ["api.example.com"]) == (
        False, "api.example.com", "api.example.com:443 matches deny pattern 'api.example.com'")
    assert decide("www.example.com", 443, ["**.example.com"], ["api.example.com"]) == (
        True, "**.example.com", "www.example.com:443 matches allow pattern '**.example.com'")


def test_unported_deny_covers_every_port():
    allowed, rule, _ = decide("evil.example.com", 8080, ["*.example.com:*"], ["evil.example.com"])
    assert (allowed, rule) == (False, "evil.example.com")


def test_default_deny_and_port_hint():
    assert decide("other.org", 443, ["example.com"]) == (
        False, None, "other.org:443 is not in the allowlist")
    allowed, rule, reason = decide("example.com", 22, ["example.com"])
    assert (allowed, rule) == (False, None)
    assert "other ports" in reason and "'example.com'" in reason


def test_exact_rule_preferred_over_wildcard():
    allowed, rule, _ = decide("svc.test", 8000, ["**.svc.test:*", "svc.test:8000"])
    assert (allowed, rule) == (True, "svc.test:8000")
    assert exact_allow("svc.test", 8000, ["**.svc.test:*"]) is None
    assert exact_allow("LOCALHOST.", 8000, ["localhost:8000"]).text == "localhost:8000"


def test_invalid_requested_host():
    allowed, rule, reason = decide("exa mple.com", 443, ["**.example.com"])
    assert (allowed, rule) == (False, None)
    assert reason.startswith("invalid host name")
    assert decide("example.com", 0, ["example.com"])[0] is False


def test_normalize_host():
    assert normalize_host("WWW.Example.Com.") == "www.example.com"
    assert normalize_host("[::FFFF:1.2.3.4]") == "::ffff:102:304"
    with pytest.raises(ValueError):
        normalize_host("a" * 64 + ".com")
