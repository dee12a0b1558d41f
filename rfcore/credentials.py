"""The one table of credential locations, and what a credential looks like.

Everything that hides credentials reads this module: the compiler's masks
(``compiler/compile.py``), ``ringfence doctor`` (what it found and hid), every
export (srt ``denyRead``, Claude Code ``sandbox.filesystem.denyRead`` and
``Read()`` denies, Seatbelt denies), the environment passlist and profile lint.

A list of names always trails the next tool, so the built-in profiles also mask
the whole home directory (``filesystem.mask_home``) and let only the toolchain
paths of ``HOME_ALLOW`` through; this table is what stays hidden where a home
mask does not reach: a workspace or writable root that contains a credential
store, an XDG or tool-specific override that points outside the home, a profile
that turns the home mask off, and the exports (whose targets have no home mask).

Rows are data. ``~`` is the home, a leading ``/`` a system path (root's own
secrets: a sandbox run by root reads what root reads), ``@config``/``@data``/``@cache`` the XDG base
dirs (their defaults under the home unless ``XDG_*_HOME`` says otherwise), and
``env`` names the variable a tool reads instead of the default location (a
colon list for ``KUBECONFIG``). Stdlib only: ``run`` imports this module.
"""

from __future__ import annotations

import os
import re

# (location, what it holds, variables that move it). A variable that names a
# directory is given as "VAR/" plus the file inside it, e.g. "CODEX_HOME/auth.json";
# the whole directory it names is then a location (see _TOOLCHAIN_HOMES).
LOCATIONS: tuple[tuple[str, str, tuple[str, ...]], ...] = (
    # coding agents' own tokens
    ("~/.claude/.credentials.json", "Claude Code OAuth token", ("CLAUDE_CONFIG_DIR/.credentials.json",)),
    ("~/.claude.json", "Claude Code account and project state", ()),
    ("~/.codex/auth.json", "Codex CLI token", ("CODEX_HOME/auth.json",)),
    ("@config/github-copilot", "GitHub Copilot OAuth tokens", ()),
    ("~/.gemini/oauth_creds.json", "Gemini CLI OAuth token", ()),
    ("~/.gemini/.env", "Gemini CLI API key", ()),
    ("@data/opencode", "opencode auth.json (provider keys)", ()),
    ("~/.continue", "Continue config (provider keys)", ()),
    # clouds
    ("~/.aws", "AWS keys and SSO cache", ("AWS_SHARED_CREDENTIALS_FILE", "AWS_CONFIG_FILE")),
    ("@config/gcloud", "Google Cloud tokens", ("CLOUDSDK_CONFIG",)),
    ("~/.azure", "Azure CLI tokens", ("AZURE_CONFIG_DIR",)),
    ("~/.kube", "Kubernetes cluster credentials", ("KUBECONFIG",)),
    ("~/.oci", "Oracle Cloud keys", ()),
    ("~/.s3cfg", "s3cmd keys", ()),
    ("~/.boto", "boto / gsutil keys", ("BOTO_CONFIG",)),
    ("~/.pulumi", "Pulumi access token", ("PULUMI_HOME",)),
    ("~/.databrickscfg", "Databricks tokens", ("DATABRICKS_CONFIG_FILE",)),
    ("@config/configstore/firebase-tools.json", "Firebase CLI tokens", ()),
    ("@config/helm", "Helm repository passwords and registry logins", ("HELM_CONFIG_HOME",)),
    ("~/.fly", "Fly.io token", ("FLY_CONFIG_DIR",)),
    ("~/.wrangler", "Cloudflare wrangler OAuth token", ()),
    ("@config/.wrangler", "Cloudflare wrangler OAuth token", ()),
    ("@config/doctl", "DigitalOcean token", ()),
    ("~/.terraform.d/credentials.tfrc.json", "Terraform Cloud token", ()),
    ("~/.terraformrc", "Terraform CLI config (credentials blocks)", ("TF_CLI_CONFIG_FILE",)),
    ("@cache/huggingface/token", "Hugging Face token", ("HF_HOME/token", "HF_TOKEN_PATH")),
    # package registries
    ("~/.docker/config.json", "container registry auths", ("DOCKER_CONFIG/config.json",)),
    ("~/.docker/contexts", "Docker contexts (remote hosts, TLS keys)", ("DOCKER_CONFIG/contexts",)),
    ("@config/containers/auth.json", "podman registry auths", ("REGISTRY_AUTH_FILE",)),
    ("~/.npmrc", "npm registry tokens", ("NPM_CONFIG_USERCONFIG", "npm_config_userconfig")),
    ("~/.yarnrc.yml", "yarn npmAuthToken", ()),
    ("~/.pypirc", "PyPI upload tokens", ()),
    ("@config/pip/pip.conf", "pip index URLs with tokens", ("PIP_CONFIG_FILE",)),
    ("~/.pip/pip.conf", "pip index URLs with tokens", ()),
    ("@config/uv/uv.toml", "uv index URLs with tokens", ("UV_CONFIG_FILE",)),
    ("~/.cargo/credentials", "crates.io token", ("CARGO_HOME/credentials",)),
    ("~/.cargo/credentials.toml", "crates.io token", ("CARGO_HOME/credentials.toml",)),
    ("~/.gem/credentials", "RubyGems API key", ()),
    ("~/.bundle/config", "Bundler source credentials", ()),
    ("~/.m2/settings.xml", "Maven server passwords", ()),
    ("~/.m2/settings-security.xml", "Maven master password", ()),
    ("~/.gradle/gradle.properties", "Gradle repository and signing secrets", ("GRADLE_USER_HOME/gradle.properties",)),
    ("@config/composer/auth.json", "Composer tokens", ("COMPOSER_HOME/auth.json",)),
    ("~/.composer/auth.json", "Composer tokens", ()),
    ("~/.nuget/NuGet/NuGet.Config", "NuGet feed passwords", ()),
    ("~/.condarc", "conda channel tokens", ("CONDARC",)),
    ("~/miniconda3/.condarc", "conda channel tokens", ()),
    ("~/miniforge3/.condarc", "conda channel tokens", ()),
    ("~/anaconda3/.condarc", "conda channel tokens", ()),
    ("~/.continuum", "anaconda-client tokens", ()),
    ("@data/binstar", "anaconda-client tokens", ()),
    # version control
    ("~/.ssh", "SSH keys", ()),
    ("~/.git-credentials", "git credential store", ()),
    ("~/.gitcookies", "git http cookies (Gerrit, googlesource)", ()),
    ("@config/git/credentials", "git credential store", ()),
    ("@config/gh", "GitHub CLI token", ("GH_CONFIG_DIR",)),
    ("@config/hub", "hub token", ()),
    ("@config/glab-cli", "GitLab CLI token", ()),
    ("~/.netrc", "machine passwords (curl, git, ftp)", ("NETRC",)),
    ("~/.subversion/auth", "Subversion cached passwords", ()),
    # databases
    ("~/.pgpass", "PostgreSQL passwords", ("PGPASSFILE",)),
    ("~/.my.cnf", "MySQL password", ()),
    ("~/.mylogin.cnf", "MySQL login paths", ("MYSQL_TEST_LOGIN_FILE",)),
    # password managers and keys
    ("~/.gnupg", "GnuPG private keys", ("GNUPGHOME",)),
    ("~/.password-store", "pass store", ("PASSWORD_STORE_DIR",)),
    ("@config/op", "1Password CLI sessions", ()),
    ("@config/Bitwarden CLI", "Bitwarden CLI session", ()),
    ("@data/keyrings", "GNOME keyring", ()),
    ("@data/kwalletd", "KDE wallet", ()),
    ("~/.vault-token", "HashiCorp Vault token", ()),
    ("@config/sops/age/keys.txt", "sops age keys", ("SOPS_AGE_KEY_FILE",)),
    ("@config/age", "age keys", ()),
    ("@config/rclone/rclone.conf", "rclone remotes' secrets", ("RCLONE_CONFIG",)),
    ("~/.env", "environment secrets", ()),
    ("~/.mozilla", "Firefox cookies and passwords", ()),
    ("@config/google-chrome", "Chrome cookies and passwords", ()),
    ("@config/chromium", "Chromium cookies and passwords", ()),
    # shell and REPL histories (commands typed with tokens in them)
    ("~/.bash_history", "bash history", ("HISTFILE",)),
    ("~/.zsh_history", "zsh history", ()),
    ("~/.zhistory", "zsh history", ()),
    ("@data/fish/fish_history", "fish history", ()),
    ("~/.python_history", "Python REPL history", ("PYTHON_HISTORY",)),
    ("~/.ipython/profile_default/history.sqlite", "IPython history", ("IPYTHONDIR/profile_default/history.sqlite",)),
    ("~/.node_repl_history", "Node REPL history", ("NODE_REPL_HISTORY",)),
    ("~/.psql_history", "psql history", ("PSQL_HISTORY",)),
    ("~/.mysql_history", "mysql history", ("MYSQL_HISTFILE",)),
    ("~/.sqlite_history", "sqlite3 history", ("SQLITE_HISTORY",)),
    ("~/.irb_history", "irb history", ()),
    ("~/.rediscli_history", "redis-cli history", ("REDISCLI_HISTFILE",)),
    ("~/.lesshst", "less search history", ("LESSHISTFILE",)),
    ("~/.viminfo", "vim registers and history", ()),
    # the system's own secrets: a sandbox run by root would read them as root
    ("/etc/shadow", "password hashes", ()),
    ("/etc/shadow-", "password hashes (backup)", ()),
    ("/etc/gshadow", "group password hashes", ()),
    ("/etc/gshadow-", "group password hashes (backup)", ()),
    ("/etc/security/opasswd", "old password hashes", ()),
    ("/etc/ssh/ssh_host_rsa_key", "SSH host private key", ()),
    ("/etc/ssh/ssh_host_ecdsa_key", "SSH host private key", ()),
    ("/etc/ssh/ssh_host_ed25519_key", "SSH host private key", ()),
    ("/etc/ssh/ssh_host_dsa_key", "SSH host private key", ()),
    ("/etc/ssl/private", "TLS private keys", ()),
    ("/etc/letsencrypt", "Let's Encrypt account and certificate keys", ()),
)

