"""The masked home: what of ``$HOME`` a sandbox may read, and why. Pure (no I/O).

With ``filesystem.mask_home`` (every built-in profile) the home directory is an
empty tmpfs inside the sandbox. A list of credential files always trails the next
tool; an allowlist of what toolchains need does not. Each row below says why the
path holds no secret. Rows of kind ``bind`` are bound back read-only as they are;
the other kinds name a file that tools need but that can also hold a secret: it is
served as a sanitized copy (``compiler/sanitize.py``), never raw.

Credential locations of the one table (``rfcore/credentials.py``) stay masked
wherever they are still visible: inside an allowed path, inside a writable root
(a workspace at ``~``), or outside the home through an XDG or tool override.
"""

from __future__ import annotations

import functools
import posixpath

from .spec import Note, RoBind, Sanitized, Tmpfs

# (path: ~ = home, @config = $XDG_CONFIG_HOME, @data = $XDG_DATA_HOME, $VAR = the
# file a variable names; kind; why)
HOME_ALLOW: tuple[tuple[str, str, str], ...] = (
    ("~/.local/bin", "bind", "programs installed per user (pip --user, pipx, uv tool): executables"),
    ("~/.local/lib/python*", "bind", "per-user site-packages: installed code"),
    ("@data/uv/python", "bind", "uv-managed interpreters"),
    ("@data/uv/tools", "bind", "uv tool environments: installed code"),
    ("@data/pipx", "bind", "pipx environments: installed code"),
    ("@data/mise/installs", "bind", "mise-managed toolchains"),
    ("@data/mise/shims", "bind", "mise shims (small scripts)"),
    ("@data/fnm", "bind", "fnm-managed Node versions"),
    ("~/.cargo/bin", "bind", "cargo-installed programs and rustup proxies"),
    ("~/.cargo/registry", "bind", "crate sources cargo downloaded (credentials.toml is elsewhere)"),
    ("~/.cargo/git", "bind", "git dependencies cargo checked out"),
    ("~/.rustup", "bind", "Rust toolchains"),
    ("~/.nvm", "bind", "nvm's Node versions and scripts"),
    ("~/.volta", "bind", "Volta's Node toolchains"),
    ("~/.bun/bin", "bind", "the bun binary"),
    ("~/.deno/bin", "bind", "the deno binary"),
    ("~/.pyenv", "bind", "pyenv's interpreters and shims"),
    ("~/.rbenv", "bind", "rbenv's Rubies and shims"),
    ("~/.asdf/installs", "bind", "asdf-managed toolchains"),
    ("~/.asdf/shims", "bind", "asdf shims"),
    ("~/.asdf/bin", "bind", "asdf itself"),
    ("~/.sdkman/candidates", "bind", "SDKMAN JDKs and build tools"),
    ("~/miniconda3", "bind", "a conda install: interpreters and packages"),
    ("~/miniforge3", "bind", "a conda install: interpreters and packages"),
    ("~/anaconda3", "bind", "a conda install: interpreters and packages"),
    ("~/.virtualenvs", "bind", "virtualenvwrapper's environments: installed code"),
    ("@data/virtualenvs", "bind", "pipenv's environments: installed code"),
    ("~/.cache/pypoetry/virtualenvs", "bind", "poetry's environments: installed code"),
    ("@data/pnpm", "bind", "pnpm's binaries and content-addressed store"),
    ("~/go/bin", "bind", "go install'ed programs"),
    ("~/go/pkg/mod", "bind", "the Go module cache: module sources, read-only"),
    ("~/.m2/repository", "bind", "Maven's artifact cache (settings.xml stays hidden)"),
    ("~/.gradle/wrapper", "bind", "Gradle distributions (gradle.properties stays hidden)"),
    # Moved by a variable (the Rust images set both; a user may keep them elsewhere in
    # the home): bound only where they lie inside a masked home or XDG dir.
    ("$RUSTUP_HOME", "bind", "Rust toolchains, where RUSTUP_HOME moved them"),
    ("$CARGO_HOME/bin", "bind", "cargo-installed programs, where CARGO_HOME moved them"),
    ("$CARGO_HOME/registry", "bind", "crate sources, where CARGO_HOME moved them "
                                     "(its config.toml and credentials stay hidden)"),
    ("$CARGO_HOME/git", "bind", "git dependencies, where CARGO_HOME moved them"),
    ("@config/git/ignore", "bind", "git's global ignore patterns"),
    ("@config/git/attributes", "bind", "git's global attributes"),
    # Tools need these, but they can hold secrets: served with the secrets removed.
    ("~/.gitconfig", "gitconfig", "identity for git commit, aliases, defaults; credential "
                                  "helpers and token-bearing URL rewrites removed"),
    ("@config/git/config", "gitconfig", "the same, at git's XDG location"),
    ("~/.npmrc", "npmrc", "registry and scopes for npm install; auth tokens removed"),
    ("@config/pip/pip.conf", "ini-urls", "pip's index; user and token removed from its URLs"),
    ("~/.pip/pip.conf", "ini-urls", "pip's index (old location); the same"),
    ("@config/uv/uv.toml", "ini-urls", "uv's index settings; user and token removed"),
    # A toolchain prefix reads its own config, which can hold a registry token, inside
    # a directory bound above (npm: PREFIX/etc/npmrc; pip: PREFIX/pip.conf, a
    # virtualenv's too): served the same way, over the bound copy.
    ("~/.nvm/versions/node/*/etc/npmrc", "npmrc", "nvm Node prefix's global npmrc"),
    ("~/.volta/tools/image/node/*/etc/npmrc", "npmrc", "Volta Node prefix's npmrc"),
    ("@data/fnm/node-versions/*/installation/etc/npmrc", "npmrc", "fnm Node prefix's npmrc"),
    ("@data/mise/installs/node/*/etc/npmrc", "npmrc", "mise Node prefix's npmrc"),
    ("~/.asdf/installs/nodejs/*/etc/npmrc", "npmrc", "asdf Node prefix's npmrc"),
    ("~/.pyenv/versions/*/pip.conf", "ini-urls", "a pyenv interpreter's (or virtualenv's) pip.conf"),
    ("~/.pyenv/versions/*/envs/*/pip.conf", "ini-urls", "a pyenv-virtualenv env's pip.conf"),
    ("@data/mise/installs/python/*/pip.conf", "ini-urls", "a mise interpreter's pip.conf"),
    ("@data/uv/python/*/pip.conf", "ini-urls", "a uv interpreter's pip.conf"),
    ("~/.virtualenvs/*/pip.conf", "ini-urls", "a virtualenvwrapper env's pip.conf"),
    ("@data/virtualenvs/*/pip.conf", "ini-urls", "a pipenv env's pip.conf"),
    ("~/.cache/pypoetry/virtualenvs/*/pip.conf", "ini-urls", "a poetry env's pip.conf"),
    ("~/miniconda3/pip.conf", "ini-urls", "the conda base env's pip.conf"),
    ("~/miniconda3/envs/*/pip.conf", "ini-urls", "a conda env's pip.conf"),
    ("~/miniforge3/pip.conf", "ini-urls", "the conda base env's pip.conf"),
    ("~/miniforge3/envs/*/pip.conf", "ini-urls", "a conda env's pip.conf"),
    ("~/anaconda3/pip.conf", "ini-urls", "the conda base env's pip.conf"),
    ("~/anaconda3/envs/*/pip.conf", "ini-urls", "a conda env's pip.conf"),
    # git reads these instead of ~/.gitconfig / /etc/gitconfig when they are set
    # (the system one only where it points outside /etc): served the same way.
    ("$GIT_CONFIG_GLOBAL", "gitconfig", "git's global config moved by GIT_CONFIG_GLOBAL"),
    ("$GIT_CONFIG_SYSTEM", "gitconfig", "git's system config moved outside /etc"),
)

