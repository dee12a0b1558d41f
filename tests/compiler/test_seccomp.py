"""The seccomp program: golden bytes, a BPF interpreter run, and a real sandbox."""

from __future__ import annotations

import errno
import os
import shutil
import struct
import subprocess
import tempfile

import pytest

from ringfence.compiler import seccomp
from ringfence.compiler.seccomp import (AUDIT_ARCH, SECCOMP_RET_ALLOW, SECCOMP_RET_ERRNO,
                              SECCOMP_RET_KILL_PROCESS, build_filter, syscall_numbers)

GOLDEN = {
    ("x86_64", True): (86, "8a283dc0860060ee8dd92e6d5206c271620e269e6ce630622b564a115b00d6e0"),
    ("x86_64", False): (80, "e3a6c45f3158d447e88682ecd472105fde0d997486951361a3fa294d0bbe239d"),
    ("aarch64", True): (77, "a03eafe3fd84f4e088da14d2e167c5a32edb744e3af9fb6d718c3d734980c10a"),
    ("aarch64", False): (71, "e20c5b4370ac66e033c033a2cb10e89dca1737358dff3ee560dc3226e5503115"),
}


@pytest.mark.parametrize("arch,unix", sorted(GOLDEN))
def test_golden(arch, unix):
    prog = build_filter(arch, deny_unix_sockets=unix)
    assert (len(prog) // 8, seccomp.digest(prog)) == GOLDEN[(arch, unix)]


def test_aliases_and_unsupported_arch():
    assert build_filter("amd64", deny_unix_sockets=True) == build_filter("x86_64", deny_unix_sockets=True)
    assert build_filter("arm64", deny_unix_sockets=False) == build_filter("aarch64", deny_unix_sockets=False)
    with pytest.raises(ValueError, match="unsupported seccomp architecture 'riscv64'"):
        build_filter("riscv64", deny_unix_sockets=True)


# --- a tiny classic-BPF interpreter (the subset a seccomp program may use) ----------

def run_bpf(prog: bytes, nr: int, arch: int, args=(0, 0, 0, 0, 0, 0)) -> int:
    data = struct.pack("<iIQ6Q", nr, arch, 0, *args)
    ins = [struct.unpack_from("<HBBI", prog, i) for i in range(0, len(prog), 8)]
    pc, acc, steps = 0, 0, 0
    while True:
        steps += 1
        assert steps <= len(ins), "a loop: seccomp programs only jump forward"
        code, jt, jf, k = ins[pc]
        if code == 0x20:                       # ld [k]
            acc = struct.unpack_from("<I", data, k)[0]
            pc += 1
        elif code == 0x15:                     # jeq #k
            pc += 1 + (jt if acc == k else jf)
        elif code == 0x35:                     # jge #k
            pc += 1 + (jt if acc >= k else jf)
        elif code == 0x45:                     # jset #k
            pc += 1 + (jt if acc & k else jf)
        elif code == 0x54:                     # and #k
            acc &= k
            pc += 1
        elif code == 0x06:                     # ret #k
            return k
        else:
            raise AssertionError(f"unexpected opcode {code:#x} at {pc}")


EPERM = SECCOMP_RET_ERRNO | errno.EPERM
ENOSYS = SECCOMP_RET_ERRNO | errno.ENOSYS


@pytest.mark.parametrize("arch", seccomp.ARCHES)
def test_interpreter_decisions(arch):
    nr = syscall_numbers(arch)
    prog = build_filter(arch, deny_unix_sockets=True)
    aa = AUDIT_ARCH[arch]

    def ev(name_or_nr, *args):
        n = nr[name_or_nr] if isinstance(name_or_nr, str) else name_or_nr
        return run_bpf(prog, n, aa, args + (0,) * (6 - len(args)))

    for name, err, _ in seccomp.DENIED:
        assert ev(name) == SECCOMP_RET_ERRNO | err, name
    assert ev("clone3") == ENOSYS
    assert ev("socket", 1, 1) == EPERM                        # AF_UNIX
    assert ev("socket", 0xFFFFFFFF_00000001, 1) == EPERM      # high word ignored, as the kernel does
    assert ev("socket", 2, 1) == SECCOMP_RET_ALLOW            # AF_INET
    assert ev("socket", 10, 1) == SECCOMP_RET_ALLOW           # AF_INET6
    assert ev("socketpair", 1, 1) == SECCOMP_RET_ALLOW        # local pairs stay allowed
    assert ev("socketpair", 1, 5 | 0x80800) == SECCOMP_RET_ALLOW   # seqpacket, with flags
    assert ev("socketpair", 1, 2) == EPERM                    # datagram: sendto() takes a path
    assert ev("socketpair", 1, 3 | 0x80000) == EPERM          # SOCK_RAW is a datagram pair
    EAFNOSUPPORT = SECCOMP_RET_ERRNO | errno.EAFNOSUPPORT
    for family in (40, 17, 38, 31, 44, 0, 255):               # vsock, packet, alg, bt, xdp
        assert ev("socket", family, 1) == EAFNOSUPPORT, family
    assert ev("socket", 16, 3, 0) == SECCOMP_RET_ALLOW        # NETLINK_ROUTE
    assert ev("socket", 16, 3, 9) == SECCOMP_RET_ERRNO | errno.EPROTONOSUPPORT  # audit
    assert ev("pidfd_getfd", 3, 0) == EPERM
    assert ev("clone", 0x01200011) == SECCOMP_RET_ALLOW       # fork()'s flags
    assert ev("clone", 0x003D0F00) == SECCOMP_RET_ALLOW       # pthread_create's flags
    for flag in (0x10000000, 0x00020000, 0x40000000, 0x20000000, 0x80):
        assert ev("clone", 0x11 | flag) == EPERM, hex(flag)
        assert ev("unshare", flag) == EPERM, hex(flag)
    assert ev("unshare", 0x00000400) == SECCOMP_RET_ALLOW     # CLONE_FILES only
    # ordinary syscalls: read/write/openat/execve
    common = {"x86_64": (0, 1, 257, 59), "aarch64": (63, 64, 56, 221)}[arch]
    for n in common:
        assert ev(n) == SECCOMP_RET_ALLOW
    # wrong architecture: the whole process dies
    other = AUDIT_ARCH["aarch64" if arch == "x86_64" else "x86_64"]
    assert run_bpf(prog, 0, other) == SECCOMP_RET_KILL_PROCESS
    assert run_bpf(prog, 0, 0x40000003) == SECCOMP_RET_KILL_PROCESS   # AUDIT_ARCH_I386


@pytest.mark.parametrize("arch", seccomp.ARCHES)
def test_setuid_and_setgid_modes_are_refused(arch):
    """A root-run sandbox must not leave a setuid-root program in a writable root
    that no apply strips (the tooling dir, a profile's extra roots)."""
    prog = build_filter(arch, deny_unix_sockets=True)
    aa = AUDIT_ARCH[arch]
    calls = {name: (n, m, f) for name, n, m, f in seccomp.MODE_CALLS[arch]}
    assert set(calls) >= {"fchmod", "fchmodat", "fchmodat2", "mknodat", "openat"}

    def ev(name, mode, flags=0):
        n, m, f = calls[name]
        args = [7, 7, 7, 7, 0, 0]
        args[m] = mode
        if f is not None:
            args[f] = flags
        return run_bpf(prog, n, aa, tuple(args))

    for name, (_n, _m, f) in calls.items():
        creating = 0o100 if f is not None else 0
        for mode in (0o4755, 0o2755, 0o6777, 0o104755):
            assert ev(name, mode, creating) == EPERM, (name, oct(mode))
        assert ev(name, 0o755, creating) == SECCOMP_RET_ALLOW, name
        assert ev(name, 0o1777, creating) == SECCOMP_RET_ALLOW, name     # sticky is fine
    n, m, f = calls["openat"]
    # not creating: the mode argument is whatever the caller left, never looked at
    assert ev("openat", 0o4755, 0o2) == SECCOMP_RET_ALLOW
    assert ev("openat", 0o4755, 0o20000000 | 0o200000) == EPERM          # O_TMPFILE
    assert run_bpf(prog, seccomp.OPENAT2, aa) == ENOSYS


def test_x32_rejected_on_x86_64():
    prog = build_filter("x86_64", deny_unix_sockets=False)
    aa = AUDIT_ARCH["x86_64"]
    assert run_bpf(prog, 0x40000000 | 39, aa) == EPERM        # x32 getpid
    assert run_bpf(prog, 0x40000000 | 41, aa, (1, 0, 0, 0, 0, 0)) == EPERM  # x32 socket
    assert run_bpf(prog, 39, aa) == SECCOMP_RET_ALLOW


def test_unix_sockets_allowed_when_profile_says_so():
    for arch in seccomp.ARCHES:
        prog = build_filter(arch, deny_unix_sockets=False)
        nr = syscall_numbers(arch)
        assert run_bpf(prog, nr["socket"], AUDIT_ARCH[arch],
                       (1, 1, 0, 0, 0, 0)) == SECCOMP_RET_ALLOW
        assert run_bpf(prog, nr["socketpair"], AUDIT_ARCH[arch],
                       (1, 2, 0, 0, 0, 0)) == SECCOMP_RET_ALLOW
        assert run_bpf(prog, nr["socket"], AUDIT_ARCH[arch],
                       (40, 1, 0, 0, 0, 0)) == SECCOMP_RET_ERRNO | errno.EAFNOSUPPORT


# --- in a real bwrap sandbox ------------------------------------------------------

PY = "/usr/bin/python3"
needs_sandbox = pytest.mark.skipif(
    not shutil.which("bwrap") or seccomp.host_arch() is None or not os.path.exists(PY),
    reason="needs bwrap, a supported architecture and /usr/bin/python3")

PROBE = r"""
import ctypes, errno, os, socket, sys
libc = ctypes.CDLL(None, use_errno=True)
def res(f):
    try:
        r = f()
        return "ok" if r is None or r >= 0 else errno.errorcode[ctypes.get_errno()]
    except OSError as e:
        return errno.errorcode[e.errno]
sc = libc.syscall
sc.restype = ctypes.c_long
print("unix", res(lambda: socket.socket(socket.AF_UNIX).close()))
print("inet", res(lambda: socket.socket(socket.AF_INET).close()))
print("pair", res(lambda: [s.close() for s in socket.socketpair()] and None))
print("dgrampair", res(lambda: [s.close() for s in socket.socketpair(type=socket.SOCK_DGRAM)] and None))
print("vsock", res(lambda: socket.socket(40, socket.SOCK_STREAM).close()))
print("netlink", res(lambda: socket.socket(16, socket.SOCK_RAW, 0).close()))
print("pidfd_getfd", res(lambda: sc(438, os.pidfd_open(1), 0, 0)))
print("ptrace", res(lambda: libc.ptrace(0x4206, 1, 0, 0)))  # PTRACE_SEIZE of pid 1
print("clone3", res(lambda: sc(435, 0, 0)))
print("uring", res(lambda: sc(425, 1, ctypes.create_string_buffer(120))))
print("x32", res(lambda: sc(0x40000000 | 39)))
print("fork", res(lambda: os.waitpid(os.fork() or os._exit(0), 0) and None) if os.fork() else os._exit(0))
"""


def sandbox(argv, program: bytes | None):
    cmd = ["bwrap", "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp",
           "--unshare-all", "--die-with-parent", "--new-session"]
    with tempfile.TemporaryFile() as f:
        fds = ()
        if program is not None:
            f.write(program)
            f.flush()
            f.seek(0)
            cmd += ["--seccomp", str(f.fileno())]
            fds = (f.fileno(),)
        return subprocess.run(cmd + argv, pass_fds=fds, capture_output=True, text=True, timeout=60)


def probe(program):
    r = sandbox([PY, "-I", "-S", "-c", PROBE], program)
    assert r.returncode == 0, r.stderr
    return dict(line.split() for line in r.stdout.splitlines())


@needs_sandbox
@pytest.mark.sandbox
def test_real_filter_denies_and_allows():
    prog = build_filter(seccomp.host_arch(), deny_unix_sockets=True)
    got = probe(prog)
    assert got == {"unix": "EPERM", "inet": "ok", "pair": "ok", "dgrampair": "EPERM",
                   "vsock": "EAFNOSUPPORT", "netlink": "ok", "pidfd_getfd": "EPERM",
                   "ptrace": "EPERM", "clone3": "ENOSYS", "uring": "EPERM", "x32": "EPERM",
                   "fork": "ok"}


@needs_sandbox
@pytest.mark.sandbox
def test_control_without_filter():
    """Without the filter the same probes succeed: the filter is what denies them."""
    got = probe(None)
    assert got["unix"] == "ok" and got["ptrace"] == "ok" and got["dgrampair"] == "ok"
    assert got["pidfd_getfd"] == "ok"
    assert got["clone3"] in ("EFAULT", "EINVAL")


@needs_sandbox
@pytest.mark.sandbox
def test_unix_sockets_allowed_by_option():
    got = probe(build_filter(seccomp.host_arch(), deny_unix_sockets=False))
    assert (got["unix"], got["ptrace"], got["dgrampair"]) == ("ok", "EPERM", "ok")
    assert got["vsock"] == "EAFNOSUPPORT"


@needs_sandbox
@pytest.mark.sandbox
def test_nested_user_namespace_denied():
    prog = build_filter(seccomp.host_arch(), deny_unix_sockets=True)
    assert sandbox(["unshare", "-U", "true"], None).returncode == 0       # control
    r = sandbox(["unshare", "-U", "true"], prog)
    assert r.returncode != 0
    assert "Operation not permitted" in r.stderr
    r = sandbox(["unshare", "-m", "true"], prog)
    assert r.returncode != 0 and "Operation not permitted" in r.stderr


@needs_sandbox
@pytest.mark.sandbox
def test_ordinary_work_still_runs():
    prog = build_filter(seccomp.host_arch(), deny_unix_sockets=True)
    r = sandbox(["sh", "-c", f"{PY} -c 'print(1)' && git --version && ls / >/dev/null && echo done"], prog)
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert lines[0] == "1" and lines[1].startswith("git version") and lines[-1] == "done"
