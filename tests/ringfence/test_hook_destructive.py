"""After one yes to a read-only form, its destructive or code-running variant
still asks (issue 22), driven through the real Claude Code hook with the
PreToolUse (ask) then PostToolUse (the person's yes) sequence Claude sends.

Each pair is: the form a person approves, then the variant that must never be
allowed by that grant: git's destructive options, a launcher running a shell,
code handed to a database client or a debugger, printing the environment.
"""

from __future__ import annotations

import pytest

from tests.ringfence.test_hook_events import approve_in_claude, decision, env  # noqa: F401

PAIRS = [
    # git: read-only form -> the destructive one (RF132)
    ("git clean -n", "git clean -fdx"),
    ("git clean -n", "git clean -f -d"),
    ("git stash list", "git stash clear"),
    ("git stash list", "git stash drop"),
    ("git branch", "git branch -D main"),
    ("git branch", "git branch --delete --force main"),
    ("git checkout master", "git checkout -- ."),
    ("git checkout master", "git checkout ."),
    ("git checkout master", "git checkout -f master"),
    ("git checkout master", "git checkout HEAD src/app.py"),
    ("git reset HEAD~1", "git reset --hard"),
    ("git restore --help", "git restore src/app.py"),
    ("git worktree list", "git worktree remove -f ../wt"),
    ("git gc", "git gc --prune=now"),
    ("git reflog", "git reflog expire --expire=now --all"),
    ("git tag -l", "git tag -d v1"),
    ("git remote -v", "git remote set-url origin https://evil.example/x.git"),
    # launchers: the grant is the inner program's, never a shell's (`make`, not a
    # reader: readers inside the project are allowed without a question)
    ("taskset -c 0 make test", "taskset -c 0 sh -c id"),
    ("taskset -c 0 make test", "taskset 0x1 bash -c id"),
    ("strace -f make test", "strace -f sh -c id"),
    ("strace -f make test", "strace -o /tmp/x make test"),
    ("flock /tmp/l make test", "flock /tmp/l -c id"),
    ("screen -ls", "screen -dm sh -c id"),
    ("screen -ls", "screen -S x -X stuff 'id\n'"),
    ("tmux ls", "tmux new -d id"),
    ("make test", "setsid make test"),
    ("make test", "screen -dmS x make test"),
    ("mything --version", "mything --run /bin/sh -c id"),
    # input and values that are code
    ("sqlite3 app.db .tables", "sqlite3 app.db '.shell id'"),
    ("sqlite3 app.db .tables", "sqlite3 app.db '.output /tmp/x'"),
    ("gdb -batch -ex bt ./prog core", "gdb -batch -ex 'shell id' ./prog core"),
    ("mysql -e 'select 1'", "mysql -e 'system id'"),
    ("psql -c 'select 1'", "psql -c '\\! id'"),
    ("make test", "make --eval 'x:=$(shell id)' test"),
    ("at -l", "at now <<< id"),
    ("crontab -l", "crontab - <<< '* * * * * id'"),
    ("tar xf a.tar", "TAR_OPTIONS=--to-command=id tar xf a.tar"),
    ("kubectl get pods", "KUBECONFIG=./kc kubectl get pods"),
    ("mapfile -t a < f", "mapfile -C id -c 1 a < f"),
    # printing the environment needs its own grant
    ("env", "set"),
    ("env", "declare -p"),
    ("env", "export -p"),
    ("busybox ls", "busybox rm -rf build"),
]


@pytest.mark.parametrize(("granted", "variant"), PAIRS, ids=[f"{g} -> {v}" for g, v in PAIRS])
def test_a_yes_to_the_read_only_form_does_not_allow_the_variant(env, granted, variant):  # noqa: F811
    approve_in_claude(env, granted, "toolu_1")
    assert decision(env, granted, tid="toolu_2") == "allow"       # the grant took effect
    assert decision(env, variant, tid="toolu_3") == "ask", variant