_XDG = {"@config": ("XDG_CONFIG_HOME", ".config"), "@data": ("XDG_DATA_HOME", ".local/share"),
        "@cache": ("XDG_CACHE_HOME", ".cache")}


def _base(tag: str, home: str, env) -> str:
    var, default = _XDG[tag]
    value = env.get(var, "")
    return os.path.normpath(value) if value.startswith("/") else os.path.join(home, default)


def _expand(template: str, home: str, env) -> str:
    if template.startswith("/"):
        return os.path.normpath(template)
    head, _, rest = template.partition("/")
    if head == "~":
        return os.path.normpath(os.path.join(home, rest))
    return os.path.normpath(os.path.join(_base(head, home, env), rest))


# A variable naming a directory moves a whole tool's config (CLAUDE_CONFIG_DIR,
# CODEX_HOME, DOCKER_CONFIG): that whole directory is a location, not only the one
# file the row names (a tool keeps tokens in more than one file). Except these,
# which name a toolchain's home (CARGO_HOME=/usr/local/cargo holds cargo itself;
# HF_HOME holds the model cache): there only the named file is a location.
_TOOLCHAIN_HOMES = frozenset({"CARGO_HOME", "GRADLE_USER_HOME", "HF_HOME", "COMPOSER_HOME",
                              "IPYTHONDIR"})


