"""Host facts: path facts, glob expansion (one walk), probe."""

from __future__ import annotations

import os

from ringfence.compiler.host import expand_glob, expand_globs, path_fact, probe
from ringfence.profiles.load import load_profile


def test_path_facts_resolve_links_and_kinds(tmp_path):
    (tmp_path / "d").mkdir()
    (tmp_path / "f").write_text("x")
    (tmp_path / "ld").symlink_to(tmp_path / "d")
    (tmp_path / "dangling").symlink_to(tmp_path / "nowhere")
    assert path_fact(str(tmp_path / "d")).kind == "dir"
    assert path_fact(str(tmp_path / "f")).kind == "file"
    link = path_fact(str(tmp_path / "ld"))
    assert (link.kind, link.real, link.is_link) == ("dir", str(tmp_path / "d"), True)
    assert path_fact(str(tmp_path / "dangling")).kind == "missing"
    assert path_fact(str(tmp_path / "absent")).kind == "missing"


def test_one_walk_finds_what_glob_finds(tmp_path):
    ws = tmp_path / "ws"
    for rel in (".env", "a/.env.local", "a/.hidden/b/server.pem", "c/id_rsa", "c/id_rsa.pub",
                "c/readme.md", ".envdir/inner", "deep/x/y/z/k.key"):
        p = ws / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text("s")
    outside = tmp_path / "outside"
    (outside / "sub").mkdir(parents=True)
    (outside / "sub" / ".env").write_text("s")
    (ws / "linked").symlink_to(outside)            # a linked directory is NOT searched
    (ws / "a" / "loop").symlink_to(ws / "a")       # nor is a loop
    pats = [f"{ws}/**/{n}" for n in (".env*", "*.pem", "*.key", "id_*")] + [f"{ws}/c/*.md"]
    got = expand_globs(pats)
    assert got[f"{ws}/c/*.md"] == (f"{ws}/c/readme.md",)
    assert got[f"{ws}/**/*.pem"] == (f"{ws}/a/.hidden/b/server.pem",)
    assert got[f"{ws}/**/id_*"] == (f"{ws}/c/id_rsa", f"{ws}/c/id_rsa.pub")
    assert got[f"{ws}/**/*.key"] == (f"{ws}/deep/x/y/z/k.key",)
    envs = set(got[f"{ws}/**/.env*"])
    assert envs == {f"{ws}/.env", f"{ws}/a/.env.local", f"{ws}/.envdir"}
    # every match is a real match of the pattern, as glob sees it
    assert set(expand_glob(f"{ws}/c/**/id_*")) == set(got[f"{ws}/**/id_*"])


def test_probe_and_path_facts_for_a_profile(tmp_path):
    env = {"HOME": str(tmp_path), "PATH": os.environ.get("PATH", "/usr/bin"), "SECRET": "x"}
    host = probe(env=env)
    assert host.home == str(tmp_path) and host.uid == os.getuid()
    assert host.env_names == ("HOME", "PATH", "SECRET")
    assert host.arch == os.uname().machine
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / ".env").write_text("s")
    facts = host.for_profile(load_profile("strict"), str(ws))
    assert facts.path(str(ws)).kind == "dir"
    assert facts.globs[f"{ws}/**/.env*"] == (f"{ws}/.env",)
    # host-obeyed files are no longer probed: the overlay stages them (no re-binds)
    assert f"{ws}/.envrc" not in facts.paths
