"""Strict's workspace-secrets walk: no link followed out of the workspace, a
directory cache that is invalidated by every change, and fail-safe loading."""

from __future__ import annotations

import marshal
import os
import sys

import pytest

from ringfence.compiler import secretmasks
from ringfence.compiler.secretmasks import cache_file, find, resolve_inside

NAMES = (".env*", "*.pem", "*.key", "id_*")


def pats(ws):
    return [(f"{ws}/**/{n}", n) for n in NAMES]


def masked(ws, cache="", **kw):
    found, outside = find(str(ws), pats(ws), str(cache) if cache else "", **kw)
    return sorted({p for v in found.values() for p in v}), outside


@pytest.fixture
def audit():
    """Paths the process lists (os.scandir, os.listdir) or opens while active."""
    seen: list[str] = []
    on = [False]

    def hook(event, args):
        if on[0] and event in ("os.scandir", "os.listdir", "open") and args:
            seen.append(args[0])

    sys.addaudithook(hook)

    class A:
        def __enter__(self):
            seen.clear()
            on[0] = True
            return seen

        def __exit__(self, *exc):
            on[0] = False

    return A()


@pytest.fixture(autouse=True)
def no_racy_window(monkeypatch):
    # Directories created by the test are a few ms old; the racy window is tested
    # on its own below.
    monkeypatch.setattr(secretmasks, "RACY_NS", 0)


def test_links_to_root_and_home_are_not_followed(tmp_path, audit):
    ws = tmp_path / "ws"
    (ws / "sub").mkdir(parents=True)
    (ws / "sub" / ".env").write_text("s")
    (ws / "root").symlink_to("/")
    (ws / "home").symlink_to(os.path.expanduser("~"))
    (ws / "up").symlink_to("..")
    with audit as seen:
        got, outside = masked(ws)
    assert got == [f"{ws}/sub/.env"]
    assert outside == []
    # nothing outside the workspace was listed (the fd-based listing of the root
    # has no path; every listed path is under ws)
    assert [p for p in seen if isinstance(p, str) and not p.startswith(str(ws))] == []


def test_secret_named_links(tmp_path):
    ws = tmp_path / "ws"
    (ws / "cfg").mkdir(parents=True)
    (ws / "cfg" / "real.txt").write_text("s")
    (tmp_path / "out.txt").write_text("o")
    (ws / "id_in").symlink_to("cfg/real.txt")                 # inside: masked at target
    (ws / "id_abs").symlink_to(ws / "cfg" / "real.txt")       # absolute, inside
    (ws / ".env.out").symlink_to(tmp_path / "out.txt")        # outside: not masked
    (ws / ".env.up").symlink_to("../out.txt")                 # escapes by ..: not masked
    (ws / "cfg" / "x.key").symlink_to("../../out.txt")
    (ws / "id_loop").symlink_to("id_loop")                    # a loop: nothing
    (ws / "id_dot").symlink_to(".")                           # never the whole workspace
    got, outside = masked(ws)
    assert got == [f"{ws}/cfg/real.txt"]
    assert outside == sorted([(f"{ws}/.env.out", str(tmp_path / "out.txt")),
                              (f"{ws}/.env.up", "../out.txt"),
                              (f"{ws}/cfg/x.key", "../../out.txt"),
                              (f"{ws}/id_dot", ".")])


def test_resolve_inside_never_leaves_the_root(tmp_path):
    ws = tmp_path / "ws"
    (ws / "a").mkdir(parents=True)
    (ws / "a" / "f").write_text("x")
    (ws / "l").symlink_to("/etc")
    (ws / "b").symlink_to("a")
    assert resolve_inside(f"{ws}/b/f", str(ws)) == f"{ws}/a/f"
    assert resolve_inside(f"{ws}/l/passwd", str(ws)) is None
    assert resolve_inside(f"{ws}/a/../../x", str(ws)) is None
    assert resolve_inside("/etc/passwd", str(ws)) is None
    assert resolve_inside(f"{ws}/missing", str(ws)) == ""


