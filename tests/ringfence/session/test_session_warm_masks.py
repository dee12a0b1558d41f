"""A warm Session remembers host facts between runs (compiler/factcache.py, issue 24's
warm path). A credential created after a run must still be hidden from the next one:
the attack is a token written on the host between two runs of one warm Session."""

from __future__ import annotations

import time

import pytest

import ringfence
from ringfence.compiler.secretmasks import RACY_NS

pytestmark = [
    pytest.mark.sandbox,
    pytest.mark.skipif(__import__("shutil").which("bwrap") is None,
                       reason="bubblewrap is not installed"),
]

TOKEN = "gho_WarmSessionTokenMustNeverShow0123456789"


@pytest.fixture
def env(box_env, monkeypatch):
    box = box_env
    # A tool's config moved out of the (masked) home by its override variable: the
    # credential table masks that directory wherever it is, once it exists.
    monkeypatch.setenv("GH_CONFIG_DIR", str(box.outside / "ghcfg"))
    return box


@pytest.mark.parametrize("profile", ["strict", "build"])
def test_a_token_written_between_two_warm_runs_is_hidden(env, profile):
    s = ringfence.Session(profile=profile, workspace=str(env.ws), session="warm")
    target = env.outside / "ghcfg" / "hosts.yml"
    first = s.run(f"cat {target} || echo absent")
    assert first.state == "completed" and "absent" in first.stdout
    time.sleep(RACY_NS / 1e9 + 0.2)         # the cached facts are now trusted
    assert s.run("true").state == "completed"
    target.parent.mkdir()
    target.write_text(f"github.com:\n    oauth_token: {TOKEN}\n")
    r = s.run(f"cat {target}; ls {target.parent}")
    assert TOKEN not in r.stdout and TOKEN not in r.stderr
    # The same file outside the credential table is readable (the test can fail).
    plain = env.outside / "plain.txt"
    plain.write_text(TOKEN)
    assert TOKEN in s.run(f"cat {plain}").stdout


def _same_size(text: str, size: int) -> bytes:
    data = text.encode()
    assert len(data) <= size
    return data[:-1] + b"#" * (size - len(data)) + b"\n"


@pytest.mark.skipif(__import__("os").geteuid() != 0,
                    reason="a tmpfs is mounted for the CA file (no writeback: the "
                           "mapping stays writable without another fault)")
@pytest.mark.parametrize("profile", ["strict", "build"])
def test_a_ca_bundle_rewritten_through_a_mapping_is_checked_again(env, profile, monkeypatch):
    """A CA variable names a certificate file under the (masked) home: it is bound back,
    read-only, because it holds certificates only. Its content then becomes a private
    key through a shared writable mapping, which changes neither its size, its mtime
    nor its ctime: the next run must read it again, as a cold run does, and hide it."""
    import mmap
    import os
    import subprocess

    certs = env.home / "certs"
    certs.mkdir()
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1m", "rf-ca", str(certs)], check=True)
    try:
        ca = certs / "ca.pem"
        cert = ("-----BEGIN CERTIFICATE-----\nMIIBszCCAVmgAwIBAgIUWarmSessionCaCheck\n"
                "-----END CERTIFICATE-----\n")
        size = len(cert) + 64
        ca.write_bytes(_same_size(cert, size))
        monkeypatch.setenv("SSL_CERT_FILE", str(ca))
        s = ringfence.Session(profile=profile, workspace=str(env.ws), session="warm-ca")
        fd = os.open(ca, os.O_RDWR)
        try:
            m = mmap.mmap(fd, size, mmap.MAP_SHARED, mmap.PROT_READ | mmap.PROT_WRITE)
            m[0:1] = m[0:1]                 # the first write fault: timestamps updated once
            time.sleep(RACY_NS / 1e9 + 0.2)
            first = s.run(f"head -c 27 {ca}")
            assert first.state == "completed" and "BEGIN CERTIFICATE" in first.stdout
            st = os.stat(ca)
            m[:] = _same_size(f"-----BEGIN PRIVATE KEY-----\n{TOKEN}\n"
                              "-----END PRIVATE KEY-----\n", size)
            m.flush()
            after = os.stat(ca)
            assert (after.st_size, after.st_mtime_ns, after.st_ctime_ns) == \
                (st.st_size, st.st_mtime_ns, st.st_ctime_ns)    # the premise holds
            r = s.run(f"cat {ca}")
            assert TOKEN not in r.stdout and TOKEN not in r.stderr
            m.close()
        finally:
            os.close(fd)
    finally:
        subprocess.run(["umount", "-l", str(certs)], check=False)


