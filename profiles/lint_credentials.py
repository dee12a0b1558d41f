"""Profile lint, the credential checks: RF510 (a credential variable passed without
opt-in), RF540 (one opted in on purpose), RF541 (read_allow of a known credential
location), RF542 (a brokered credential its network policy never reaches)."""

from __future__ import annotations

import fnmatch

from . import load
from .model import Located, Profile


# Names a glob in env.pass is tested against: if it matches one, it passes secrets.
_CREDENTIAL_SAMPLES = ("GITHUB_TOKEN", "GH_TOKEN", "AWS_SECRET_ACCESS_KEY", "AWS_ACCESS_KEY_ID",
                       "AWS_SESSION_TOKEN", "NPM_TOKEN", "OPENAI_API_KEY", "ANTHROPIC_API_KEY",
                       "DATABASE_URL", "SSH_AUTH_SOCK", "PGPASSWORD", "DOCKER_AUTH_CONFIG",
                       "GOOGLE_APPLICATION_CREDENTIALS", "AZURE_CLIENT_SECRET", "CI_JOB_TOKEN",
                       "HF_TOKEN", "SLACK_BOT_TOKEN", "VAULT_TOKEN", "KUBECONFIG")


def _opted_in(name: str, allowed: tuple[str, ...]) -> bool:
    return any(name == a or fnmatch.fnmatchcase(name, a) for a in allowed)


def check_credentials(profile: Profile, origins, out: list, _diag) -> None:
    allowed = profile.env.allow_credentials
    for name in profile.env.pass_:
        if _opted_in(name, allowed):
            continue
        if any(c in name for c in "*?"):
            hits = [s for s in _CREDENTIAL_SAMPLES
                    if fnmatch.fnmatchcase(s, name) and not _opted_in(s, allowed)]
            bad = f"glob {name!r} passes credential variables such as {hits[0]}" if hits else None
        else:
            bad = (f"{name!r} looks like a credential" if load.looks_like_credential(name)
                   else None)
        if bad:
            where = origins.get(("env.pass", name), Located())
            out.append(_diag("RF510", f"{bad}; list it in env.allow_credentials to pass it "
                             "on purpose", where, source=name))


def check_credential_access(profile: Profile, origins, leaf: str,
                            out: list, _diag) -> None:
    """RF540 (a credential variable opted in), RF541 (read_allow of a credential
    location), RF542 (a brokered credential the network never reaches)."""
    from ringfence.rfcore.credentials import is_credential_path
    from .domains import parse_pattern

    for name in profile.env.allow_credentials:
        where = origins.get(("env.allow_credentials", name), Located())
        if where.file == leaf:
            out.append(_diag("RF540", f"{name!r} is passed into the sandbox on purpose: every "
                             "command there can read and send it (a brokered "
                             "[[credentials]] entry keeps it out of the environment)",
                             where, source=name))
    home = "/\0home"
    for entry in profile.filesystem.read_allow:
        path = home + entry[1:] if entry.startswith("~") else entry
        if is_credential_path(path, home, {}):
            where = origins.get(("filesystem.read_allow", entry), Located())
            out.append(_diag("RF541", f"{entry!r} is, holds or lies inside a known credential "
                             "location; ringfence keeps that location masked anyway",
                             where, source=entry))
    net = profile.network
    allow = []
    for text in net.allow if net.mode == "proxy" else ():
        try:
            allow.append(parse_pattern(text))
        except ValueError:
            continue
    for cred in profile.credentials:
        for domain in cred.domains:
            if not any(p.covers_host(domain.split(":")[0].lower()) for p in allow):
                out.append(_diag("RF542", f"credential {cred.name!r}: {domain!r} is not "
                                 "reachable under this profile's network policy, so the "
                                 "credential can never be used", cred.where, source=domain))