def test_unchanged_directories_are_not_listed_again(tmp_path, audit):
    ws, cache = tmp_path / "ws", tmp_path / "cache"
    for i in range(20):
        (ws / f"d{i}" / "lib").mkdir(parents=True)
        (ws / f"d{i}" / "lib" / "a.js").write_text("x")
    (ws / "d3" / ".env").write_text("s")
    assert masked(ws, cache)[0] == [f"{ws}/d3/.env"]
    with audit as seen:
        assert masked(ws, cache)[0] == [f"{ws}/d3/.env"]
    assert [p for p in seen if p in ("os.scandir",) or isinstance(p, int)] == []
    assert [p for p in seen if isinstance(p, str) and p.startswith(str(ws))] == []


def test_a_new_env_between_runs_is_found(tmp_path):
    ws, cache = tmp_path / "ws", tmp_path / "cache"
    (ws / "a" / "b").mkdir(parents=True)
    assert masked(ws, cache)[0] == []
    (ws / "a" / "b" / ".env.local").write_text("s")
    assert masked(ws, cache)[0] == [f"{ws}/a/b/.env.local"]


def test_resetting_the_directory_mtime_does_not_hide_a_new_secret(tmp_path):
    ws, cache = tmp_path / "ws", tmp_path / "cache"
    (ws / "a").mkdir(parents=True)
    st = os.stat(ws / "a")
    assert masked(ws, cache)[0] == []
    (ws / "a" / "id_rsa").write_text("s")
    os.utime(ws / "a", ns=(st.st_atime_ns, st.st_mtime_ns))     # mtime restored
    assert os.stat(ws / "a").st_mtime_ns == st.st_mtime_ns
    assert masked(ws, cache)[0] == [f"{ws}/a/id_rsa"]           # ctime moved


def test_recent_directories_are_not_cached(tmp_path, monkeypatch, audit):
    """A change in the same clock tick as the listing would leave mtime and ctime
    equal: directories changed within RACY_NS are listed again next time."""
    monkeypatch.setattr(secretmasks, "RACY_NS", 3600 * 10**9)
    ws, cache = tmp_path / "ws", tmp_path / "cache"
    (ws / "a").mkdir(parents=True)
    masked(ws, cache)
    assert not os.path.exists(cache_file(str(cache), str(ws), list(NAMES)))
    with audit as seen:
        masked(ws, cache)
    assert seen.count("os.scandir") == 0 and len([p for p in seen if isinstance(p, int)]) == 2


@pytest.mark.parametrize("content", [
    b"not marshal", b"", "{'v': 2}", "[]", "{'v': 2, 'root': ROOT, 'names': NAMES}",
    "{'v': 2, 'root': ROOT, 'names': NAMES, 'dirs': {'': [1, 2, 3, 'x', 'y']}, 'known': 5}",
    "{'v': 2, 'root': ROOT, 'names': NAMES, 'dirs': {'': 'zz', 'a': [0]}, 'known': [[1]]}",
    "{'v': 2, 'root': ROOT, 'names': NAMES, 'dirs': {'': {'k': 1}}, 'known': []}",
    "{'v': 2, 'root': ROOT, 'names': NAMES, 'dirs': {'': [None] * 5}, 'known': []}",
])
def test_a_corrupt_cache_fails_safe(tmp_path, content):
    ws, cache = tmp_path / "ws", tmp_path / "cache"
    (ws / "a").mkdir(parents=True)
    (ws / "a" / ".env").write_text("s")
    assert masked(ws, cache)[0] == [f"{ws}/a/.env"]
    path = cache_file(str(cache), str(ws), list(NAMES))
    if isinstance(content, str):      # a well-formed marshal of a wrong structure
        content = marshal.dumps(eval(content, {"ROOT": str(ws), "NAMES": sorted(NAMES)}))
    with open(path, "wb") as fh:
        fh.write(content)
    assert masked(ws, cache)[0] == [f"{ws}/a/.env"]


