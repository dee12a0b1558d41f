"""Issue 22's follow-up rows (i22c): options, operands, names and variables that make
a program run code or write a file, which used to pass as plain capabilities.

Each row: the command is one_time with the code that says why (and the finding
names what happens), and a close harmless neighbour stays what it was. Where the
program is installed, the row is run for real: the marker M (or the file it
writes, or the directory it deletes) must appear on this side, so the row is not
a guess about the program. Programs that are not installed are skipped, with the
reason.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys

import pytest

from ringfence.classifier import classify
from tests.classifier.test_launchers import _bash, _runs

SH_MARK = "echo ran > M"

# (command, code, a word the finding's message must contain)
ONE_TIME = [
    # pytest: writes, a deleted directory, plugins, configs, the debugger
    ("pytest --junitxml=out.xml", "RF131", "out.xml"),
    ("pytest --junit-xml out.xml -q", "RF131", "out.xml"),
    ("pytest --log-file=t.log", "RF131", "t.log"),
    ("pytest --debug", "RF131", "debug log"),
    ("pytest --basetemp=/home/me", "RF132", "removes the directory"),
    ("pytest -p myplugin", "RF133", "plugin"),
    ("pytest -qp myplugin", "RF133", "plugin"),
    ("pytest -c /tmp/other.ini", "RF133", "config file"),
    ("pytest --config-file=ci.ini", "RF133", "config file"),
    ("pytest --rootdir=/etc", "RF131", ".pytest_cache"),
    ("pytest -o addopts='-p evil'", "RF133", "addopts"),
    ("pytest -o cache_dir=/tmp/c", "RF131", "cache_dir"),
    ("pytest -o some_plugin_key=1", "RF133", "plugin"),
    ("pytest --pdb", "RF133", "standard input"),
    ("pytest --pdbcls=evil:Pdb", "RF133", "module"),
    ("py.test --junitxml=x.xml", "RF131", "x.xml"),
    ("python3 -m pytest --junitxml=x.xml", "RF131", "x.xml"),
    ("uv run pytest -p evil", "RF133", "plugin"),
    # python -m modules whose arguments or input are code, or that write
    ("python3 -m timeit 'import os'", "RF108", "timeit"),
    ("python -mtimeit -s 'import os' 'pass'", "RF108", "-s"),
    ("python3 -m pdb x.py", "RF116", "standard input"),
    ("python3 -m pdb -c continue x.py", "RF108", "pdb -c"),
    ("python3 -m code", "RF116", "standard input"),
    ("python3 -m cProfile -o out.prof x.py", "RF131", "out.prof"),
    ("python3 -m profile -o out.prof x.py", "RF131", "out.prof"),
    ("python3 -m trace --count x.py", "RF131", ".cover"),
    ("python3 -m trace -C covdir -t x.py", "RF131", "covdir"),
    # versioned interpreter names, matched by pattern
    ("perl5.36 -e 'system 1'", "RF108", "-e"),
    ("perl5.36-x86_64-linux-gnu -e 1", "RF108", "-e"),
    ("python3.13t -c 1", "RF108", "-c"),
    ("ruby3.1 -e 1", "RF108", "-e"),
    ("php8.2 -r 1", "RF108", "-r"),
    ("lua5.4 -e 1", "RF108", "-e"),
    ("guile-3.0 -c 1", "RF108", "-c"),
    ("zsh5 -c id", "RF107", "-c"),
    ("ipython -c 'import os'", "RF108", "-c"),
    ("ipython3 --InteractiveShellApp.exec_lines='[1]'", "RF108", "exec_lines"),
    ("ipython", "RF116", "standard input"),
    ("jshell", "RF116", "standard input"),
    ("jshell x.jsh", "RF116", "standard input"),
    ("mongosh --eval 'db.x.drop()'", "RF108", "--eval"),
    ("mongo db --eval 1", "RF108", "--eval"),
    ("mongosh mongodb://h/db", "RF116", "standard input"),
    # cmake, ctest
    ("cmake -C cache.cmake -S . -B b", "RF133", "initial-cache"),
    ("cmake -Ccache.cmake .", "RF133", "initial-cache"),
    ("ctest -S dash.cmake", "RF133", "dash.cmake"),
    ("ctest -SP dash.cmake", "RF133", "dash.cmake"),
    ("ctest --build-and-test s b --build-generator Ninja --test-command ./t", "RF133", "./t"),
    ("ctest -O ctest.log", "RF131", "ctest.log"),
    ("ctest --output-junit j.xml", "RF131", "j.xml"),
    # cargo --config
    ("cargo --config 'target.x86_64-unknown-linux-gnu.runner=\"sh\"' run", "RF133", "runner"),
    ("cargo build --config build.rustc-wrapper=/tmp/w", "RF133", "rustc-wrapper"),
    ("cargo +nightly --config extra.toml build", "RF133", "config file"),
    # npm, pnpm, yarn configuration
    ("npm config set registry http://evil", "RF131", "~/.npmrc"),
    ("npm set script-shell /tmp/x", "RF131", "~/.npmrc"),
    ("npm c set ignore-scripts false", "RF131", "~/.npmrc"),
    ("npm config --location=project set registry x", "RF131", ".npmrc"),
    ("npm config delete registry", "RF131", "~/.npmrc"),
    ("npm pkg set scripts.postinstall=x", "RF131", "package.json"),
    ("pnpm config set registry x", "RF131", "pnpm/rc"),
    ("yarn config set yarnPath ./x.js", "RF131", ".yarnrc.yml"),
    # openssl, gpg
    ("openssl engine -t dynamic -pre SO_PATH:/tmp/e.so", "RF133", "engine"),
    ("openssl engine pkcs11", "RF133", "engine"),
    ("openssl x509 -in c.pem -provider-path /tmp -provider evil", "RF133", "provider"),
    ("openssl req -new -config csr.cnf -key k.pem", "RF133", "config file"),
    ("gpg --agent-program /tmp/a --list-keys", "RF133", "/tmp/a"),
    ("gpg --photo-viewer 'sh -c id' --list-keys", "RF133", "photo-viewer"),
    ("gpg --exec-path /tmp --list-keys", "RF133", "exec-path"),
    ("gpg --homedir ./g -k", "RF133", "./g"),
    ("gpg -o ~/.bashrc -d x.gpg", "RF131", ".bashrc"),
    ("gpg-agent --pinentry-program /tmp/p --daemon", "RF133", "/tmp/p"),
    ("gpg-agent --daemon /bin/sh", "RF133", "/bin/sh"),
    # sed and awk programs in files
    ("sed -f script.sed in.txt", "RF111", "script.sed"),
    ("sed -nf script.sed in.txt", "RF111", "script.sed"),
    ("sed --fil=script.sed in.txt", "RF111", "script.sed"),
    ("awk -f prog.awk in.txt", "RF110", "prog.awk"),
    ("gawk -E prog.awk in.txt", "RF110", "prog.awk"),
    ("gawk -i lib.awk '{print}' in.txt", "RF110", "lib.awk"),
    ("mawk -W exec prog.awk in.txt", "RF110", "prog.awk"),
    ("mawk -We prog.awk", "RF110", "prog.awk"),
    ("echo x | mawk -W exec prog.awk", "RF110", "prog.awk"),
    # git trace files, nohup.out
    ("GIT_TRACE=/tmp/t git status", "RF131", "/tmp/t"),
    ("GIT_TRACE_PACKET=/tmp/p git fetch", "RF131", "/tmp/p"),
    ("GIT_TRACE2_EVENT=/tmp/e git status", "RF131", "/tmp/e"),
    ("GIT_TRACE2=af_unix:/tmp/s git status", "RF131", "af_unix"),
    ("GIT_TRACE_SETUP=$HOME/x git status", "RF131", "$HOME/x"),
    ("env GIT_TRACE_PERFORMANCE=/tmp/p git log", "RF131", "/tmp/p"),
    ("export GIT_TRACE=/tmp/t", "RF131", "/tmp/t"),
    ("nohup make", "RF129", "nohup.out"),
    ("nohup make 2>/dev/null", "RF129", "nohup.out"),
    ("nohup make &", "RF129", "nohup.out"),
    ("redis-cli --rdb dump.rdb", "RF131", "dump.rdb"),
]

# harmless neighbours: (command, verdict, keys)
NEIGHBOURS = [
    ("pytest -x --tb=short", "capability", ["pytest"]),
    ("pytest -p no:cacheprovider -q", "capability", ["pytest"]),
    ("pytest -pno:cacheprovider", "capability", ["pytest"]),
    ("pytest --junitxml=/dev/null", "capability", ["pytest"]),
    ("pytest --rootdir=. tests", "capability", ["pytest"]),
    ("pytest -o xfail_strict=true", "capability", ["pytest"]),
    ("pytest -o addopts=''", "capability", ["pytest"]),
    ("python3 -m pytest -q tests", "capability", ["python3"]),
    ("python3 -m timeit", "capability", ["python3"]),
    ("python3 -m timeit -h", "capability", ["python3"]),
    ("python3 -m cProfile -s time x.py -o y", "capability", ["python3"]),
    ("python3 -m trace --trace x.py", "capability", ["python3"]),
    ("python3 -m doctest x.txt", "capability", ["python3"]),
    ("python3 -m http.server 8000", "capability", ["python3"]),
    ("perl5.36.0 x.pl", "capability", ["perl5.36.0"]),
    ("python3.11 x.py", "capability", ["python3.11"]),
    ("ruby3.1 x.rb", "capability", ["ruby3.1"]),
    ("perldoc -f open", "capability", ["perldoc"]),
    ("python3-config --cflags", "capability", ["python3-config"]),
    ("ipython x.py", "capability", ["ipython"]),
    ("mongosh x.js", "capability", ["mongosh"]),
    ("jshell --version", "capability", ["jshell"]),
    ("cmake -S . -B build -DCMAKE_BUILD_TYPE=Release", "capability", ["cmake"]),
    ("cmake --build build -- -C sub", "capability", ["cmake"]),
    ("ctest -C Release -R unit -j 2", "capability", ["ctest"]),
    ("cargo build --config profile.release.debug=true", "capability", ["cargo build"]),
    ("cargo +nightly build --release", "capability", ["cargo build"]),
    ("cargo run -- --config x", "capability", ["cargo run"]),
    ("npm config get registry", "capability", ["npm config"]),
    ("npm config list", "capability", ["npm config"]),
    ("npm pkg get name", "capability", ["npm pkg"]),
    ("pnpm config get registry", "capability", ["pnpm config"]),
    ("yarn config get registry", "capability", ["yarn config get"]),
    ("openssl engine", "capability", ["openssl"]),
    ("openssl engine -t", "capability", ["openssl"]),
    ("openssl x509 -in c.pem -noout -provider legacy", "capability", ["openssl"]),
    ("gpg --list-keys", "capability", ["gpg"]),
    ("gpg --verify x.sig x", "capability", ["gpg"]),
    ("gpg-agent --daemon", "capability", ["gpg-agent"]),
    ("sed -n 1p in.txt", "capability", ["sed"]),
    ("awk -F: '{print $1}' /etc/passwd", "capability", ["awk"]),
    ("mawk -W interactive '{print}' f", "capability", ["mawk"]),
    ("echo x | awk '{print $1}'", "helper", []),
    ("gawk -i inplace '{print}' x", "one_time", ["gawk"]),       # RF131, as before
    ("GIT_TRACE=1 git status", "capability", ["git status"]),
    ("GIT_TRACE=true git status", "capability", ["git status"]),
    ("GIT_TRACE2_EVENT_NESTING=2 git status", "capability", ["git status"]),
    ("nohup make > build.log 2>&1", "one_time", ["make"]),       # RF105, not RF129
    ("nohup make >/dev/null 2>&1", "capability", ["make"]),
    ("nohup make | tail -5", "capability", ["make"]),
    ("redis-cli EVAL 'return 1' 0", "capability", ["redis-cli"]),
    ("redis-cli --eval f.lua", "capability", ["redis-cli"]),
    ("redis-cli SET k --rdb", "capability", ["redis-cli"]),
    ("git st", "capability", ["git st"]),
]


@pytest.mark.parametrize(("cmd", "code", "word"), ONE_TIME, ids=[c for c, _, _ in ONE_TIME])
def test_the_row_is_one_time_and_says_why(cmd, code, word):
    v = classify(cmd)
    assert v.verdict == "one_time" and code in v.codes, (v.codes, v.keys)
    assert any(word in f.message for f in v.findings if f.code == code), \
        [f.message for f in v.findings]


@pytest.mark.parametrize(("cmd", "verdict", "keys"), NEIGHBOURS, ids=[c for c, _, _ in NEIGHBOURS])
def test_the_harmless_neighbour_stays_as_it_was(cmd, verdict, keys):
    v = classify(cmd)
    assert (v.verdict, list(v.keys)) == (verdict, keys), v.codes
    assert not {"RF108", "RF110", "RF111", "RF116", "RF129", "RF132", "RF133"} & set(v.codes)
    if cmd.startswith("nohup make >"):
        assert "RF129" not in v.codes


def test_the_capability_names_the_write():
    assert "write:/tmp/t" in classify("GIT_TRACE=/tmp/t git status").capabilities[0].effects
    assert "write:nohup.out" in classify("nohup make").capabilities[0].effects
    assert "write:~/.npmrc" in classify("npm config set a b").capabilities[0].effects
    assert "write:x.xml" in classify("python3 -m pytest --junitxml=x.xml").capabilities[0].effects
    assert "delete:/d" in classify("pytest --basetemp=/d").capabilities[0].effects
    assert "write:f" in classify("\\time -o f ls").capabilities[0].effects


def test_git_trace_variables_are_no_longer_exec_variables():
    # they run nothing: RF131 judges where they write, RF122 does not fire
    for cmd in ("GIT_TRACE2=/tmp/t git status", "GIT_TRACE2_PERF=1 git status"):
        assert "RF122" not in classify(cmd).codes
    assert "RF122" in classify("GIT_SSH_COMMAND=x git fetch").codes


def test_an_unknown_git_subcommand_stays_its_own_key():
    # Decision: `git x` may be a user alias (`!cmd`) the classifier cannot see; its
    # key is `git x`, so no grant of another subcommand covers it, and every way to
    # define an alias here is one-time (git config alias.*, -c alias.*, GIT_CONFIG_*).
    assert classify("git st").keys == ("git st",)
    for cmd in ("git -c alias.st='!id' st", "git config alias.st '!id'",
                "GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=alias.st GIT_CONFIG_VALUE_0='!id' git st"):
        assert classify(cmd).verdict == "one_time", cmd


# --- run for real ------------------------------------------------------------------

def _py_mark() -> str:
    return "import os; os.system('echo ran > M')"


REAL = [
    ("python3 -m timeit -n 1 -r 1 \"" + _py_mark() + "\"", "python3", "RF108"),
    ("perl5.36.0 -e 'system(q{" + SH_MARK + "})'", "perl5.36.0", "RF108"),
    ("printf '1e " + SH_MARK + "\\n' > s.sed; echo x | sed -f s.sed", "sed", "RF111"),
    ("printf 'BEGIN{system(\"" + SH_MARK + "\")}' > p.awk; mawk -W exec p.awk", "mawk", "RF110"),
    ("printf 'BEGIN{system(\"" + SH_MARK + "\")}' > p.awk; awk -f p.awk", "awk", "RF110"),
    ("printf 'execute_process(COMMAND sh -c \"" + SH_MARK + "\")\\n' > c.cmake; "
     "cmake -C c.cmake -S . -B b", "cmake", "RF133"),
    ("printf 'execute_process(COMMAND sh -c \"" + SH_MARK + "\")\\n' > c.cmake; "
     "ctest -S c.cmake", "ctest", "RF133"),
    ("echo 'Runtime.getRuntime().exec(new String[]{\"sh\",\"-c\",\"" + SH_MARK +
     "\"}).waitFor();' | HOME=$PWD jshell -q", "jshell", "RF116"),   # (its prefs in $HOME)
]


@pytest.mark.parametrize(("cmd", "needs", "code"), REAL, ids=[c for c, _, _ in REAL])
def test_it_really_runs_the_code(cmd, needs, code, tmp_path):
    v = classify(cmd)
    assert v.verdict == "one_time" and code in v.codes, v.codes
    _runs(cmd, tmp_path, needs, timeout=120)


def test_python_m_pytest_p_loads_the_plugin(tmp_path):
    (tmp_path / "evilplug.py").write_text("import os\nos.system('echo ran > M')\n")
    (tmp_path / "test_a.py").write_text("def test_a():\n    pass\n")
    cmd = f"{sys.executable} -m pytest -q -p evilplug -p no:cacheprovider test_a.py"
    assert "RF133" in classify(cmd).codes
    _bash(cmd, tmp_path)
    assert (tmp_path / "M").read_text().strip() == "ran"
    harmless = f"{sys.executable} -m pytest -q -p no:cacheprovider test_a.py"
    (tmp_path / "M").unlink()
    assert classify(harmless).verdict == "capability"
    _bash(harmless, tmp_path)
    assert not (tmp_path / "M").exists()


def test_pytest_junitxml_writes_and_basetemp_deletes(tmp_path):
    # pytest empties --basetemp as soon as a test asks for tmp_path
    (tmp_path / "test_a.py").write_text("def test_a(tmp_path):\n    pass\n")
    keep = tmp_path / "bt" / "keep"
    keep.parent.mkdir()
    keep.write_text("mine")
    cmd = (f"{sys.executable} -m pytest -q -p no:cacheprovider --junitxml=out.xml "
           "--basetemp=bt test_a.py")
    v = classify(cmd)
    assert {"RF131", "RF132"} <= set(v.codes), v.codes
    _bash(cmd, tmp_path)
    assert (tmp_path / "out.xml").is_file() and not keep.exists()


def test_python_m_cprofile_o_writes(tmp_path):
    (tmp_path / "x.py").write_text("pass\n")
    cmd = "python3 -m cProfile -o out.prof x.py"
    assert "RF131" in classify(cmd).codes
    _bash(cmd, tmp_path)
    assert (tmp_path / "out.prof").is_file()


def test_git_trace_writes_the_file(tmp_path):
    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    for var in ("GIT_TRACE", "GIT_TRACE2_EVENT", "GIT_TRACE_SETUP"):
        cmd = f"{var}=$PWD/{var}.log git status"
        assert "RF131" in classify(cmd).codes, cmd
        _bash(cmd, tmp_path)
        assert (tmp_path / f"{var}.log").stat().st_size > 0, var
    assert classify("GIT_TRACE=1 git status").verdict == "capability"


def test_nohup_writes_nohup_out_when_stdout_is_a_terminal(tmp_path):
    if shutil.which("script") is None:
        pytest.skip("script (util-linux) is not installed: no terminal to give nohup")
    assert "RF129" in classify("nohup true").codes
    # `script` gives nohup a terminal as stdout, as an interactive shell would
    subprocess.run(["script", "-qec", "nohup true", "/dev/null"], cwd=tmp_path,
                   capture_output=True, timeout=30, stdin=subprocess.DEVNULL)
    if not (tmp_path / "nohup.out").exists():
        pytest.skip("no pseudo-terminal here")
    (tmp_path / "nohup.out").unlink()
    assert classify("nohup true > /dev/null").verdict == "capability"
    subprocess.run(["script", "-qec", "nohup true > /dev/null", "/dev/null"], cwd=tmp_path,
                   capture_output=True, timeout=30, stdin=subprocess.DEVNULL)
    assert not (tmp_path / "nohup.out").exists()


def test_npm_config_set_writes_the_config(tmp_path):
    if shutil.which("npm") is None:
        pytest.skip("npm is not installed")
    cmd = "npm config set fund false --userconfig ./u.npmrc"
    v = classify(cmd)
    assert "RF131" in v.codes and "write:./u.npmrc" in v.capabilities[0].effects
    r = subprocess.run(["bash", "-c", cmd], cwd=tmp_path, capture_output=True, timeout=120,
                       stdin=subprocess.DEVNULL, env=dict(os.environ, HOME=str(tmp_path)))
    if r.returncode != 0:
        pytest.skip(f"npm failed here: {r.stderr.decode(errors='replace')[:200]}")
    assert "fund" in (tmp_path / "u.npmrc").read_text()


def test_openssl_engine_loads_the_library(tmp_path):
    if shutil.which("openssl") is None or shutil.which("cc") is None:
        pytest.skip("openssl or a C compiler is not installed")
    (tmp_path / "e.c").write_text('#include <stdlib.h>\n__attribute__((constructor)) static '
                                  'void f(void) { system("echo ran > M"); }\n')
    subprocess.run(["cc", "-shared", "-fPIC", "-o", "e.so", "e.c"], cwd=tmp_path, check=True)
    cmd = "openssl engine dynamic -t -pre SO_PATH:$PWD/e.so -pre LOAD"
    assert "RF133" in classify(cmd).codes
    _runs(cmd, tmp_path, "openssl")


def test_gpg_agent_program_runs(tmp_path):
    if shutil.which("gpg") is None:
        pytest.skip("gpg is not installed")
    (tmp_path / "a.sh").write_text(f"#!/bin/sh\necho ran > '{tmp_path}/M'\n")
    (tmp_path / "a.sh").chmod(0o755)
    (tmp_path / "g").mkdir(mode=0o700)
    (tmp_path / "f").write_text("hi\n")
    cmd = ("gpg --homedir $PWD/g --agent-program $PWD/a.sh --batch --yes "
           "--pinentry-mode loopback --passphrase x -c f")
    assert "RF133" in classify(cmd).codes
    _runs(cmd, tmp_path, "gpg")


def test_cargo_config_runner_runs(tmp_path):
    if shutil.which("cargo") is None:
        pytest.skip("cargo is not installed")
    r = subprocess.run(["cargo", "new", "--vcs", "none", "--offline", "p"], cwd=tmp_path,
                       capture_output=True, timeout=120, stdin=subprocess.DEVNULL)
    if r.returncode != 0:
        pytest.skip(f"cargo new failed: {r.stderr.decode(errors='replace')[:200]}")
    cmd = ("cargo --config \"target.'cfg(all())'.runner = ['sh', '-c', 'echo ran > ../M']\" "
           "run --offline -q")
    assert "RF133" in classify(cmd).codes
    proj = tmp_path / "p"
    subprocess.run(["bash", "-c", cmd], cwd=proj, capture_output=True, timeout=300,
                   stdin=subprocess.DEVNULL)
    if not (tmp_path / "M").exists():
        pytest.skip("cargo could not build here (target or toolchain missing)")
    assert (tmp_path / "M").read_text().strip() == "ran"

