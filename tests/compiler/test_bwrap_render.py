"""The bwrap backend: golden argv per built-in under the fixed fake host."""

from __future__ import annotations

import pytest

from ringfence.compiler.backends.bwrap import RELAY, final_env, render
from ringfence.compiler.compile import compile_profile
from ringfence.profiles.load import load_profile

from .fakehost import WS, fake_host
from .test_compile import check_golden

ENV = {"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8", "TERM": "xterm", "HOME": "/home/agent",
       "GITHUB_TOKEN": "ghp_secret", "USER": "agent"}


def _spec(name):
    profile = load_profile(name)
    return compile_profile(profile, WS, fake_host(profile))


@pytest.mark.parametrize("name", ("observe", "build", "strict", "host-assisted"))
def test_builtin_renders_to_its_golden_argv(name):
    argv = render(_spec(name), ["make", "test"], env=ENV, seccomp_fd=7, status_fd=9,
                  proxy_dir="/run/user/1000/ringfence-X", python="/usr/bin/python3",
                  handoff_fd=8)
    check_golden(f"bwrap-{name}.json", argv)


def test_strict_argv_shape():
    argv = render(_spec("strict"), ["true"], env=ENV, seccomp_fd=7)
    assert argv[:2] == ["bwrap", "--unshare-all"]
    for flag in ("--unshare-user", "--disable-userns", "--die-with-parent", "--new-session",
                 "--clearenv"):
        assert flag in argv
    assert argv[argv.index("--cap-drop") + 1] == "ALL"
    assert argv[argv.index("--seccomp") + 1] == "7"
    assert "--share-net" not in argv
    assert argv[-2:] == ["--", "true"]
    # passed values never include a credential the profile did not opt into
    assert "ghp_secret" not in argv


def test_execution_mode_keeps_values_out_of_argv():
    spec = _spec("build")
    argv = render(spec, ["true"], env=ENV, seccomp_fd=7, inline_env=False,
                  proxy_dir="/x", python="/py", handoff_fd=8)
    assert "--clearenv" not in argv and "--setenv" not in argv
    env = final_env(spec, ENV)
    assert env["LANG"] == "C.UTF-8" and "GITHUB_TOKEN" not in env
    assert env["HTTPS_PROXY"] == "http://127.0.0.1:3128"
    # one filter, applied by bwrap to every process in the sandbox (pid 1, the
    # launcher, the command): none holds a right the command lacks
    assert argv.count("--seccomp") == 1 and argv[argv.index("--seccomp") + 1] == "7"
    # the relay runs from the bound runtime dir, never from the checkout (which may
    # be under /tmp, private inside the sandbox)
    inner_relay = "/tmp/.ringfence-proxy/relay.py"
    assert RELAY not in argv
    relay_at = argv.index(inner_relay)
    assert argv[relay_at - 4:relay_at + 1] == ["--", "/py", "-I", "-S", inner_relay]
    assert argv[relay_at + 1:] == ["--listen", "127.0.0.1:3128", "--handoff-fd", "8",
                                   "--", "true"]
    at = argv.index("/x")
    assert argv[at - 1:at + 2] == ["--ro-bind", "/x", "/tmp/.ringfence-proxy"]


def test_host_profile_has_no_bwrap_rendering():
    with pytest.raises(ValueError):
        render(_spec("host"), ["true"])