def test_a_forged_stale_entry_for_a_changed_directory_is_ignored(tmp_path):
    ws, cache = tmp_path / "ws", tmp_path / "cache"
    (ws / "a").mkdir(parents=True)
    masked(ws, cache)
    path = cache_file(str(cache), str(ws), list(NAMES))
    with open(path, "rb") as fh:
        stale = fh.read()
    (ws / "a" / "server.pem").write_text("s")
    with open(path, "wb") as fh:
        fh.write(stale)                         # the cache from before the .pem
    assert masked(ws, cache)[0] == [f"{ws}/a/server.pem"]


def test_node_modules_is_listed_only_without_memory(tmp_path, audit):
    ws, cache = tmp_path / "ws", tmp_path / "cache"
    (ws / "node_modules" / "pkg").mkdir(parents=True)
    (ws / "node_modules" / "pkg" / "cert.pem").write_text("package file")
    (ws / "src").mkdir()
    (ws / "src" / ".env").write_text("s")
    first = [f"{ws}/node_modules/pkg/cert.pem", f"{ws}/src/.env"]
    assert masked(ws, cache)[0] == first          # no cache yet: searched, remembered
    (ws / "node_modules" / "pkg" / "new.key").write_text("package file")
    with audit as seen:
        assert masked(ws, cache)[0] == first      # not listed again: new.key unmasked
    assert [p for p in seen if isinstance(p, str) and p.startswith(f"{ws}/node_modules")] == []
    os.unlink(cache_file(str(cache), str(ws), list(NAMES)))
    assert masked(ws, cache)[0] == sorted(first + [f"{ws}/node_modules/pkg/new.key"])


def test_pycache_is_listed_only_without_memory(tmp_path, audit):
    """Like node_modules: the compiler writes there, not the user."""
    ws, cache = tmp_path / "ws", tmp_path / "cache"
    inside = ws / "src" / "__pycache__"
    inside.mkdir(parents=True)
    (inside / "cert.pem").write_text("not a secret")
    (ws / "src" / ".env").write_text("s")
    first = sorted([f"{inside}/cert.pem", f"{ws}/src/.env"])
    assert masked(ws, cache)[0] == first          # no cache yet: searched, remembered
    (inside / "new.key").write_text("x")
    with audit as seen:
        assert masked(ws, cache)[0] == first      # not listed again: new.key unmasked
    assert [p for p in seen if isinstance(p, str) and p.startswith(str(inside))] == []
    os.unlink(cache_file(str(cache), str(ws), list(NAMES)))
    assert masked(ws, cache)[0] == sorted(first + [f"{inside}/new.key"])


@pytest.mark.parametrize("where", ["", "config"])
def test_a_planted_venv_marker_never_stops_masking(tmp_path, where):
    """A sandbox can write `pyvenv.cfg` anywhere in the workspace (settle applies it:
    the host does not obey it). Secrets added later under it are still masked."""
    ws, cache = tmp_path / "ws", tmp_path / "cache"
    (ws / "src").mkdir(parents=True)
    (ws / "src" / ".env").write_text("s")
    base = ws / where if where else ws
    base.mkdir(exist_ok=True)
    (base / "pyvenv.cfg").write_text("home = /usr/bin\n")
    (base / "lib").mkdir()
    assert masked(ws, cache)[0] == [f"{ws}/src/.env"]
    assert masked(ws, cache)[0] == [f"{ws}/src/.env"]     # cache warm
    (base / "lib" / "deploy.pem").write_text("added by the user later")
    (ws / "src" / "new").mkdir()
    (ws / "src" / "new" / "id_rsa").write_text("another")
    assert masked(ws, cache)[0] == sorted([f"{ws}/src/.env", f"{base}/lib/deploy.pem",
                                           f"{ws}/src/new/id_rsa"])


def test_a_lost_cache_finds_a_secret_moved_into_node_modules(tmp_path):
    ws, cache = tmp_path / "ws", tmp_path / "cache"
    (ws / "config").mkdir(parents=True)
    (ws / "config" / ".env").write_text("s")
    (ws / "node_modules").mkdir()
    assert masked(ws, cache)[0] == [f"{ws}/config/.env"]
    os.rename(ws / "config", ws / "node_modules" / "config")
    with open(cache_file(str(cache), str(ws), list(NAMES)), "wb") as fh:
        fh.write(b"{")                             # and the memory is gone
    assert masked(ws, cache)[0] == [f"{ws}/node_modules/config/.env"]


