"""git's destructive options and subcommand words: RF132 (delete) rows of the
option-effects table (classifier/effects_data.py merges them into TOOLS).

A grant of `git clean` from `git clean -n`, of `git stash` from `git stash
list`, of `git branch` from `git branch` or of `git checkout` from `git
checkout master` must not cover the forms that throw work away: each of those
is one-time, like `find -delete`. Sources: the git 2.39 manual pages named in
each row (the test checks each option against `git <cmd> -h`).

Row targets (besides effects_data.py's): ``always`` rows (no options) apply to
every use unless one of the tool's ``stop`` options is given (`git clean -n`);
``sub:A,B`` rows apply when the first operand is A or B (`git stash drop`);
``paths`` rows apply when an operand names files rather than a branch (git
checkout: `--`, `.`, a glob, a path with an extension, or two operands).
"""

from __future__ import annotations

import re

from .effects_rows import Row, Tool


def _r(options: str, target: str, why: str, kind: str = "delete") -> Row:
    return Row(frozenset(options.split()), kind, target, why)


def _s(text: str) -> frozenset[str]:
    return frozenset(text.split())


_H = _s("-h --help")

GIT_TOOLS: dict[str, Tool] = {
    # git-clean(1): removes untracked files; -n/--dry-run only lists them. Without
    # -f git refuses only while clean.requireForce is true (a setting), so every
    # use but -n counts.
    "git clean": Tool("git-clean(1) -n, --dry-run; -f, --force; -d; -x; -X", (
        _r("", "self", "deletes untracked files"),
    ), _s("-e --exclude"), _s("--dry-run --force --quiet --interactive --exclude"),
        stop=_H | _s("-n --dry-run")),
    # git-stash(1): clear and drop delete stash entries. (pop drops an entry only
    # after applying it cleanly, and refuses to overwrite local changes: the work
    # is then in the work tree, so pop stays the `git stash` capability.)
    "git stash": Tool("git-stash(1) clear, drop", (
        _r("", "sub:clear,drop", "deletes stash entries"),
    ), _s("-m --message --pathspec-from-file"), stop=_H),
    # git-branch(1): -d/--delete, -D (--delete --force), -M/-C (rename/copy even
    # over an existing branch), -f/--force (reset an existing branch)
    "git branch": Tool("git-branch(1) -d, -D, --delete, -M, -C, -f, --force", (
        _r("-d -D --delete -M -C -f --force", "self", "deletes or overwrites branches"),
    ), _s("-u --set-upstream-to --sort --format --column --points-at"),
        _s("--delete --force --move --copy --set-upstream-to --sort --format --column "
           "--points-at --list --all --remotes --show-current --edit-description"), stop=_H),
    # git-tag(1): -d/--delete deletes tags; -f/--force replaces an existing tag
    "git tag": Tool("git-tag(1) -d, --delete; -f, --force", (
        _r("-d --delete -f --force", "self", "deletes or replaces tags"),
    ), _s("-m --message -F --file -u --local-user --sort --format --points-at --cleanup"),
        _s("--delete --force --message --file --list"), stop=_H),
    # git-checkout(1): `git checkout [<tree-ish>] [--] <pathspec>...` overwrites the
    # files in the work tree, discarding local changes; -f/--force and
    # -m/--merge throw away local changes too; -B resets an existing branch.
    "git checkout": Tool("git-checkout(1) [<tree-ish>] [--] <pathspec>...; -f; -m; -B", (
        _r("-f --force -m --merge -B -p --patch --ours --theirs --pathspec-from-file "
           "--no-overlay", "self", "overwrites files in the work tree, discarding changes"),
        _r("", "paths", "overwrites the files in the work tree, discarding changes"),
    ), _s("-b -B --orphan --conflict --pathspec-from-file -t --track"),
        _s("--force --merge --patch --ours --theirs --pathspec-from-file --no-overlay "
           "--orphan --conflict --track --detach --quiet --progress"), stop=_H),
    # git-switch(1): --discard-changes, -f/--force, -C/--force-create
    "git switch": Tool("git-switch(1) --discard-changes, -f, --force, -C, --force-create", (
        _r("--discard-changes -f --force -C --force-create -m --merge", "self",
           "discards local changes or resets a branch"),
    ), _s("-c --create -C --force-create --orphan --conflict -t --track"),
        _s("--discard-changes --force --force-create --create --merge --orphan"), stop=_H),
    # git-restore(1): restores files in the work tree or the index, discarding changes
    "git restore": Tool("git-restore(1) git restore [<options>] <pathspec>...", (
        _r("", "self", "overwrites files, discarding their changes"),
    ), _s("-s --source --pathspec-from-file --conflict"), stop=_H),
    # git-reset(1): --hard, --merge, --keep change the work tree
    "git reset": Tool("git-reset(1) --hard, --merge, --keep", (
        _r("--hard --merge --keep", "self", "discards changes in the work tree"),
    ), _s("--pathspec-from-file"), _s("--hard --merge --keep --soft --mixed --quiet"),
        stop=_H),
    # git-worktree(1): remove deletes a work tree (-f: even with local changes); prune
    "git worktree": Tool("git-worktree(1) remove [-f]; prune", (
        _r("", "sub:remove,prune", "deletes a work tree or its records"),
    ), _s("--reason --expire"), stop=_H),
    # git-gc(1) --prune=<date>: prunes loose objects older than the date (now: all)
    "git gc": Tool("git-gc(1) --prune=<date>", (
        _r("--prune", "self", "deletes unreachable objects"),
    ), longs=_s("--prune --no-prune --aggressive --auto --quiet --force --keep-largest-pack"),
        stop=_H),
    "git prune": Tool("git-prune(1)", (_r("", "self", "deletes unreachable objects"),),
                      _s("--expire"), stop=_H | _s("-n --dry-run")),
    # git-reflog(1): expire and delete remove reflog entries (the way back to lost work)
    "git reflog": Tool("git-reflog(1) expire, delete", (
        _r("", "sub:expire,delete", "deletes reflog entries"),
    ), stop=_H | _s("-n --dry-run")),
    # git-update-ref(1): -d deletes the ref; `update-ref REF NEW` overwrites it;
    # git-symbolic-ref(1) -d
    "git update-ref": Tool("git-update-ref(1) -d <ref>; <ref> <newvalue>", (
        _r("", "self", "deletes or overwrites a ref"),
    ), _s("-m"), stop=_H),
    "git symbolic-ref": Tool("git-symbolic-ref(1) -d, --delete", (
        _r("-d --delete", "self", "deletes a symbolic ref"),
    ), _s("-m"), stop=_H),
    # git-remote(1): remove/rm deletes a remote and its branches; set-url redirects
    # every later fetch and push
    "git remote": Tool("git-remote(1) remove, rm, set-url, rename", (
        _r("", "sub:remove,rm,rename", "deletes a remote and its remote-tracking branches"),
        _r("", "sub:set-url", "changes where later pushes and fetches go", "write"),
    ), stop=_H),
    # git-submodule(1): deinit -f discards a submodule's work tree
    "git submodule": Tool("git-submodule(1) deinit", (
        _r("", "sub:deinit", "deletes a submodule's work tree"),
    ), stop=_H),
    # git-read-tree(1) -u --reset / git-checkout-index(1) -f overwrite work tree files
    "git checkout-index": Tool("git-checkout-index(1) -f, --force", (
        _r("-f --force", "self", "overwrites files in the work tree"),
    ), stop=_H),
    "git read-tree": Tool("git-read-tree(1) -u, --reset", (
        _r("-u --reset", "self", "overwrites files in the work tree"),
    ), _s("--prefix --index-output"), stop=_H),
}


