"""compile_profile is pure: golden specs per built-in under a fixed fake host."""

from __future__ import annotations

import json
import os
from ringfence.rfcore.records import replace
from pathlib import Path

import pytest

from ringfence.compiler.compile import compile_profile, looks_like_credential
from ringfence.compiler.spec import (Stage, Bind, DevNullOver, PassEnv, Proxy, RoBind, Rlimit,
                           Seccomp, SetEnv, Tmpfs)
from ringfence.profiles.load import load_profile
from ringfence.profiles.model import Env, Filesystem, Limits, Network, Profile
from ringfence.rfcore.errors import SandboxError

from .fakehost import HOME, WS, fake_host

GOLDEN = Path(__file__).parent / "golden"
BUILTINS = ("observe", "build", "strict", "host-assisted", "host")
REGEN = os.environ.get("RINGFENCE_REGEN_GOLDEN") == "1"


def check_golden(name: str, data) -> None:
    path = GOLDEN / name
    text = json.dumps(data, indent=2, sort_keys=True) + "\n"
    if REGEN:
        path.write_text(text)
    assert path.exists(), f"missing golden {path}; regenerate with RINGFENCE_REGEN_GOLDEN=1"
    assert json.loads(path.read_text()) == data


@pytest.mark.parametrize("name", BUILTINS)
def test_builtin_profile_compiles_to_its_golden_spec(name):
    profile = load_profile(name)
    spec = compile_profile(profile, WS, fake_host(profile))
    data = spec.to_json()
    data["digest"] = spec.digest()
    check_golden(f"compile-{name}.json", data)


def test_compile_is_deterministic_and_digest_tracks_content():
    profile = load_profile("strict")
    a = compile_profile(profile, WS, fake_host(profile))
    b = compile_profile(profile, WS, fake_host(profile))
    assert a == b and a.digest() == b.digest()
    other = compile_profile(profile, WS, fake_host(profile, env_names=("PATH",)))
    assert other.digest() != a.digest()


def _ops(name: str):
    profile = load_profile(name)
    return compile_profile(profile, WS, fake_host(profile)).ops


def test_strict_masks_credentials_and_workspace_secrets_after_the_binds():
    ops = list(_ops("strict"))
    bind_at = ops.index(Bind(WS, WS))
    # the home is an empty tmpfs before every bind; ~/.ssh and ~/.netrc are gone
    # with it (no mask needed), the workspace under the home is bound after it
    assert ops.index(Tmpfs(HOME)) < bind_at
    assert Tmpfs(f"{HOME}/.ssh") not in ops and DevNullOver(f"{HOME}/.netrc") not in ops
    # a symlinked credential store is masked at its real location, outside the home
    assert Tmpfs("/data/agent-aws") in ops and ops.index(Tmpfs("/data/agent-aws")) > bind_at
    for secret in (f"{WS}/.env", f"{WS}/config/.env.local", f"{WS}/certs/server.pem"):
        assert ops.index(DevNullOver(secret)) > bind_at
    assert Proxy not in {type(o) for o in ops}
    assert Seccomp(deny_unix_sockets=True) in ops


def test_observe_binds_nothing_writable():
    ops = _ops("observe")
    assert not [o for o in ops if isinstance(o, Bind)]
    assert Tmpfs("/tmp") in ops and RoBind("/", "/") in ops
    assert DevNullOver(f"{WS}/.env") not in ops   # observe does not hide workspace secrets


def test_the_workspace_is_staged_and_nothing_is_rebound_read_only():
    ops = list(_ops("build"))
    # git must be able to write .git/config itself (git init, git config): the
    # overlay stages every write instead, and the host-obeyed registry judges them.
    assert Stage(WS) in ops and ops.index(Stage(WS)) > ops.index(Bind(WS, WS))
    assert not [o for o in ops if isinstance(o, RoBind) and o.dst.startswith(WS + "/")]
    assert not [o for o in ops if isinstance(o, Bind) and o.dst != WS
                and o.dst.startswith(WS + "/")]


def test_observe_stages_nothing():
    assert not [o for o in _ops("observe") if isinstance(o, Stage)]


