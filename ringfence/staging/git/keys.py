"""Which git configuration keys can make git run a program: one table, two users.

* the classifier's ``git -c KEY=VAL`` / ``--config-env`` / ``GIT_CONFIG_*`` rule: a
  key that can run a program makes the command ``one_time``;
* the workspace's host-obeyed judge: a sandbox's change to a git config file is
  applied only when every key it adds or changes is harmless.

The table is an allowlist: a key that is not listed is treated as one that can run
a program (unknown keys fail closed). Keys are compared the way git compares them:
section and variable names are case-insensitive, a subsection (the middle part of
``branch.main.remote``) is case-sensitive and may be anything.

Sources: git-config(1) "Variables" (git 2.39-2.47), and for what runs programs
``core.pager``, ``core.editor``, ``core.sshCommand``, ``core.fsmonitor``,
``core.hooksPath``, ``core.askPass``, ``alias.*`` (``!`` aliases run a shell),
``pager.*``, ``*.command``, ``filter.*``, ``diff.*.textconv``/``.command``,
``merge.*.driver``, ``credential.helper``, ``gpg.program``, ``include*``,
``remote.*.receivepack``/``uploadpack``/``vcs``, ``submodule.*.update``
(``!cmd``), ``sequence.editor``, ``protocol.*.allow`` (enables ``ext::``).
Leaf module: stdlib only, imported by classifier and ringfence alike.
"""

from __future__ import annotations

# section.variable (two-level keys), lower case.
_SAFE_TWO_LEVEL = frozenset({
    "core.repositoryformatversion", "core.filemode", "core.bare", "core.logallrefupdates",
    "core.ignorecase", "core.precomposeunicode", "core.symlinks", "core.autocrlf",
    "core.eol", "core.safecrlf", "core.quotepath", "core.abbrev", "core.compression",
    "core.loosecompression", "core.whitespace", "core.checkstat", "core.trustctime",
    "core.untrackedcache", "core.preloadindex", "core.sparsecheckout", "core.commentchar",
    "core.splitindex", "core.multipackindex",
    "init.defaultbranch",
    "commit.verbose", "commit.status", "commit.cleanup",
    "pull.rebase", "pull.ff", "push.default", "push.autosetupremote", "push.followtags",
    "fetch.prune", "fetch.prunetags", "fetch.parallel", "fetch.writecommitgraph",
    "merge.ff", "merge.conflictstyle", "merge.log", "merge.stat", "merge.renames",
    "rebase.autosquash", "rebase.autostash", "rebase.updaterefs", "rebase.stat",
    "diff.renames", "diff.algorithm", "diff.colormoved", "diff.context", "diff.mnemonicprefix",
    "diff.noprefix", "diff.relative", "diff.statgraphwidth", "diff.submodule",
    "status.showuntrackedfiles", "status.short", "status.branch", "status.relativepaths",
    "status.submodulesummary",
    "log.date", "log.decorate", "log.follow", "log.showsignature", "log.abbrevcommit",
    "format.pretty", "format.signoff",
    "gc.auto", "gc.autodetach", "gc.pruneexpire", "gc.reflogexpire",
    "branch.autosetupmerge", "branch.autosetuprebase", "branch.sort",
    "tag.sort", "rerere.enabled", "rerere.autoupdate",
    "extensions.worktreeconfig", "extensions.objectformat",
    "checkout.defaultremote", "clone.defaultremotename",
    "advice.detachedhead", "help.autocorrect", "transfer.fsckobjects",
    "feature.manyfiles", "index.version", "pack.threads",
})

# Whole sections whose every key is harmless (they name people, colours, messages).
_SAFE_SECTIONS = frozenset({"user", "author", "committer", "color", "i18n", "advice", "column"})