@pytest.mark.parametrize("decoy", [False, True])
def test_a_secret_moved_into_node_modules_stays_masked(tmp_path, decoy):
    """A mask cannot be renamed, its parent can: `mv config node_modules/`."""
    ws, cache = tmp_path / "ws", tmp_path / "cache"
    (ws / "config").mkdir(parents=True)
    (ws / "config" / ".env").write_text("s")
    (ws / "node_modules" / "pkg").mkdir(parents=True)
    assert masked(ws, cache)[0] == [f"{ws}/config/.env"]
    os.rename(ws / "config", ws / "node_modules" / "pkg" / "cfg")
    if decoy:                                   # a new file at the old path
        (ws / "config").mkdir()
        (ws / "config" / ".env").write_text("decoy")
    want = [f"{ws}/node_modules/pkg/cfg/.env"] + ([f"{ws}/config/.env"] if decoy else [])
    assert masked(ws, cache)[0] == sorted(want)
    assert masked(ws, cache)[0] == sorted(want)         # and in every later run


def test_a_secret_renamed_under_node_modules_is_found_by_inode(tmp_path):
    ws, cache = tmp_path / "ws", tmp_path / "cache"
    (ws / "a").mkdir(parents=True)
    (ws / "a" / "id_ed25519").write_text("s")
    (ws / "node_modules").mkdir()
    assert masked(ws, cache)[0] == [f"{ws}/a/id_ed25519"]
    os.rename(ws / "a", ws / "node_modules" / "a")
    os.rename(ws / "node_modules" / "a" / "id_ed25519", ws / "node_modules" / "a" / "plain")
    assert masked(ws, cache)[0] == [f"{ws}/node_modules/a/plain"]


def test_an_inode_mismatch_is_checked_not_skipped(tmp_path, monkeypatch):
    """overlayfs (xino=off) may list other inodes than stat gives: such a
    directory is still walked when no link leads to it."""
    ws = tmp_path / "ws"
    (ws / "a" / "b").mkdir(parents=True)
    (ws / "a" / "b" / ".env").write_text("s")
    real_list = secretmasks._list

    def lying_list(path, expect, pdev, anyre):
        got = real_list(path, expect, pdev, anyre)
        if got is not None:
            st, subs, hits = got
            got = st, [[n, ino + 1000] for n, ino in subs], hits
        return got

    monkeypatch.setattr(secretmasks, "_list", lying_list)
    assert masked(ws)[0] == [f"{ws}/a/b/.env"]


def _drop(value, name):
    if isinstance(value, dict):
        return {k: _drop(v, name) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(_drop(v, name) for v in value if v != name)
    return value


@pytest.mark.parametrize("tagged", (False, True))
def test_a_forged_cache_that_forgets_a_secret_is_ignored(tmp_path, monkeypatch, tagged):
    # An up-to-date cache (every directory's stat data right) that simply leaves
    # the .env out: without the state dir's key it is no cache at all.
    monkeypatch.setattr(secretmasks, "RACY_NS", 0)
    ws, cache = tmp_path / "ws", tmp_path / "cache"
    (ws / "a").mkdir(parents=True)
    (ws / "a" / ".env").write_text("s")
    key = str(tmp_path / "state" / "mask.key")
    assert masked(ws, cache, key_path=key)[0] == [f"{ws}/a/.env"]
    path = cache_file(str(cache), str(ws), list(NAMES))
    with open(path, "rb") as fh:
        blob = fh.read()
    data = _drop(marshal.loads(blob[32:]), ".env")
    data["known"] = []
    forged = marshal.dumps(data)
    if tagged:                               # a digest under a key of the forger's own
        from ringfence.compiler.cacheseal import seal
        forged = seal(os.urandom(32), forged)
    with open(path, "wb") as fh:
        fh.write(forged)
    assert masked(ws, cache, key_path=key)[0] == [f"{ws}/a/.env"]
    assert os.stat(key).st_mode & 0o777 == 0o600