def test_build_has_proxy_env_and_tooling_cache_vars():
    ops = _ops("build")
    proxy = [o for o in ops if isinstance(o, Proxy)][0]
    assert "pypi.org" in proxy.allow and "169.254.169.254" in proxy.deny
    env = {o.name: o.value for o in ops if isinstance(o, SetEnv)}
    for var in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy",
                "all_proxy"):
        assert env[var] == "http://127.0.0.1:3128"
    assert env["NO_PROXY"] == env["no_proxy"] == "localhost,127.0.0.1,::1"
    tooling = f"{HOME}/.cache/ringfence/tooling"
    assert env["PIP_CACHE_DIR"] == f"{tooling}/pip" and env["GOCACHE"] == f"{tooling}/go-build"
    assert Bind(tooling, tooling) in ops
    assert env["TMPDIR"] == "/tmp" and env["HOME"] == HOME
    strict_env = {o.name for o in _ops("strict") if isinstance(o, SetEnv)}
    assert not strict_env & {"HTTP_PROXY", "http_proxy", "PIP_CACHE_DIR"}


def test_credentials_are_not_passed_without_opt_in():
    base = Profile("t", filesystem=Filesystem(writable=("{workspace}",)),
                   env=Env(pass_=("*",)))
    spec = compile_profile(base, WS, fake_host(base))
    passed = {o.name for o in spec.ops if isinstance(o, PassEnv)}
    assert "GITHUB_TOKEN" not in passed and "AWS_SECRET_ACCESS_KEY" not in passed
    assert {"LANG", "TERM", "PATH"} <= passed
    assert {n.code for n in spec.notes} == {"RF610"}
    opted = replace(base, env=Env(pass_=("*",), allow_credentials=("GITHUB_TOKEN",)))
    spec = compile_profile(opted, WS, fake_host(opted))
    passed = {o.name for o in spec.ops if isinstance(o, PassEnv)}
    assert "GITHUB_TOKEN" in passed and "AWS_SECRET_ACCESS_KEY" not in passed


@pytest.mark.parametrize("name,expected", [
    ("GITHUB_TOKEN", True), ("AWS_SECRET_ACCESS_KEY", True), ("SSH_AUTH_SOCK", True),
    ("DB_PASSWORD", True), ("OPENAI_API_KEY", True), ("LANG", False), ("TERM", False),
    ("KEYBOARD_LAYOUT", False), ("PATH", False), ("HOME", False)])
def test_credential_names(name, expected):
    assert looks_like_credential(name) is expected


def test_writable_symlink_to_outside_is_refused():
    profile = Profile("t", filesystem=Filesystem(writable=("{workspace}", "{workspace}/out")))
    disk = {WS: ("dir", WS), f"{WS}/out": ("dir", "/etc")}
    with pytest.raises(SandboxError, match="RF603"):
        compile_profile(profile, WS, fake_host(profile, disk=disk, links={f"{WS}/out"}))
    inside = {WS: ("dir", WS), f"{WS}/out": ("dir", f"{WS}/build/out")}
    spec = compile_profile(profile, WS, fake_host(profile, disk=inside, links={f"{WS}/out"}))
    # inside the staged workspace: not bound on its own (it would bypass the stage)
    assert Bind(f"{WS}/build/out", f"{WS}/build/out") not in spec.ops
    assert "RF646" in [n.code for n in spec.notes]


def test_missing_workspace_is_refused_and_missing_roots_are_noted():
    profile = Profile("t", filesystem=Filesystem(writable=("{workspace}", "{workspace}/gone")))
    with pytest.raises(SandboxError, match="RF609"):
        compile_profile(profile, WS, fake_host(profile, disk={}))
    spec = compile_profile(profile, WS, fake_host(profile, disk={WS: ("dir", WS)}))
    assert [n.code for n in spec.notes] == ["RF611"]


def test_limits_become_rlimits_and_proxy_without_allowlist_is_no_network():
    profile = Profile("t", limits=Limits(memory_mb=512, pids=64, file_size_mb=10),
                      network=Network(mode="proxy"))
    spec = compile_profile(profile, WS, fake_host(profile))
    assert spec.of(Rlimit) == [Rlimit("as", 512 << 20), Rlimit("fsize", 10 << 20),
                               Rlimit("nproc", 64)]
    assert spec.proxy is None and [n.code for n in spec.notes] == ["RF613"]


def test_host_profile_compiles_to_no_sandbox():
    profile = load_profile("host")
    spec = compile_profile(profile, WS, fake_host(profile))
    assert spec.sandboxed is False and spec.ops == () and spec.notes[0].code == "RF612"


def test_unprobed_path_is_a_bug_not_a_silent_missing():
    profile = load_profile("strict")
    host = fake_host(profile)
    with pytest.raises(KeyError, match="not probed"):
        compile_profile(profile, "/elsewhere", host)

