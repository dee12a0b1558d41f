"""The relay must start wherever ringfence and its interpreter are installed.

Every sandbox gets a private /tmp and a masked /run, so a checkout or venv there
is invisible inside. The relay script is staged in the bound runtime dir (see
test_bwrap_render), and an interpreter installed under a masked path is bound back
in read-only — only for profiles that need the relay.
"""

from __future__ import annotations

from ringfence.rfcore.records import replace

from ringfence.compiler.compile import compile_profile
from ringfence.compiler.spec import Proxy, RoBind
from ringfence.profiles.load import load_profile

from .fakehost import WS, fake_host


def _spec(name: str, prefix: str):
    profile = load_profile(name)
    host = replace(fake_host(profile), python_prefix=prefix)
    return compile_profile(profile, WS, host)


def test_a_masked_interpreter_prefix_is_bound_back_for_the_relay():
    for masked in ("/tmp/venvs/py311", "/run/user/1000/py"):
        ops = list(_spec("build", masked).ops)
        bind = RoBind(masked, masked)
        assert bind in ops
        proxy_at = next(i for i, op in enumerate(ops) if isinstance(op, Proxy))
        assert ops.index(bind) < proxy_at


def test_no_bind_back_when_not_masked_or_no_relay():
    build = list(_spec("build", "/usr").ops)
    assert RoBind("/usr", "/usr") not in build
    strict = list(_spec("strict", "/tmp/venvs/py311").ops)     # no network, no relay
    assert not any(isinstance(op, RoBind) and op.src == "/tmp/venvs/py311" for op in strict)


def test_the_relay_is_staged_as_bytecode_only_when_exactly_current(tmp_path):
    import os
    import py_compile
    import shutil
    from importlib.util import cache_from_source

    from ringfence.compiler.backends.bwrap import RELAY
    from ringfence.compiler.execute import _relay_artifact

    src = tmp_path / "relay.py"
    shutil.copyfile(RELAY, src)
    assert _relay_artifact(str(src)) == str(src)              # no bytecode yet
    py_compile.compile(str(src), doraise=True)
    cached = cache_from_source(str(src))
    assert _relay_artifact(str(src)) == cached                # current: bytecode
    st = os.stat(src)
    os.utime(src, (st.st_atime, st.st_mtime + 10))            # the source changed
    assert _relay_artifact(str(src)) == str(src)              # stale: source