# section.<subsection>.variable (three-level keys): variable names per section.
_SAFE_THREE_LEVEL = {
    "branch": frozenset({"remote", "pushremote", "merge", "rebase", "description"}),
    "remote": frozenset({"url", "pushurl", "fetch", "push", "tagopt", "prune", "mirror",
                         "skipdefaultupdate", "skipfetchall"}),
    "color": None,   # color.diff.meta etc.: None means every variable
    "user": None,
}

# A remote URL runs nothing of the repository's choosing only through these
# transports (git-clone(1) "GIT URLS"). Everything else can: ``ext::`` and
# ``fd::`` run a command, ``X::addr`` and ``X://`` run the helper git-remote-X,
# and a local path or ``file://`` URL makes the host's push or fetch run the
# target repository's hooks (pre-receive, update, post-receive) and its
# ``uploadpack``/``receivepack`` configuration.
_NETWORK_SCHEMES = ("https://", "http://", "ssh://", "git://", "git+ssh://", "ssh+git://")
_COMMIT_SIGNING = frozenset({"commit.gpgsign", "tag.gpgsign", "push.gpgsign"})


def split_key(key: str) -> tuple[str, str | None, str]:
    """``Branch.Main.Remote`` -> ("branch", "Main", "remote"): git's own case rules."""
    first, _, rest = key.partition(".")
    sub, _, var = rest.rpartition(".")
    return first.lower(), (sub if _ else None), var.lower()


def key_can_run_program(key: str, value: str | None = None) -> bool:
    """True when setting ``key`` (to ``value``, where known) can make git run a program.

    Unknown or malformed keys answer True: the caller then holds or asks.
    """
    section, sub, var = split_key(key.strip())
    if not section or not var:
        return True
    if sub is None:
        name = f"{section}.{var}"
        if section in _SAFE_SECTIONS or name in _SAFE_TWO_LEVEL:
            return False
        if name in _COMMIT_SIGNING:
            # Turning signing off runs nothing; turning it on runs gpg.program.
            return (value or "").strip().lower() not in ("false", "no", "off", "0")
        return True
    allowed = _SAFE_THREE_LEVEL.get(section, frozenset())
    if section not in _SAFE_THREE_LEVEL:
        return True
    if allowed is not None and var not in allowed:
        return True
    if section == "remote" and var in ("url", "pushurl"):
        return value is None or not url_is_network(value)
    if section == "branch" and var in ("remote", "pushremote"):
        # a remote's name, "." (this repository: a local upstream branch), or a
        # URL used in a remote's place
        return value is None or not (value == "." or _REMOTE_NAME.match(value)
                                     or url_is_network(value))
    return False


def url_is_network(url: str) -> bool:
    """True for a URL through a network transport that runs no program of the
    repository's choosing: http(s), ssh, git, and scp-like ``[user@]host:path``."""
    u = url.strip()
    low = u.lower()
    if low.startswith(_NETWORK_SCHEMES):
        rest = u.split("://", 1)[1]
        return bool(rest) and not rest.startswith("-")
    if "://" in u or "::" in u:
        return False
    # scp-like: no slash before the first colon, and a host that is not an option
    head, colon, _ = u.partition(":")
    return bool(colon) and bool(_SCP_HOST.match(head))


class _Match:
    """A tiny matcher without ``re`` (this module is on the hook path)."""

    def __init__(self, first: str, rest: str) -> None:
        self.first, self.rest = frozenset(first), frozenset(rest)

    def match(self, text: str) -> bool:
        return bool(text) and text[0] in self.first and all(c in self.rest for c in text[1:])


_ALNUM = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
_REMOTE_NAME = _Match(_ALNUM + "_", _ALNUM + "_.-")
_SCP_HOST = _Match(_ALNUM + "_[", _ALNUM + "_.-@[]")


# Keys that change what git status and diff show, so that a run's own edits stay
# hidden from the person who reviews them (stat data trusted, untracked files
# hidden, excludes elsewhere). Not programs: the classifier does not use this.
_HIDES = frozenset({"core.trustctime", "core.checkstat", "core.sparsecheckout",
                    "core.untrackedcache", "status.showuntrackedfiles", "core.ignorestat",
                    "core.ignorecase", "diff.relative", "diff.ignoresubmodules",
                    "core.excludesfile", "core.attributesfile"})