@pytest.mark.parametrize("profile", ["strict", "build"])
def test_a_relative_state_dir_follows_the_working_directory(env, profile, monkeypatch):
    """RINGFENCE_HOME (or XDG_STATE_HOME...) relative: ringfence's private dirs are
    where it says from the process's working directory, as on a cold run there. A
    warm Session whose process changed directory must hide the state dir it names
    now (the ledger and grants of the runs made from there), not the one it named
    at its first run."""
    first_dir, then_dir = env.outside / "one", env.outside / "two"
    for d in (first_dir, then_dir):
        (d / "rfstate").mkdir(parents=True)
    (then_dir / "rfstate" / "ledger-copy").write_text(TOKEN)
    monkeypatch.setenv("RINGFENCE_HOME", "rfstate")
    monkeypatch.chdir(first_dir)
    s = ringfence.Session(profile=profile, workspace=str(env.ws), session="warm-rel")
    assert s.run("true").state == "completed"
    time.sleep(RACY_NS / 1e9 + 0.2)
    monkeypatch.chdir(then_dir)
    r = s.run(f"cat {then_dir}/rfstate/ledger-copy")
    assert TOKEN not in r.stdout and TOKEN not in r.stderr
    # The same file outside any state dir is readable (the test can fail).
    (then_dir / "plain").write_text(TOKEN)
    assert TOKEN in s.run(f"cat {then_dir}/plain").stdout


def _image(path, stamp: str, files: dict[str, str] | None = None) -> None:
    """An ext4 image whose root directory's mtime and ctime are ``stamp`` exactly
    (debugfs writes them; the kernel never would), with ``files`` in it."""
    import subprocess

    subprocess.run(["truncate", "-s", "4M", str(path)], check=True)
    subprocess.run(["mkfs.ext4", "-q", "-F", str(path)], check=True, capture_output=True)
    cmds = []
    for name, text in (files or {}).items():
        src = path.parent / f"{path.name}.{name.replace('/', '_')}"
        src.write_text(text)
        cmds += [f"mkdir {name.rsplit('/', 1)[0]}", f"write {src} {name}"]
    cmds += [f"set_inode_field / {f} {v}" for f, v in (
        ("mtime", stamp), ("ctime", stamp), ("mtime_extra", "0"), ("ctime_extra", "0"))]
    script = path.parent / f"{path.name}.cmds"
    script.write_text("\n".join(cmds) + "\n")
    subprocess.run(["debugfs", "-w", "-f", str(script), str(path)], check=True,
                   capture_output=True)


@pytest.mark.skipif(__import__("os").geteuid() != 0 or __import__("shutil").which("debugfs")
                    is None, reason="mounts two ext4 images (root, debugfs)")
@pytest.mark.parametrize("profile", ["strict", "build"])
def test_a_filesystem_mounted_over_a_directory_is_seen(env, profile, monkeypatch):
    """A credential directory's parent is a mount point. Between two runs another
    filesystem is mounted over it whose root has the same inode number (2: every
    ext4 root), mtime and ctime as the one it covers (a copy of the volume, a
    crafted image): only the device tells them apart, and its credential file must
    be hidden like on a cold run."""
    import subprocess
    import tempfile
    from pathlib import Path

    # Directly under /: /var/tmp (where the box is) changes whenever another test
    # makes its box there, which would void every cached fact under it and hide the bug.
    vault = Path(tempfile.mkdtemp(prefix="rf-warm-mnt-", dir="/"))
    monkeypatch.setenv("GH_CONFIG_DIR", str(vault / "gh"))
    first, second = env.root / "first.img", env.root / "second.img"
    _image(first, "20200101000000")
    _image(second, "20200101000000",
           {"gh/hosts.yml": f"github.com:\n    oauth_token: {TOKEN}\n"})
    mounted = []
    try:
        for img in (first, second):
            if img is second:
                time.sleep(RACY_NS / 1e9 + 0.2)     # the cached facts are now trusted
                s = ringfence.Session(profile=profile, workspace=str(env.ws), session="warm-mnt")
                r = s.run(f"cat {vault}/gh/hosts.yml || echo absent")
                assert r.state == "completed" and "absent" in r.stdout
            subprocess.run(["mount", "-o", "loop", str(img), str(vault)], check=True)
            mounted.append(img)
        assert TOKEN in (vault / "gh" / "hosts.yml").read_text()    # the premise
        r = s.run(f"cat {vault}/gh/hosts.yml")
        assert TOKEN not in r.stdout and TOKEN not in r.stderr
    finally:
        for _ in mounted:
            subprocess.run(["umount", str(vault)], check=False)
        vault.rmdir()