# XDG base dirs that can lie outside the home (XDG_CONFIG_HOME=/srv/me/cfg): masked
# like a home, with the allowlist's @config/@data rows bound back into them.
XDG_MASKED = ("XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME")

_XDG = {"@config": ("XDG_CONFIG_HOME", ".config"), "@data": ("XDG_DATA_HOME", ".local/share"),
        "@state": ("XDG_STATE_HOME", ".local/state")}


def expand(template: str, home: str, xdg) -> str | None:
    head, _, rest = template.partition("/")
    if head.startswith("$"):
        value = dict(xdg).get(head[1:], "")
        value = posixpath.normpath(value) if value.startswith("/") else ""
        if not value or (head == "$GIT_CONFIG_SYSTEM" and value.startswith("/etc/")):
            return None
        return posixpath.normpath(posixpath.join(value, rest)) if rest else value
    if head == "~":
        return posixpath.normpath(posixpath.join(home, rest))
    var, default = _XDG[head]
    value = dict(xdg).get(var, "")
    base = value if value.startswith("/") else posixpath.join(home, default)
    return posixpath.normpath(posixpath.join(base, rest))


def rows(home: str, xdg, extra: tuple[str, ...] = ()) -> list[tuple[str, str]]:
    """(absolute path or glob, kind) of the allowlist plus a profile's read_allow."""
    return list(_rows(home, tuple(tuple(x) for x in xdg), tuple(extra)))