def _overrides(names: tuple[str, ...], env) -> list[str]:
    out = []
    for spec in names:
        var, _, inner = spec.partition("/")
        if var not in _TOOLCHAIN_HOMES:
            inner = ""
        for value in env.get(var, "").split(":") if var == "KUBECONFIG" else [env.get(var, "")]:
            if value.startswith("/") and os.path.normpath(value) != "/":
                out.append(os.path.normpath(os.path.join(value, inner) if inner else value))
    return out


def locations(home: str, env) -> list[tuple[str, str]]:
    """Every (absolute path, what it holds) of the table for this home and environment:
    the default location (XDG-aware) and each override a variable points at."""
    out: dict[str, str] = {}
    for template, what, names in LOCATIONS:
        out.setdefault(_expand(template, home, env), what)
        for path in _overrides(names, env):
            if not (home == path or home.startswith(path.rstrip("/") + "/")):
                out.setdefault(path, what)      # never the home itself, nor /
    return list(out.items())


def export_paths(env=None) -> list[str]:
    """The table as an export writes it: under the home as ``~/...`` (portable), XDG
    dirs and overrides as ``env`` sets them (at their defaults without one)."""
    env = dict(env or {})
    home = os.path.normpath(env.get("HOME") or "/\0home")   # a marker no real path holds
    out = []
    for path, _ in locations(home, env):
        out.append("~" + path[len(home):] if path == home or path.startswith(home + "/")
                   else path)
    return list(dict.fromkeys(out))


# --- environment ---------------------------------------------------------------

