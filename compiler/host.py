"""Probe host facts once; the compiler stays pure by receiving them.

Two kinds of facts live here:

* system facts (bwrap, user namespaces, seccomp, Landlock, uid, home, arch):
  ``probe()`` takes the cheap ones needed on the ``run`` hot path;
  ``probe(full=True)`` (doctor) also runs ``bwrap --version``, a real trial
  sandbox and the Landlock syscall.
* path facts for one profile and workspace (which read-denied and protected
  paths exist, what they resolve to, glob expansion): ``HostFacts.for_profile``.

``compile_profile`` only reads ``HostFacts``; it never touches the disk. A path
the compiler asks about that was not probed is a bug, not a silent "missing".
"""

from __future__ import annotations

import os
import subprocess
import sys
from ringfence.rfcore.records import field, record, replace
from typing import Literal, Mapping

from ringfence.profiles.model import Profile

from .cafiles import CA_VARS, ca_files  # noqa: F401  (re-exported: the CA variables)

# The environment of every process ringfence itself starts on the host (bwrap, the
# doctor's probes): built here, never taken from a profile. A profile's env.pass
# and env.set reach only the command inside the sandbox; a value such as
# LD_PRELOAD in bwrap's environment would run in the host's namespaces, outside
# every boundary. Nothing is inherited from ringfence's own environment either:
# bwrap and the probes need no variable, and LC_ALL=C keeps bwrap's messages
# (which the executor and doctor read) in English.
HOST_ENV = {"PATH": "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
            "LC_ALL": "C"}

Kind = Literal["dir", "file", "other", "missing"]


@record
class PathFact:
    path: str           # the absolute, template-expanded path as written (not resolved)
    kind: Kind          # what it resolves to ("missing" if nothing, incl. dangling links)
    real: str           # os.path.realpath(path)
    is_link: bool       # the path itself is a symbolic link


@record
class HostFacts:
    uid: int
    gid: int
    home: str
    arch: str                           # "x86_64" | "aarch64" | other (uname -m)
    python: str                         # interpreter for the in-sandbox relay (the real binary)
    bwrap: str | None                   # absolute path, None if not found on PATH
    env_names: tuple[str, ...] = ()     # names (never values) of the run's environment
    seccomp: bool | None = None         # kernel has seccomp filters (None: not probed)
    bwrap_version: str | None = None    # full probe only
    userns: bool | None = None          # user namespaces usable (full probe: a real trial)
    userns_detail: str = ""
    apparmor_userns_restricted: bool | None = None
    landlock_abi: int | None = None     # 0 = unsupported; full probe only
    bwrap_trial_error: str = ""         # stderr of a failed trial sandbox
    # ringfence's own state/cache/config dirs (rfcore.paths.private_dirs): hidden in
    # every sandbox, so no command can forge a grant or read earlier runs' output.
    private_dirs: tuple[str, ...] = ()
    # The default tooling dir (rfcore.paths.tooling_dir); "" = the model's literal default.
    tooling_default: str = ""
    # Where the relay interpreter's standard library lives; compile binds it back
    # in read-only if it sits under a path the sandbox masks (/tmp, /run).
    python_prefix: str = ""
    # Path facts for one profile/workspace; keys are the expanded paths.
    paths: Mapping[str, PathFact] = field(default_factory=dict)
    # Glob expansions: pattern -> matching paths (sorted), done here so compile is pure.
    globs: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    # Where the workspace-secrets walk keeps its directory cache ("" = no cache):
    # under the private pattern cache, so no sandbox can read or forge it.
    mask_cache: str = ""
    mask_key: str = ""          # the cache's keyed-digest key, in the state dir
    # Secret-named links in the workspace whose target is outside it: (link, target).
    # Not followed, not masked; compile reports them (RF660).
    unmasked_links: tuple[tuple[str, str], ...] = ()
    # (variable, absolute path it names, the file holds PEM certificates only) for
    # each CA variable of the run's environment (CA_VARS).
    ca_files: tuple[tuple[str, str, bool], ...] = ()
    # XDG base dirs and GIT_CONFIG_GLOBAL/SYSTEM of the run's environment ((var,
    # value) pairs; compiler/homemask.py masks and serves them) and the one table
    # of credential locations expanded for this home and environment
    # (rfcore/credentials.py): masked wherever the sandbox could still see them.
    xdg: tuple[tuple[str, str], ...] = ()
    credential_paths: tuple[str, ...] = ()
    # The account's home from the password database when $HOME names another
    # directory: masked too (a run with HOME=/elsewhere must not expose the real one).
    other_homes: tuple[str, ...] = ()
    # Names of the run's variables whose VALUE is shaped like a secret (a JWT, a
    # ghp_ token, a URL with a password): never passed, whatever the name.
    secret_env: tuple[str, ...] = ()
    # (including file, included file) of the served gitconfigs' include.path and
    # includeIf.*.path, recursively (compiler/gitinclude.py; homemask serves them).
    git_includes: tuple[tuple[str, str], ...] = ()

    def path(self, p: str) -> PathFact:
        try:
            return self.paths[p]
        except KeyError:
            raise KeyError(f"path {p!r} was not probed (use HostFacts.for_profile)") from None

    def for_profile(self, profile: Profile, workspace: str | None) -> "HostFacts":
        """Return a copy with the path facts compiling ``profile`` needs."""
        from ringfence.compiler.compile import wanted_paths
        from ringfence.compiler.gitinclude import includes
        from ringfence.compiler.homemask import gitconfigs

        configs, home, roots = gitconfigs(self)
        self = replace(self, git_includes=includes(configs, home, roots))
        plain, patterns = wanted_paths(profile, workspace, self)
        plain = plain + [p for _, p, _ in self.ca_files]
        outside: list[tuple[str, str]] = []
        globs = expand_globs(patterns, self.mask_cache, outside, self.mask_key)
        everything = set(plain)
        for found in globs.values():
            everything.update(found)
        from .factcache import facts

        return replace(self, paths=facts(everything, path_fact),
                       globs=globs, unmasked_links=tuple(outside))