@functools.lru_cache(maxsize=32)
def _rows(home: str, xdg: tuple, extra: tuple[str, ...]) -> tuple[tuple[str, str], ...]:
    # A pure function of its arguments (HOME_ALLOW is data), asked three times per
    # compile and once per compile of every run of a warm Session.
    out = [(expand(t, home, xdg), "moved-bind" if kind == "bind" and t.startswith("$")
            else kind) for t, kind, _ in HOME_ALLOW]
    out = [(p, kind) for p, kind in out if p is not None]
    out += [(p, "bind") for p in extra]
    seen: set[str] = set()          # CARGO_HOME=~/.cargo names the ~/.cargo rows again
    return tuple(r for r in out if not (r[0] in seen or seen.add(r[0])))


def _inside(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip("/") + "/")


# Never masked as a "home": the sandbox would lose the system itself.
_SYSTEM = ("/", "/usr", "/bin", "/sbin", "/lib", "/lib64", "/etc", "/var", "/opt", "/proc",
           "/dev", "/sys")


def home_ops(host, extra: tuple[str, ...], ws_real: str | None, roots: list[str],
             notes: list[Note], *, mask: bool) -> tuple[list, list[str], list[str]]:
    """Ops for the homes (before the writable binds), the masked homes (as written
    and resolved) and the allowed paths bound back in.

    Both ``$HOME`` and the account's home from the password database are masked
    when they differ: a run started with another ``HOME`` must not leave the real
    one readable; so is each XDG base dir of ``XDG_MASKED`` that lies outside
    them. ``mask``: the profile masks the home. Sanitized copies are served
    either way (a raw ~/.gitconfig shows its credential helpers in any profile)."""
    ops: list = []
    masked: list[str] = []
    visible: list[str] = []
    homes = (host.home,) + tuple(getattr(host, "other_homes", ()))
    covers = roots + ([ws_real] if ws_real else [])
    bases: list[str] = []
    for home in (_xdg_dirs(host, homes) if mask else []):
        fact = host.path(home)
        if fact.kind != "dir" or fact.real in _SYSTEM or home in _SYSTEM or any(
                _inside(home, r) or _inside(fact.real, r) for r in covers):
            continue
        ops.append(Tmpfs(fact.real))
        masked += list(dict.fromkeys((home, fact.real)))
        bases += [home, fact.real]
    for i, home in enumerate(homes):
        fact = host.path(home)
        covering = [r for r in covers if _inside(home, r) or _inside(fact.real, r)]
        this = mask
        if this and covering:
            notes.append(Note("RF650", f"the home {home} lies inside the writable root "
                              f"{covering[0]}, so it is not masked; the credential "
                              "locations of ringfence's table are still hidden"))
            this = False
        if this and (fact.kind != "dir" or fact.real in _SYSTEM or home in _SYSTEM):
            this = False
        if this:
            ops.append(Tmpfs(fact.real))
            masked += list(dict.fromkeys((home, fact.real)))
        xdg = getattr(host, "xdg", ()) if i == 0 else ()
        here = bases + ([home, fact.real] if this else [])
        ops += _allowed(host, home, xdg, extra if i == 0 else (), here, this, notes,
                        visible)
    return ops, masked, visible


def _xdg_dirs(host, homes) -> list[str]:
    """The XDG_MASKED dirs of the run's environment that lie outside every home."""
    out = []
    for var, value in getattr(host, "xdg", ()):
        if var in XDG_MASKED and value.startswith("/"):
            value = posixpath.normpath(value)
            if not any(_inside(value, h) or _inside(value, host.path(h).real)
                       for h in homes if h in host.paths):
                out.append(value)
    return list(dict.fromkeys(out))


def _config_dirs(home: str, xdg) -> list[str]:
    """The XDG config, data and state dirs and ~/.local, ~/.cache: whole dirs of
    configs and state, never a toolchain's own dir."""
    return [expand(h, home, xdg) for h in _XDG] + [posixpath.join(home, ".local"),
                                                  posixpath.join(home, ".cache")]


def _all_homes(host) -> list[str]:
    out = []
    for h in (host.home,) + tuple(getattr(host, "other_homes", ())):
        out.append(h)
        if h in host.paths:
            out.append(host.path(h).real)
    return out


