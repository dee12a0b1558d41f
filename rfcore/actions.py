"""One table of action aliases: other spellings of the same irreversible action.

Profiles write deny and ask rules on actions (``git push **``, ``helm uninstall
**``), but tools spell one action several ways: ``git send-pack`` pushes,
``docker image push`` is ``docker push``, ``helm un`` is ``helm uninstall``,
``terraform apply -destroy`` is ``terraform destroy``. The gate matches deny and
ask rules against the canonical spelling as well (``canonical_views``), and
``ringfence explain`` shows it (``canonical_action``). Allow rules never see
through an alias: granting a spelling grants only that spelling.

Each row names its source (the tool's manual or ``--help``). Leaf module:
stdlib only, used by ringfence.session.gate (profiles' rule matching) and rendering.
"""

from __future__ import annotations

from typing import NamedTuple, Sequence


class Alias(NamedTuple):
    program: str                  # basename of argv[0]
    spelling: tuple[str, ...]     # subcommand words as written
    canonical: tuple[str, ...]    # the action's canonical subcommand words
    source: str
    option: str = ""              # the spelling counts only with this option (`-destroy`)
    to_program: str = ""          # the canonical program, when it is another one


ALIASES: tuple[Alias, ...] = (
    # git: programs that push (git-send-pack(1) "Push objects over Git protocol to
    # another repository"; git-http-push(1) "Push objects over HTTP/DAV to another
    # repository"; git-subtree(1) "push"; git-svn(1) "dcommit"; git-p4(1) "submit").
    Alias("git", ("send-pack",), ("push",), "git-send-pack(1)"),
    Alias("git", ("http-push",), ("push",), "git-http-push(1)"),
    Alias("git", ("subtree", "push"), ("push",), "git-subtree(1) push"),
    Alias("git", ("svn", "dcommit"), ("push",), "git-svn(1) dcommit"),
    Alias("git", ("p4", "submit"), ("push",), "git-p4(1) submit"),
    # npm resolves any unambiguous abbreviation of a command (npm 11: `npm pu`,
    # `npm pub`, `npm publis` all run publish; `npm p` is ambiguous).
    *(Alias("npm", ("publish"[:n],), ("publish",), "npm 11 command abbreviations")
      for n in range(2, 7)),
    # docker(1)/podman(1): the management-command spellings and pushes by option.
    Alias("docker", ("image", "push"), ("push",), "docker image push --help"),
    Alias("docker", ("manifest", "push"), ("push",), "docker manifest push --help"),
    Alias("docker", ("compose", "push"), ("push",), "docker compose push --help"),
    Alias("docker-compose", ("push",), ("push",), "docker-compose push --help",
          to_program="docker"),
    Alias("podman-compose", ("push",), ("push",), "podman-compose push", to_program="podman"),
    Alias("docker", ("buildx", "build"), ("push",), "docker buildx build --push", "--push"),
    Alias("docker", ("buildx", "bake"), ("push",), "docker buildx bake --push", "--push"),
    Alias("docker", ("build",), ("push",), "docker build --push (buildx)", "--push"),
    Alias("podman", ("image", "push"), ("push",), "podman-image-push(1)"),
    Alias("podman", ("manifest", "push"), ("push",), "podman-manifest-push(1)"),
    Alias("podman", ("compose", "push"), ("push",), "podman-compose push"),
    # helm uninstall --help: "Aliases: uninstall, del, delete, un".
    Alias("helm", ("un",), ("uninstall",), "helm uninstall --help (aliases)"),
    Alias("helm", ("del",), ("uninstall",), "helm uninstall --help (aliases)"),
    Alias("helm", ("delete",), ("uninstall",), "helm uninstall --help (aliases)"),
    # terraform destroy is "an alias for terraform apply -destroy" (terraform docs,
    # `terraform destroy`); the same for OpenTofu.
    Alias("terraform", ("apply",), ("destroy",), "terraform apply -destroy", "-destroy"),
    Alias("terraform", ("destroy",), ("apply", "-destroy"), "terraform destroy"),
    Alias("tofu", ("apply",), ("destroy",), "tofu apply -destroy", "-destroy"),
    Alias("tofu", ("destroy",), ("apply", "-destroy"), "tofu destroy"),
    # yarn 1 `yarn publish` and yarn 2+ `yarn npm publish` publish alike.
    Alias("yarn", ("npm", "publish"), ("publish",), "yarn npm publish (yarn 2+)"),
    Alias("yarn", ("publish",), ("npm", "publish"), "yarn publish (yarn 1)"),
)