# A name is credential-looking when one of its _-separated words is one of these
# (AWS_SECRET_ACCESS_KEY and SSH_AUTH_SOCK are, KEYBOARD_LAYOUT is not), when it
# contains one of the substrings, or starts with a cloud/forge prefix whose
# variables are credentials or name them.
_WORDS = frozenset({
    "TOKEN", "TOKENS", "SECRET", "SECRETS", "PASSWORD", "PASSWD", "PASS", "PASSPHRASE",
    "CREDENTIAL", "CREDENTIALS", "CREDS", "KEY", "KEYS", "APIKEY", "AUTH", "COOKIE",
    "PRIVATE", "SESSION", "PAT", "OTP", "SIGNATURE", "JWT", "BEARER", "DSN",
})
_SUBSTRINGS = ("TOKEN", "SECRET", "PASSWORD", "PASSWD", "PASSPHRASE", "APIKEY", "API_KEY",
               "CREDENTIAL", "ACCESS_KEY", "ACCESSKEY", "PRIVATE")
_PREFIXES = ("AWS_", "AZURE_", "ARM_CLIENT", "GCP_", "GOOGLE_APPLICATION_CREDENTIALS",
             "CLOUDSDK_AUTH", "GH_", "GITHUB_TOKEN", "GITLAB_TOKEN", "NPM_TOKEN", "VAULT_",
             "OP_SERVICE_ACCOUNT", "KUBECONFIG", "DATABASE_URL", "SSH_AUTH_SOCK", "HF_TOKEN",
             "DOCKER_AUTH_CONFIG", "CI_JOB_TOKEN", "SOPS_AGE_KEY")


def name_looks_like_credential(name: str) -> bool:
    upper = name.upper()
    return (any(w in _WORDS for w in upper.split("_"))
            or any(s in upper for s in _SUBSTRINGS)
            or upper.startswith(_PREFIXES) or upper.endswith(("_KEY", "_PAT", "_DSN")))


# Values shaped like a secret, whatever the variable is called: a JWT, the
# well-known token formats (each prefix is its issuer's documented one), a
# private key, a URL with a password in it.
_VALUE = (
    r"eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}"     # JWT
    r"|\bgh[opusr]_[A-Za-z0-9]{30,}|\bgithub_pat_[A-Za-z0-9_]{30,}"    # GitHub
    r"|\bglpat-[A-Za-z0-9_-]{20,}"                                     # GitLab
    r"|\b(?:AKIA|ASIA)[A-Z0-9]{16}\b"                                  # AWS key id
    r"|\bxox[abposr]-[A-Za-z0-9-]{10,}"                                # Slack
    r"|\bsk-(?:ant-|proj-)?[A-Za-z0-9_-]{20,}"                         # OpenAI, Anthropic
    r"|\bnpm_[A-Za-z0-9]{30,}|\bhf_[A-Za-z0-9]{30,}|\bpypi-[A-Za-z0-9_-]{30,}"
    r"|\bAIza[0-9A-Za-z_-]{35}|\b[rs]k_live_[0-9A-Za-z]{20,}"          # Google, Stripe
    r"|-----BEGIN [A-Z ]*PRIVATE KEY-----"
    r"|[A-Za-z][A-Za-z0-9+.-]*://[^/\s:@]*:[^/\s@]+@"                 # URL with a password
    r"|[A-Za-z][A-Za-z0-9+.-]*://(?=[^/\s:@]*[0-9])[A-Za-z0-9_.~-]{20,}@"  # a token as URL user
    r"|\bya29\.[0-9A-Za-z_-]{20,}"                                     # Google OAuth access
    r"|(?i:(?:token|secret|passw(?:or)?d|authorization|auth_?token|api[_-]?key|bearer)[\"']?\s*[:= ]\s*"
    r"[\"']?(?:token |bearer |basic )?)[0-9a-fA-F]{40}\b"               # 40-hex after a key
)


def value_looks_like_credential(value: str) -> bool:
    return bool(re.search(_VALUE, value))


def secret_valued(env) -> tuple[str, ...]:
    """Names of the variables in ``env`` whose value is shaped like a secret."""
    return tuple(sorted(n for n, v in env.items() if v and value_looks_like_credential(v)))


def is_credential_path(path: str, home: str, env) -> bool:
    """Whether ``path`` (absolute) is, or lies inside or contains, a table location."""
    path = os.path.normpath(path)
    for loc, _ in locations(home, env):
        if path == loc or path.startswith(loc + "/") or loc.startswith(path.rstrip("/") + "/"):
            return True
    return False