_HIDING_SECTIONS = frozenset({"status"})          # every status.* key shapes what it shows
_HIDING_COLORS = frozenset({"diff", "status", "branch", "decorate", "grep", "interactive"})


def key_hides_changes(key: str, value: str | None = None) -> bool:
    """True for a key that changes what ``git status`` / ``git diff`` show: a
    relative diff, case-folded names, mode changes ignored (``core.filemode``
    false), every ``status.*`` key, and colour slots of
    diff and status output (``color.diff.new = black black`` prints additions
    invisibly)."""
    section, sub, var = split_key(key.strip())
    if sub is None and f"{section}.{var}" == "core.filemode":
        # false: git stops seeing mode changes (a file made executable stays hidden)
        return (value or "").strip().lower() in ("false", "no", "off", "0")
    if sub is None and f"{section}.{var}" == "core.splitindex":
        # on: entry flags move to sharedindex.* files, judged nowhere
        return (value or "true").strip().lower() not in ("false", "no", "off", "0")
    if sub is None:
        return f"{section}.{var}" in _HIDES or section in _HIDING_SECTIONS
    if section == "color" and sub.lower() in _HIDING_COLORS:
        return True
    return section == "submodule" and var == "ignore"


# Keys that change where the host's next push sends the repository, or what its
# next push or pull does (a mirror push deletes remote branches; a push refspec
# can force; ``rebase = interactive`` opens a todo). Not programs: the
# classifier does not use this; the host-obeyed judge holds them.
_PUSH_REDIRECT = frozenset({"mirror", "pushurl", "push", "receivepack"})


def key_redirects_push(key: str, value: str | None = None) -> bool:
    section, sub, var = split_key(key.strip())
    v = (value or "").strip().lower()
    if section == "remote" and sub is not None and var in _PUSH_REDIRECT:
        return True
    if section == "remote" and sub is not None and var == "fetch":
        # the host's next fetch writes where the refspec says: only remote-tracking
        # refs are harmless (``+refs/heads/*:refs/heads/*`` force-moves its branches)
        dst = (value or "").partition(":")[2].strip()
        return bool(dst) and not dst.startswith("refs/remotes/")
    if section == "branch" and sub is not None and var == "rebase":
        return v in ("interactive", "i")
    if sub is None and f"{section}.{var}" == "pull.rebase":
        return v in ("interactive", "i")
    if sub is None and f"{section}.{var}" == "push.default":
        return v == "matching"
    if sub is None and section == "push" and var in ("pushoption", "recursesubmodules"):
        return True
    return sub is None and f"{section}.{var}" == "remote.pushdefault"


def to_new_remote(key: str, value: str | None, old_pairs, pairs) -> bool:
    """``branch.B.remote`` / ``branch.B.pushRemote`` naming a remote this run
    defined (or a URL in a remote's place): the host's next plain ``git push`` or
    ``git pull`` of B goes where the run chose, not where it went before."""
    section, sub, var = split_key(key.strip())
    if section != "branch" or sub is None or var not in ("remote", "pushremote"):
        return False
    v = (value or "").strip()
    if v == ".":
        return False            # this repository itself: a local upstream branch
    if "/" in v or ":" in v:
        return True                 # a URL or a path, not a remote's name

    def remotes(of) -> set[str]:
        out = set()
        for k, _ in of:
            s2, name, v2 = split_key(k.strip())
            if s2 == "remote" and name is not None and v2 == "url":
                out.add(name)
        return out

    return v in remotes(pairs) - remotes(old_pairs)


__all__ = ["key_can_run_program", "key_hides_changes", "key_redirects_push", "split_key",
           "to_new_remote", "url_is_network"]