_BY_PROGRAM: dict[str, list[Alias]] = {}
for _a in ALIASES:
    _BY_PROGRAM.setdefault(_a.program, []).append(_a)


def _base(word: str) -> str:
    return word.rsplit("/", 1)[-1] or word


_FALSE = frozenset({"false", "0", "f", "F", "FALSE", "False"})


def _has_option(rest: tuple[str, ...], option: str) -> bool:
    """A boolean option as Go's flag package (terraform) or getopt_long (docker)
    reads it: `-destroy`, `--destroy`, `-destroy=true`; not `-destroy=false`."""
    for w in rest:
        if w == "--":
            return False
        name, eq, value = w.partition("=")
        if name in (option, "-" + option) or (option.startswith("--") and name == option[1:]):
            if not eq or value not in _FALSE:
                return True
    return False


def _matches(argv: Sequence[str]) -> list[tuple[Alias, tuple[str, ...]]]:
    if not argv:
        return []
    rows = _BY_PROGRAM.get(_base(argv[0]))
    if rows is None:
        return []
    out = []
    for a in rows:
        n = len(a.spelling)
        if tuple(argv[1:1 + n]) != a.spelling:
            continue
        rest = tuple(argv[1 + n:])
        if a.option and not _has_option(rest, a.option):
            continue
        out.append((a, rest))
    return out


def canonical_views(argv: Sequence[str]) -> list[tuple[str, ...]]:
    """The argv respelled canonically, once per matching alias: ``(git, send-pack,
    origin, main)`` -> ``[(git, push, origin, main)]``. ``argv`` has its
    multiplexer's global options removed (the gate's normalized view); argv[0]
    keeps its spelling (a path stays a path)."""
    return [(a.to_program or argv[0], *a.canonical, *rest) for a, rest in _matches(argv)]


def canonical_action(key: str, argv: Sequence[str]) -> str | None:
    """The canonical action of a capability (for `explain`), or None when it is
    spelled canonically already: ``git send-pack`` -> ``git push``."""
    words = tuple(key.split(" "))
    argv = tuple(argv)
    tail: tuple[str, ...] = ()
    sub = words[1:]
    for i in range(1, len(argv) - len(sub) + 1):
        if argv[i:i + len(sub)] == sub:
            tail = argv[i + len(sub):]
            break
    found = _matches(words + tail)
    if not found:
        return None
    alias = found[0][0]
    return " ".join((alias.to_program or _base(words[0]), *alias.canonical))


# Irreversible actions (issue 20): a yes to one of these grants at most that exact
# command for that session, whatever the profile's rules say; a grant of the key
# never covers it. The same list as observe.toml's ask rules and strict.toml's
# deny rules (tests/ringfence/test_ask_grants.py checks it). Matched on the
# argv views of ``profiles.patterns.argv_views`` (global options removed,
# aliases respelled canonically), by the program's basename.
IRREVERSIBLE: tuple[tuple[str, ...], ...] = (
    ("git", "push"), ("npm", "publish"), ("pnpm", "publish"), ("yarn", "publish"),
    ("yarn", "npm", "publish"), ("cargo", "publish"), ("cargo", "yank"),
    ("twine", "upload"), ("poetry", "publish"), ("uv", "publish"), ("gem", "push"),
    ("terraform", "apply"), ("terraform", "destroy"), ("tofu", "apply"),
    ("tofu", "destroy"), ("kubectl", "delete"), ("helm", "uninstall"),
    ("helm", "delete"), ("gh", "release", "create"), ("gh", "release", "delete"),
    ("gh", "repo", "delete"), ("gh", "pr", "merge"), ("docker", "push"),
    ("podman", "push"), ("aws", "s3", "rm"),
)


# Programs that read files: on the host an allow rule covers them only while every
# path stays inside the project (ringfence/session/host_reads.py); exporters do not
# turn their allow rules into text rules that cannot say so.
READERS = frozenset({"ls", "cat", "head", "tail", "wc", "grep", "egrep", "fgrep", "rg",
                     "file", "stat", "du", "tree", "diff", "sed", "awk", "less", "more",
                     "nl", "sort", "uniq", "cut", "jq", "find", "git"})


def irreversible(views: Sequence[Sequence[str]]) -> bool:
    """Does any argv view start with an irreversible action?"""
    for v in views:
        if not v:
            continue
        head = (_base(v[0]), *v[1:])
        if any(tuple(head[:len(a)]) == a for a in IRREVERSIBLE):
            return True
    return False


__all__ = ["ALIASES", "Alias", "IRREVERSIBLE", "READERS", "canonical_action", "canonical_views",
           "irreversible"]
