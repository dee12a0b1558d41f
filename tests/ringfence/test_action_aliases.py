"""Issue 11 §5: deny and ask rules match actions, not spellings.

`git send-pack` pushes like `git push`; under Strict (`git push **` denied) and
Build (asked) it must not reach the remote. Real bwrap; the assertion is on the
host side: the bare repository received no branch. The same for a push hidden
in a value that bash evaluates arithmetically (issue 11 §2).
"""

from __future__ import annotations

import shutil
import subprocess
import sys

import pytest

from tests.ringfence.pushrepo import branches, pushable_workspace

from ringfence.classifier import classify
from ringfence.session.gate import decide
from ringfence.profiles.load import load_profile
from ringfence.rfcore.actions import ALIASES, canonical_action, canonical_views

CLI = [sys.executable, "-m", "ringfence"]
PUSHES = ["git send-pack ./inrepo.git HEAD:refs/heads/b1",
          "git -C . send-pack ./inrepo.git HEAD:refs/heads/b1",
          "x='a[$(git push ./inrepo.git HEAD:refs/heads/b1)]'; (( x ))"]


@pytest.fixture
def ws(tmp_path):
    return pushable_workspace(tmp_path)


@pytest.mark.skipif(not shutil.which("git"), reason="needs git")
def test_send_pack_really_pushes_without_ringfence(ws):
    path, env = ws
    subprocess.run(["bash", "-c", PUSHES[0]], cwd=path, env=env, check=True,
                   capture_output=True)
    assert branches(path).strip() == "b1"


@pytest.mark.sandbox
@pytest.mark.skipif(not shutil.which("git"), reason="needs git")
@pytest.mark.parametrize("command", PUSHES)
@pytest.mark.parametrize("profile,status", [("strict", (77,)), ("build", (75,))])
def test_push_spelled_otherwise_is_denied_or_held_and_nothing_is_pushed(ws, command, profile,
                                                                         status):
    path, env = ws
    r = subprocess.run([*CLI, "run", "-p", profile, "-c", command], cwd=path, env=env,
                       capture_output=True, text=True, timeout=60)
    if "(( x ))" in command and profile == "strict":
        status = (75, 77)     # held: the push is hidden in a value, not denied by name
    assert r.returncode in status, r.stderr
    assert branches(path) == ""              # host side: nothing reached the repository


@pytest.mark.parametrize("command,action", [
    ("git send-pack ../r.git main", "git push"),
    ("git http-push https://h/r.git main", "git push"),
    ("docker image push registry/x:1", "docker push"),
    ("podman image push registry/x:1", "podman push"),
    ("helm un rel", "helm uninstall"),
    ("helm del rel", "helm uninstall"),
    ("npm pub", "npm publish"),
    ("terraform apply -destroy -auto-approve", "terraform destroy"),
    ("docker buildx build --push -t x .", "docker push"),
    ("docker-compose push web", "docker push"),
])
def test_build_holds_and_strict_denies_every_alias(command, action):
    v = classify(command)
    cap = v.capabilities[0]
    assert canonical_action(cap.key, cap.argv) == action
    assert decide(v, load_profile("build"), context="sandbox").decision == "ask"
    assert decide(v, load_profile("strict"), context="sandbox").decision == "deny"


@pytest.mark.parametrize("command", ["git status", "docker image ls", "helm list", "npm pack"])
def test_other_subcommands_are_not_aliases(command):
    v = classify(command)
    cap = v.capabilities[0]
    assert canonical_action(cap.key, cap.argv) is None
    assert decide(v, load_profile("build"), context="sandbox").decision == "allow"


def test_an_option_alias_needs_its_option_set():
    assert canonical_views(("terraform", "apply", "-destroy=false")) == []
    assert canonical_views(("terraform", "apply", "--", "-destroy")) == []
    assert canonical_views(("terraform", "apply", "-destroy=true")) == [
        ("terraform", "destroy", "-destroy=true")]


def test_an_allow_rule_does_not_see_through_an_alias():
    from ringfence.profiles.patterns import argv_views

    views = argv_views("git send-pack", ["git", "send-pack", "r"])
    assert ("git", "push", "r") not in views
    assert ("git", "push", "r") in argv_views("git send-pack", ["git", "send-pack", "r"],
                                              aliases=True)


def test_every_alias_row_names_its_source_and_changes_the_spelling():
    for a in ALIASES:
        assert a.source
        assert a.spelling != a.canonical or a.option or a.to_program
        argv = (a.program, *a.spelling, *((a.option,) if a.option else ()))
        assert canonical_views(argv), a