def _allowed(host, home: str, xdg, extra, bases: list[str], home_masked: bool,
             notes: list[Note], visible: list[str]) -> list:
    """``bases``: the masked dirs (as written and real) this home's rows bind into;
    ``home_masked``: this home is masked (its rows are bound wherever they are)."""
    ops: list = []
    homes = _all_homes(host) + bases
    reals = None
    served: set[str] = set()
    for path, kind in rows(home, xdg, extra):
        found = host.globs.get(path, ()) if any(c in path for c in "*?[") else (path,)
        for p in found:
            f = host.path(p)
            if f.kind == "missing":
                continue
            if kind in ("bind", "moved-bind"):
                if (not home_masked or kind == "moved-bind") and not any(
                        _inside(p, b) for b in bases):
                    continue            # not under a masked dir: already visible as is
                if kind == "moved-bind" and any(_inside(h, p) or _inside(h, f.real)
                                                for h in homes + _config_dirs(home, xdg)):
                    # RUSTUP_HOME=~ (or ~/.config, or /home) names no toolchain dir:
                    # binding it would undo the mask for all the table does not name.
                    notes.append(Note("RF651", f"{p} (named by a toolchain variable) is, "
                                      "or holds, a home or masked dir; not made readable"))
                    continue
                # Never through a link out of the allowed place into ANY home (or a
                # masked XDG dir): a ~/.local/bin that links to ~/.ssh, or to the
                # account's real home, must not bind the keys back in.
                if reals is None:
                    reals = _allowed_reals(host, home)
                if f.real != p and any(_inside(f.real, h) for h in homes) \
                        and not any(_inside(f.real, r) for r in reals):
                    notes.append(Note("RF651", f"{p} links to {f.real}, inside a home; "
                                      "not made readable"))
                    continue
                ops.append(RoBind(f.real, p))
                visible.append(p)
            elif f.kind == "file" and not _is_table(host, f.real, p):
                ops.append(Sanitized(f.real, p, kind))
                if kind == "gitconfig":
                    served.add(p)
    return ops + _includes(host, served, homes)


def _includes(host, served: set[str], homes: list[str]) -> list:
    """The files the served gitconfigs include (``host.git_includes``), served the
    same way: only a file whose path, as git names it, and real path both lie under
    a home or masked dir, and that is no credential location."""
    ops: list = []
    for src, dest in getattr(host, "git_includes", ()):
        if src not in served or dest in served or not any(_inside(dest, h) for h in homes):
            continue
        f = host.path(dest)
        if f.kind != "file" or not any(_inside(f.real, h) for h in homes) or any(
                _inside(f.real, c) or _inside(dest, c)
                for c in getattr(host, "credential_paths", ())):
            continue
        ops.append(Sanitized(f.real, dest, "gitconfig"))
        served.add(dest)
    return ops


def _is_table(host, real: str, path: str) -> bool:
    """A served config that resolves into ANOTHER credential location (a
    ~/.gitconfig that links into ~/.ssh) is not served."""
    return any(_inside(real, c) for c in getattr(host, "credential_paths", ())
               if c != path)


def _allowed_reals(host, home: str) -> list[str]:
    """The allowlist's own rows as real paths (a link between two allowed places,
    ~/.local/bin -> ~/.pyenv/shims, stays fine)."""
    out = []
    for path, kind in rows(home, getattr(host, "xdg", ())):
        if kind in ("bind", "moved-bind") and path in host.paths \
                and host.paths[path].real == path:
            out.append(path)
    return out


def gitconfigs(host) -> tuple[list[str], str, list[str]]:
    """(the gitconfig rows' paths, the home ``~/`` names, the dirs an included file
    may lie under: every home and masked XDG dir) for ``compiler/gitinclude.py``."""
    xdg = getattr(host, "xdg", ())
    configs = [p for p, kind in rows(host.home, xdg) if kind == "gitconfig"]
    for home in getattr(host, "other_homes", ()):
        configs += [p for p, kind in rows(home, ()) if kind == "gitconfig"]
    roots = [host.home, *getattr(host, "other_homes", ())]
    roots += [posixpath.normpath(v) for var, v in xdg if var in XDG_MASKED and v.startswith("/")]
    return list(dict.fromkeys(configs)), host.home, roots


def wanted(host, extra: tuple[str, ...]) -> list[str]:
    xdg = getattr(host, "xdg", ())
    out = [host.home] + [p for p, _ in rows(host.home, xdg, extra)]
    out += [dest for _, dest in getattr(host, "git_includes", ())]
    out += [posixpath.normpath(v) for var, v in xdg if var in XDG_MASKED and v.startswith("/")]
    for home in getattr(host, "other_homes", ()):
        out += [home] + [p for p, _ in rows(home, ())]
    return out