def path_fact(p: str) -> PathFact:
    is_link = os.path.islink(p)
    real = os.path.realpath(p)
    if os.path.isdir(real):
        kind: Kind = "dir"
    elif os.path.isfile(real):
        kind = "file"
    elif os.path.lexists(real):
        kind = "other"
    else:
        kind = "missing"
    return PathFact(p, kind, real, is_link)


def expand_glob(pattern: str) -> tuple[str, ...]:
    if "**" not in pattern:
        # Wildcards in path components (the home allowlist's ~/.local/lib/python*,
        # ~/.nvm/versions/node/*/etc/npmrc): listings, without loading glob on
        # every run.
        import fnmatch

        found = [""]
        for part in pattern.strip("/").split("/"):
            nxt = []
            for base in found:
                if not any(c in part for c in "*?["):
                    p = f"{base}/{part}"
                    if os.path.lexists(p):
                        nxt.append(p)
                    continue
                try:
                    names = os.listdir(base or "/")
                except OSError:
                    continue
                nxt += [f"{base}/{n}" for n in names if fnmatch.fnmatchcase(n, part)]
            found = nxt
        return tuple(sorted(found))
    import glob

    # include_hidden: a read-deny of "**/.env*" must see dot directories too.
    return tuple(sorted(glob.glob(pattern, recursive=True, include_hidden=True)))


def expand_globs(patterns, cache_dir: str = "", outside: list | None = None,
                 key_path: str = "") -> dict[str, tuple[str, ...]]:
    """Expand every pattern. ``PREFIX/**/NAME`` patterns that share a prefix (Strict's
    workspace secrets) are matched in ONE walk of the prefix instead of one walk
    each, which never follows a symbolic link and lists only the directories that
    changed since the last run (``compiler/secretmasks.py``). Secret-named links
    that point outside the prefix are appended to ``outside``."""
    from ringfence.compiler import secretmasks

    out: dict[str, tuple[str, ...]] = {}
    by_prefix: dict[str, list[tuple[str, str]]] = {}
    for pat in patterns:
        prefix, sep, name = pat.partition("/**/")
        if sep and not any(c in prefix for c in "*?[") and "/" not in name \
                and "**" not in name:
            by_prefix.setdefault(prefix, []).append((pat, name))
        else:
            out[pat] = expand_glob(pat)
    for prefix, items in by_prefix.items():
        found, links = secretmasks.find(prefix, items, cache_dir, key_path)
        if outside is not None:
            outside.extend(links)
        for pat, _ in items:
            out[pat] = tuple(sorted(found.get(pat, ())))
    return out


def _read(path: str) -> str | None:
    try:
        with open(path, encoding="ascii") as fh:
            return fh.read().strip()
    except OSError:
        return None


_SECCOMP: list[bool] = []


def _seccomp_in_kernel() -> bool:
    # "Seccomp:" appears in /proc/self/status only on kernels built with it (the
    # running kernel's: read once per process).
    if not _SECCOMP:
        status = _read("/proc/self/status") or ""
        _SECCOMP.append(any(line.startswith("Seccomp:") for line in status.splitlines()))
    return _SECCOMP[0]


