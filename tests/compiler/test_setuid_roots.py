"""No setuid or setgid file is ever left by a sandbox in a writable root that is
not staged (a profile's extra ``writable`` root, the tooling dir), where no apply
strips privilege: the seccomp filter refuses the mode (issue 19 item 7, second
review). Attacked for real through ``ringfence run``, checked on the host; as root
and as the unprivileged user (scripts/test-unprivileged.sh)."""

from __future__ import annotations

import os
import shutil
import stat

import pytest

from tests.compiler.sandbox_util import make_box

pytestmark = [pytest.mark.sandbox,
              pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap is needed")]


@pytest.fixture
def box():
    b = make_box()
    yield b
    shutil.rmtree(b.root, ignore_errors=True)


def test_no_setuid_program_is_left_in_an_extra_writable_root(box):
    extra = box.outside
    profile = box.root / "extra.toml"
    profile.write_text('extends = "build"\n[filesystem]\n'
                       f'writable = ["{{workspace}}", "{{tooling}}", "{extra}"]\n')
    script = box.root / "s.sh"
    script.write_text(
        f"O={extra}; TOOLING=$(dirname \"$PIP_CACHE_DIR\")\n"
        "cp /bin/true $O/a; chmod 6755 $O/a; chmod u+s $O/a; chmod g+s $O\n"
        "install -m 4755 /bin/true $O/b\n"
        "python3 -c 'import os,sys; [os.close(os.open(p, os.O_CREAT|os.O_WRONLY, 0o4755)) "
        "for p in sys.argv[1:]]' $O/c $TOOLING/c\n"
        "python3 -c 'import os,sys; os.mknod(sys.argv[1], 0o100000|0o2755)' $O/d\n"
        "cp /bin/true $TOOLING/e; chmod 4755 $TOOLING/e\n"
        "exit 0\n")
    r = box.run(str(profile), "--", "bash", str(script))
    assert r.returncode == 0, r.stderr
    assert (extra / "a").exists(), r.stderr                  # the run did write there
    tooling = box.state / "cache" / "tooling"
    found = []
    for top in (extra, tooling):
        for dirpath, dirs, files in os.walk(top):
            for name in dirs + files + ["."]:
                st = os.lstat(os.path.join(dirpath, name))
                if st.st_mode & (stat.S_ISUID | stat.S_ISGID):
                    found.append(os.path.join(dirpath, name))
    assert found == [], found