# `git checkout`'s operands that are paths (effects_scan.py's ``paths`` target)
_FILE_LIKE = re.compile(r"[*?\[]|^\.{1,2}(/|$)|^:|/$|\.[A-Za-z0-9]{1,8}$|(^|/)(Makefile|"
                        r"GNUmakefile|Dockerfile|Containerfile|LICENSE|COPYING|README|"
                        r"CHANGELOG|NEWS|AUTHORS|VERSION|Gemfile|Rakefile|Procfile|"
                        r"Vagrantfile|Jenkinsfile|Justfile|Pipfile|Brewfile)$")
_VERSION = re.compile(r"v?\d+(\.\d+)+")


def checkout_paths(inv, operands: list) -> list:
    """The operands of `git checkout` that are paths, as far as the words show:
    after `--`, a second operand (tree-ish then paths), `.`, a glob, a pathspec
    magic, a word with a file extension; a word decided at run time may be one."""
    args = inv.argv[inv.subcommand_at:]
    for k, w in enumerate(args):
        if w.static and w.value == "--":
            rest = list(args[k + 1:])
            return rest if rest else []
    if len(operands) > 1:
        return operands[1:]
    return [w for w in operands if not w.static or (
        _FILE_LIKE.search(w.value) and not _VERSION.fullmatch(w.value))]
