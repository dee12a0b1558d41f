"""Issue 21: which included gitconfig files are found and served (no sandbox)."""

from __future__ import annotations

import os

from ringfence.compiler.gitinclude import MAX_DEPTH, includes
from ringfence.compiler.spec import Sanitized

from .fakehost import DISK, HOME, fake_host


def _w(path, text):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return str(path)


def test_includes_are_found_as_git_names_them(tmp_path):
    home = tmp_path / "home"
    top = _w(home / ".gitconfig", "[include]\n\tpath = ~/.gitconfig.d/user\n"
                                  "[includeIf \"gitdir:~/src/\"]\n\tpath = .gitconfig.d/work\n"
                                  "[include]\n\tpath = ~root/x\n\tpath = %(prefix)/etc/y\n")
    _w(home / ".gitconfig.d" / "user", "[include]\n\tpath = nested\n")
    _w(home / ".gitconfig.d" / "nested", "[include]\n\tpath = ../.gitconfig\n")   # a loop
    _w(home / ".gitconfig.d" / "work", "[user]\n\tname = w\n")
    got = includes([top], str(home), [str(home)])
    d = f"{home}/.gitconfig.d"
    assert got == ((top, f"{d}/user"), (top, f"{d}/work"), (f"{d}/user", f"{d}/nested"),
                   (f"{d}/nested", top))


def test_a_link_out_of_the_home_is_named_but_never_read(tmp_path):
    home, out = tmp_path / "home", tmp_path / "elsewhere"
    top = _w(home / ".gitconfig", "[include]\n\tpath = ~/link\n\tpath = ../elsewhere/c\n")
    _w(out / "c", "[include]\n\tpath = /never/read\n")
    os.symlink(out / "c", home / "link")
    got = includes([top], str(home), [str(home)])
    assert got == ((top, f"{home}/link"), (top, f"{out}/c"))     # neither one followed


def test_the_depth_is_gits_own(tmp_path):
    home = tmp_path / "home"
    files = [_w(home / f"c{i}", f"[include]\n\tpath = c{i + 1}\n") for i in range(MAX_DEPTH + 3)]
    got = includes([files[0]], str(home), [str(home)])
    assert len(got) == MAX_DEPTH


def test_a_config_without_includes_is_not_parsed(tmp_path):
    home = tmp_path / "home"
    top = _w(home / ".gitconfig", "[user]\n\tname = n\n[broken\n")
    assert includes([top], str(home), [str(home)]) == ()


def test_homemask_serves_only_includes_under_the_home_and_no_credential():
    from ringfence.compiler.compile import compile_profile
    from ringfence.profiles.load import load_profile

    top = f"{HOME}/.gitconfig"
    disk = dict(DISK)
    disk.update({
        f"{HOME}/.gitconfig.d/user": ("file", f"{HOME}/.gitconfig.d/user"),
        f"{HOME}/.gitconfig.d/key": ("file", f"{HOME}/.ssh/id_ed25519"),
        f"{HOME}/.gitconfig.d/out": ("file", "/srv/shared/gitconfig"),
        "/etc/team.gitconfig": ("file", "/etc/team.gitconfig"),
        f"{HOME}/.gitconfig.d/dir": ("dir", f"{HOME}/.gitconfig.d/dir"),
        f"{HOME}/.gitconfig.d/user2": ("file", f"{HOME}/.gitconfig.d/user2"),  # its includer
    })                                                                      # is not served
    pairs = [(top, f"{HOME}/.gitconfig.d/{n}") for n in ("user", "key", "out", "dir")]
    pairs += [(top, "/etc/team.gitconfig"), ("/elsewhere/c", f"{HOME}/.gitconfig.d/user2")]
    profile = load_profile("build")
    host = fake_host(profile, disk=disk, git_includes=pairs)
    spec = compile_profile(profile, None, host)
    served = [op.dst for op in spec.ops if isinstance(op, Sanitized) and op.kind == "gitconfig"]
    assert served == [top, f"{HOME}/.gitconfig.d/user"]