def _userns_sysctls() -> tuple[bool, str, bool | None]:
    """(plausible, detail, apparmor_restricted) from sysctls, without a trial."""
    maxns = _read("/proc/sys/user/max_user_namespaces")
    clone = _read("/proc/sys/kernel/unprivileged_userns_clone")   # Debian/Ubuntu patch
    aa = _read("/proc/sys/kernel/apparmor_restrict_unprivileged_userns")  # Ubuntu 23.10+
    restricted = None if aa is None else aa == "1"
    if maxns is not None and maxns == "0":
        return False, "user.max_user_namespaces is 0", restricted
    if clone is not None and clone == "0":
        return False, "kernel.unprivileged_userns_clone is 0", restricted
    if restricted:
        return False, "kernel.apparmor_restrict_unprivileged_userns is 1", restricted
    return True, f"user.max_user_namespaces={maxns}", restricted


def landlock_abi() -> int:
    """Landlock ABI version via landlock_create_ruleset(NULL, 0, VERSION); 0 if none."""
    import ctypes

    nr = {"x86_64": 444, "aarch64": 444}.get(os.uname().machine)
    if nr is None:
        return 0
    libc = ctypes.CDLL(None, use_errno=True)
    libc.syscall.restype = ctypes.c_long
    LANDLOCK_CREATE_RULESET_VERSION = 1
    abi = libc.syscall(nr, None, ctypes.c_size_t(0), ctypes.c_uint32(LANDLOCK_CREATE_RULESET_VERSION))
    return int(abi) if abi > 0 else 0


def trial_sandbox(bwrap: str) -> tuple[bool, str]:
    """Really start the smallest sandbox ringfence needs; (ok, stderr)."""
    argv = [bwrap, "--ro-bind", "/", "/", "--unshare-all", "--unshare-user",
            "--disable-userns", "--cap-drop", "ALL", "--proc", "/proc", "--dev", "/dev",
            "--", "true"]
    try:
        proc = subprocess.run(argv, capture_output=True, text=True, timeout=20,
                              env=HOST_ENV, stdin=subprocess.DEVNULL)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return False, str(exc)
    return proc.returncode == 0, proc.stderr.strip()


_INTERPRETER: list[str] = []


def _relay_python() -> str:
    """The interpreter binary itself, not a venv entry point: a venv (or the whole
    checkout) under /tmp is invisible inside the sandbox's private /tmp, while the
    relay needs only the standard library (it runs with -I -S). Resolved once per
    process: it is the binary this process runs (a venv link re-pointed later does
    not change what is running), and a warm Session asks on every run."""
    if not _INTERPRETER:
        _INTERPRETER[:] = [os.path.realpath(sys.executable), os.path.realpath(sys.base_prefix)]
    return _INTERPRETER[0]


def _python_prefix() -> str:
    _relay_python()
    return _INTERPRETER[1]


def which(name: str, path: str) -> str | None:
    """``shutil.which(name, path=path)`` for a bare name, without importing shutil
    (and bz2, lzma, zlib with it) on the run path."""
    for d in path.split(os.pathsep):
        full = os.path.join(d or os.curdir, name)
        if os.access(full, os.X_OK) and not os.path.isdir(full):
            return full
    return None


def probe(*, env: Mapping[str, str] | None = None, full: bool = False) -> HostFacts:
    """System facts. Cheap by default (run hot path); ``full`` for doctor."""
    env = os.environ if env is None else env
    uid, gid = os.getuid(), os.getgid()
    from .envfacts import env_facts

    fixed = env_facts(uid, env)
    path = env.get("PATH", os.defpath)
    bwrap = which("bwrap", path)
    facts = HostFacts(
        uid=uid, gid=gid, arch=os.uname().machine,
        python=_relay_python(), python_prefix=_python_prefix(),
        bwrap=bwrap, ca_files=ca_files(env), **fixed,
        seccomp=_seccomp_in_kernel())
    if not full:
        # The userns sysctls only explain a failure (doctor): a run whose sandbox
        # cannot be built fails closed on bwrap's own error, without reading them.
        return facts
    plausible, detail, restricted = _userns_sysctls()
    facts = replace(facts, userns=plausible if uid != 0 else True, userns_detail=detail,
                    apparmor_userns_restricted=restricted)
    version, ok, err = None, False, ""
    if bwrap:
        try:
            out = subprocess.run([bwrap, "--version"], capture_output=True, text=True,
                                 timeout=10, env=HOST_ENV, stdin=subprocess.DEVNULL)
            version = out.stdout.strip().removeprefix("bubblewrap ").strip() or None
        except (OSError, subprocess.TimeoutExpired):
            version = None
        ok, err = trial_sandbox(bwrap)
    try:
        abi = landlock_abi()
    except OSError:
        abi = 0
    return replace(facts, bwrap_version=version, userns=ok if bwrap else plausible,
                   bwrap_trial_error=err, landlock_abi=abi)
