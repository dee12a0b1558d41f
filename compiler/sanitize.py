"""Config files served inside a sandbox with their secrets removed.

A masked home still has to give git its identity, npm its registry and pip its
index. Those files also hold secrets (``credential.*`` helpers and
``url.<token>.insteadOf`` in ``~/.gitconfig``, ``_authToken`` in ``~/.npmrc``, an
index URL with a password in ``pip.conf``), so the sandbox never sees the file
itself: the executor reads it on the host, runs the matching function below and
hands bwrap the result (``--ro-bind-data``, a memfd: no file on disk).

Each function removes by *kind of key* and then drops any remaining line that
holds something shaped like a secret (``rfcore.credentials``): a new kind of
token in an old place is dropped too. Stdlib only (``run`` path).
"""

from __future__ import annotations

import re

from ringfence.rfcore.credentials import value_looks_like_credential

MAX_BYTES = 1024 * 1024
_USERINFO = r"(?i)\b([a-z][a-z0-9+.-]*://)[^/\s@]+@"
_SECRET_KEY = r"(?i)(token|pass|secret|_auth|auth$|apikey|api_key|api-key|extraheader|cookie|otp)"


def strip_userinfo(text: str) -> str:
    """``https://user:token@host/x`` -> ``https://host/x``."""
    return re.sub(_USERINFO, r"\1", text)


_URL = r"(?i)\b[a-z][a-z0-9+.-]*://[^\s\"'<>]+"
# Query keys that carry a credential (?token=, ?access_token=, ?auth=, ?key=...).
_QUERY_KEY = r"(?i)^(?:.*[_-])?(?:token|auth|key|apikey|password|passwd|secret|sig|signature)$"


def _token_like(part: str) -> bool:
    """A path segment shaped like a generated token: long, letters and digits,
    no word separators a package or directory name has (``my-internal-index``)."""
    return (len(part) >= 16 and re.fullmatch(r"[A-Za-z0-9_]+", part) is not None
            and re.search(r"[0-9]", part) is not None and re.search(r"[A-Za-z]", part) is not None)


def url_holds_secret(text: str) -> bool:
    """Whether a URL in ``text`` carries a token in its path (Gemfury's
    ``https://pypi.fury.io/TOKEN/user/``) or its query (``?token=``)."""
    for url in re.findall(_URL, text):
        rest = url.split("://", 1)[1]
        path, _, query = rest.partition("?")
        segments = path.split("/")[1:]
        if any(_token_like(seg) for seg in segments):
            return True
        for pair in re.split(r"[&;]", query.split("#", 1)[0]):
            key = pair.split("=", 1)[0]
            if key and re.match(_QUERY_KEY, key):
                return True
    return False


def _clean_lines(lines) -> str:
    out = [ln for ln in lines if not value_looks_like_credential(ln) and not url_holds_secret(ln)]
    return "".join(out)


def gitconfig(text: str) -> str:
    """git's config without credential sections, secret keys or tokens in URLs.

    Drops: every ``[credential]``/``[credential "URL"]`` section (helpers run
    programs and name stores), ``[url "…@…"]`` sections whose base URL carries a
    user or token (``insteadOf`` rewriting with an embedded token), keys named like
    secrets (``http.extraHeader``, ``*.token``, ``*.password``, ``sendemail.smtpPass``)
    and user info inside any remaining URL value."""
    out: list[str] = []
    skip = False
    pending = ""
    for raw in text.splitlines(keepends=True):
        line = pending + raw
        if line.rstrip("\r\n").endswith("\\") and not line.lstrip().startswith(("#", ";")):
            pending = line          # a continued value: judge the logical line whole
            continue
        pending = ""
        stripped = line.lstrip()
        if stripped.startswith("["):
            end = stripped.find("]")
            header = stripped[1:end] if end > 0 else stripped[1:]
            m = re.match(r"\s*([A-Za-z0-9-]*)", header)
            name = m.group(1).lower() if m else ""
            # A credential section, or any section named by a URL with user info
            # ([url "https://TOKEN@host/"], [http "https://u:p@host"]): dropped whole.
            skip = name == "credential" or (name == "url" and "@" in header) or \
                bool(re.search(_USERINFO, header)) or not name or url_holds_secret(header) \
                or value_looks_like_credential(header)
            rest = stripped[end + 1:] if end > 0 else ""
            if skip:
                continue
            out.append(stripped[:end + 1] + "\n" if rest.strip() else line)
            if not rest.strip():
                continue
            line = rest
        if skip:
            continue
        key = line.strip().split("=", 1)[0].strip()
        if key and not key.startswith(("#", ";")) and re.search(_SECRET_KEY, key):
            continue
        out.append(strip_userinfo(line))
    return _clean_lines(out)


def npmrc(text: str) -> str:
    """``.npmrc`` without auth keys (``_authToken``, ``_auth``, ``_password``,
    ``username``, ``email``, ``certfile``/``keyfile``) for any registry, and
    without user info in URLs; ``registry=``, scopes and the rest stay."""
    out = []
    for line in text.splitlines(keepends=True):
        key = line.strip().split("=", 1)[0].strip().lower()
        tail = key.rsplit(":", 1)[-1]
        if tail in {"_authtoken", "_auth", "_password", "username", "email", "password",
                    "certfile", "keyfile", "cert", "key", "otp"} or re.search(_SECRET_KEY, tail):
            continue
        out.append(strip_userinfo(line))
    return _clean_lines(out)


def ini_urls(text: str) -> str:
    """An ini file (pip.conf, uv.toml-like) with secret keys dropped and user info
    removed from every URL (``index-url = https://__token__:pypi-…@host/simple``)."""
    out = []
    for line in text.splitlines(keepends=True):
        key = line.strip().split("=", 1)[0].strip()
        if key and not key.startswith(("#", ";", "[")) and re.search(_SECRET_KEY, key):
            continue
        out.append(strip_userinfo(line))
    return _clean_lines(out)


KINDS = {"gitconfig": gitconfig, "npmrc": npmrc, "ini-urls": ini_urls}


def sanitized(kind: str, path: str) -> bytes:
    """The file at ``path`` as the sandbox may see it; b"" if it cannot be read
    (or is too big to be a config file: never served raw)."""
    try:
        with open(path, "rb") as fh:
            data = fh.read(MAX_BYTES + 1)
    except OSError:
        return b""
    if len(data) > MAX_BYTES or b"PRIVATE KEY" in data:
        return b""          # not a config file (a link to a key?): serve nothing
    text = data.decode("utf-8", "replace")
    return KINDS[kind](text).encode("utf-8")
