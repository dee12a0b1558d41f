"""Issue 21 attack review: a ``[[credentials]]`` source never runs or reads what a
sandbox wrote.

The source is read on the HOST before the sandbox starts. A previous run (here
a real ``ringfence run``) writes into the workspace: a ``keyring.py`` that
``python3 -m keyring`` would import from the current directory, an executable
that a relative ``PATH`` entry would find, a token file. The next run's broker
must run none of them: the host-side marker file stays absent and the run is
refused (RF652, exit 125) where the source itself is in the workspace.
"""

from __future__ import annotations

import shutil
import subprocess

import pytest

from .sandbox_util import make_box

pytestmark = [pytest.mark.sandbox,
              pytest.mark.skipif(shutil.which("bwrap") is None, reason="needs bubblewrap")]


@pytest.fixture
def box():
    b = make_box()
    b.pwned = b.outside / "PWNED"
    yield b
    shutil.rmtree(b.root, ignore_errors=True)


def _plant_from_sandbox(box, script: str) -> None:
    """The sandbox writes the files (they are applied to the workspace as usual)."""
    r = box.run("build", "-c", script)
    assert r.returncode == 0, r.stderr


def _profile(box, source: str) -> str:
    p = box.root / "cred.toml"
    p.write_text(f'extends = "build"\n[[credentials]]\nname = "t"\nfrom = "{source}"\n'
                 'domains = ["example.com"]\n')
    return str(p)


def _run(box, source: str, **env) -> subprocess.CompletedProcess:
    return box.run(_profile(box, source), "-c", "echo ran", env=box.env(**env))


def test_python_m_does_not_import_a_module_the_sandbox_wrote(box):
    _plant_from_sandbox(box, f"printf 'import pathlib\\npathlib.Path(\"{box.pwned}\")"
                             f".write_text(\"x\")\\nprint(\"tok\")\\n' > keyring.py")
    assert (box.ws / "keyring.py").exists()
    r = _run(box, "command:python3 -m keyring get svc user")
    assert not box.pwned.exists(), r.stderr
    r = _run(box, "command:python3 -c 'import keyring'")
    assert not box.pwned.exists(), r.stderr


@pytest.mark.parametrize("path_tail", [":", ":.", ":sub"])
def test_a_relative_path_entry_does_not_run_a_planted_program(box, path_tail):
    _plant_from_sandbox(box, f"mkdir -p sub; for f in rftok sub/rftok; do printf "
                             f"'#!/bin/sh\\ntouch {box.pwned}\\necho tok\\n' > $f; "
                             "chmod +x $f; done")
    r = _run(box, "command:rftok", PATH=box.env()["PATH"] + path_tail)
    assert not box.pwned.exists(), r.stderr
    assert r.returncode == 125 and "RF652" in r.stderr, r.stderr


def test_a_path_entry_inside_the_workspace_is_not_used(box):
    _plant_from_sandbox(box, f"mkdir -p bin; printf '#!/bin/sh\\ntouch {box.pwned}\\n"
                             "echo tok\\n' > bin/rftok; chmod +x bin/rftok")
    r = _run(box, "command:rftok", PATH=f"{box.ws}/bin:" + box.env()["PATH"])
    assert not box.pwned.exists(), r.stderr
    assert r.returncode == 125 and "RF652" in r.stderr, r.stderr


def test_a_program_in_the_workspace_is_refused(box):
    _plant_from_sandbox(box, f"printf '#!/bin/sh\\ntouch {box.pwned}\\necho tok\\n' > t.sh; "
                             "chmod +x t.sh")
    for source in (f"command:{box.ws}/t.sh", "command:./t.sh", f"command:sh {box.ws}/t.sh"):
        r = _run(box, source)
        assert not box.pwned.exists(), (source, r.stderr)
        assert r.returncode == 125 and "RF652" in r.stderr, (source, r.stderr)


def test_a_file_source_in_the_workspace_is_refused(box):
    _plant_from_sandbox(box, "echo sandbox-chosen-token > tok.txt")
    r = _run(box, f"file:{box.ws}/tok.txt")
    assert r.returncode == 125 and "RF652" in r.stderr and "ran" not in r.stdout, r.stderr


def test_a_link_in_the_workspace_cannot_choose_the_host_file(box):
    (box.outside / "host-only.txt").write_text("host-file-not-for-the-sandbox\n")
    # A link out of the workspace (a sandbox-made one is held on settle, but a
    # checkout can carry one, like the box's link-out): the path as written counts.
    (box.ws / "tok").symlink_to(box.outside / "host-only.txt")
    r = _run(box, f"file:{box.ws}/tok")
    assert r.returncode == 125 and "RF652" in r.stderr, r.stderr
    r = _run(box, f"command:cat {box.ws}/tok")
    assert r.returncode == 125 and "RF652" in r.stderr, r.stderr


def test_a_host_command_and_file_outside_still_work(box):
    (box.outside / "tok.txt").write_text("good-token\n")
    for source in ("command:echo good-token", f"file:{box.outside}/tok.txt"):
        r = _run(box, source)
        assert r.returncode == 0 and "ran" in r.stdout, (source, r.stderr)
