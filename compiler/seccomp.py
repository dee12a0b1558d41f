"""A seccomp filter for the sandboxed command, generated as classic BPF. Pure.

No libseccomp binding is needed: the program is small, and a pure generator is
deterministic, so it is golden-tested byte for byte and run through a BPF
interpreter in the tests without a kernel.

Shape of the program (``build_filter``):

  1. ``seccomp_data.arch`` must be this architecture, else KILL_PROCESS. A
     process must not dodge the number checks by entering through another
     syscall ABI (int 0x80 on x86-64 reports AUDIT_ARCH_I386).
  2. x86-64 only: a number with the x32 bit set is refused (EPERM). x32 calls
     reach the same kernel handlers under other numbers.
  3. Denied syscalls return an errno instead of running (EPERM, or ENOSYS for
     ``clone3``), so tools see an ordinary failure rather than a crash.
  4. Argument checks: ``socket``'s family against an ALLOWLIST
     (``SOCKET_FAMILIES``; AF_UNIX only when the profile allows Unix sockets,
     AF_NETLINK only for NETLINK_ROUTE), ``socketpair`` of datagram type when
     Unix sockets are denied, ``clone``/``unshare`` with any CLONE_NEW*
     namespace flag, and a file mode with the setuid or setgid bit
     (``MODE_CALLS``: chmod and friends, mknod, and open/openat when creating).
  5. Every other syscall is allowed: for syscalls this is a deny list for the
     kernel's attack surface and for sandbox escapes, not a full allowlist.

The same program binds every process in the sandbox (bwrap's init, the
in-sandbox launcher and the command): none of them holds a right the command
lacks, so borrowing one through ``/proc/PID/mem`` gains nothing (SPEC §4).

Decisions worth knowing:

* ``socketpair(AF_UNIX)`` of stream or seqpacket type stays allowed: a
  connected pair can reach nothing outside the process tree, and many tools
  (multiprocessing, asyncio, subprocess plumbing) rely on it. A *datagram*
  pair is refused when Unix sockets are denied: ``sendto`` and ``connect`` on
  it still take a path, so it would reach any host datagram socket by name.
* A family outside the allowlist gets EAFNOSUPPORT (as if the kernel lacked
  it, so tools fall back quietly); AF_UNIX keeps EPERM, which host-assisted
  escalation reads as a boundary denial. AF_VSOCK is never allowed: vsock is
  not network-namespaced and reaches the hypervisor and its other guests.
* ``clone3`` passes its flags in memory, where BPF cannot look, so it is denied
  with ENOSYS: glibc and musl then fall back to ``clone``, whose flags we check.
* Argument words: the kernel truncates ``socket``'s domain to ``int`` and uses
  the low 32 bits of ``clone``/``unshare`` flags (every CLONE_NEW* bit is
  there), so checking the low word of ``args[0]`` is exact. Both supported
  architectures are little-endian: the low word is at ``args[0]``'s offset.
"""

from __future__ import annotations

import errno as _errno
from ringfence.rfcore.hashing import sha256
import struct

# --- kernel constants (linux/filter.h, linux/seccomp.h, linux/audit.h) -------
BPF_LD_W_ABS = 0x20      # BPF_LD | BPF_W | BPF_ABS
BPF_JEQ_K = 0x15         # BPF_JMP | BPF_JEQ | BPF_K
BPF_JGE_K = 0x35         # BPF_JMP | BPF_JGE | BPF_K
BPF_JSET_K = 0x45        # BPF_JMP | BPF_JSET | BPF_K
BPF_AND_K = 0x54         # BPF_ALU | BPF_AND | BPF_K
BPF_RET_K = 0x06         # BPF_RET | BPF_K

SECCOMP_RET_KILL_PROCESS = 0x80000000
SECCOMP_RET_ERRNO = 0x00050000
SECCOMP_RET_ALLOW = 0x7FFF0000

# offsets in struct seccomp_data {int nr; u32 arch; u64 ip; u64 args[6];}
OFF_NR, OFF_ARCH, OFF_ARG0_LO, OFF_ARG1_LO, OFF_ARG2_LO = 0, 4, 16, 24, 32
OFF_ARG_LO = (16, 24, 32, 40, 48, 56)         # the low word of args[0..5]

AUDIT_ARCH = {"x86_64": 0xC000003E, "aarch64": 0xC00000B7}
X32_SYSCALL_BIT = 0x40000000
AF_UNIX = 1
AF_NETLINK = 16
NETLINK_ROUTE = 0
SOCK_TYPE_MASK = 0xF
SOCK_STREAM, SOCK_SEQPACKET = 1, 5

# socket() families the command may open, with why (linux/socket.h numbers).
# Everything else, AF_VSOCK (40), AF_PACKET (17), AF_ALG (38), AF_BLUETOOTH
# (31), AF_XDP (44) ... included, gets EAFNOSUPPORT. AF_UNIX is added only when
# the profile sets network.allow_unix_sockets.
SOCKET_FAMILIES: tuple[tuple[str, int, str], ...] = (
    ("AF_INET", 2, "the sandbox's own network namespace: loopback servers in tests, "
                   "and the proxy profiles' 127.0.0.1 relay"),
    ("AF_INET6", 10, "as AF_INET (::1); resolvers and clients probe it"),
    ("AF_NETLINK", AF_NETLINK, "NETLINK_ROUTE only, namespaced: glibc getifaddrs() "
                               "(node's os.networkInterfaces(), hostname -I, Go's "
                               "net.Interfaces) and getaddrinfo's AI_ADDRCONFIG probe"),
)

# Every CLONE_NEW* flag: a new namespace of any kind is a way out of (or a new
# attack surface around) the one bwrap built. CLONE_NEWTIME .. CLONE_NEWNET.
CLONE_NEWTIME = 0x00000080
CLONE_NEWNS = 0x00020000
CLONE_NEWCGROUP = 0x02000000
CLONE_NEWUTS = 0x04000000
CLONE_NEWIPC = 0x08000000
CLONE_NEWUSER = 0x10000000
CLONE_NEWPID = 0x20000000
CLONE_NEWNET = 0x40000000
CLONE_NS_MASK = (CLONE_NEWTIME | CLONE_NEWNS | CLONE_NEWCGROUP | CLONE_NEWUTS
                 | CLONE_NEWIPC | CLONE_NEWUSER | CLONE_NEWPID | CLONE_NEWNET)

ARCHES = ("x86_64", "aarch64")
_ALIASES = {"amd64": "x86_64", "x86-64": "x86_64", "arm64": "aarch64"}

# Syscall numbers (asm/unistd_64.h for x86-64, asm-generic/unistd.h for aarch64).
_NAMES = (
    "socket", "socketpair", "clone", "clone3", "unshare", "setns", "mount", "umount2",
    "pivot_root", "open_tree", "move_mount", "fsopen", "fsconfig", "fsmount", "fspick",
    "mount_setattr", "ptrace", "process_vm_readv", "process_vm_writev", "bpf", "keyctl",
    "add_key", "request_key", "perf_event_open", "kexec_load", "kexec_file_load",
    "init_module", "finit_module", "delete_module", "userfaultfd", "io_uring_setup",
    "io_uring_enter", "io_uring_register", "acct", "swapon", "swapoff", "reboot",
    "pidfd_getfd",
)
_X86_64 = (41, 53, 56, 435, 272, 308, 165, 166, 155, 428, 429, 430, 431, 432, 433, 442,
           101, 310, 311, 321, 250, 248, 249, 298, 246, 320, 175, 313, 176, 323, 425, 426,
           427, 163, 167, 168, 169, 438)
_AARCH64 = (198, 199, 220, 435, 97, 268, 40, 39, 41, 428, 429, 430, 431, 432, 433, 442,
            117, 270, 271, 280, 219, 217, 218, 241, 104, 294, 105, 273, 106, 282, 425, 426,
            427, 89, 224, 225, 142, 438)
_TABLES = {"x86_64": dict(zip(_NAMES, _X86_64, strict=True)),
           "aarch64": dict(zip(_NAMES, _AARCH64, strict=True))}

# Denied outright, with the reason each is on the list. Rows, not code.
DENIED: tuple[tuple[str, int, str], ...] = (
    ("clone3", _errno.ENOSYS, "flags live in memory; ENOSYS makes libc fall back to clone"),
    ("setns", _errno.EPERM, "joining another namespace"),
    ("mount", _errno.EPERM, "remounting the sandbox's read-only views"),
    ("umount2", _errno.EPERM, "uncovering masked paths"),
    ("pivot_root", _errno.EPERM, "replacing the root"),
    ("open_tree", _errno.EPERM, "new mount API"),
    ("move_mount", _errno.EPERM, "new mount API"),
    ("fsopen", _errno.EPERM, "new mount API"),
    ("fsconfig", _errno.EPERM, "new mount API"),
    ("fsmount", _errno.EPERM, "new mount API"),
    ("fspick", _errno.EPERM, "new mount API"),
    ("mount_setattr", _errno.EPERM, "changing mount flags"),
    ("ptrace", _errno.EPERM, "tracing can rewrite any process in the sandbox"),
    ("process_vm_readv", _errno.EPERM, "reading another process's memory"),
    ("process_vm_writev", _errno.EPERM, "writing another process's memory"),
    ("bpf", _errno.EPERM, "kernel attack surface"),
    ("keyctl", _errno.EPERM, "the kernel keyring is not namespaced"),
    ("add_key", _errno.EPERM, "the kernel keyring is not namespaced"),
    ("request_key", _errno.EPERM, "the kernel keyring is not namespaced"),
    ("perf_event_open", _errno.EPERM, "kernel attack surface and side channels"),
    ("kexec_load", _errno.EPERM, "host kernel control"),
    ("kexec_file_load", _errno.EPERM, "host kernel control"),
    ("init_module", _errno.EPERM, "host kernel control"),
    ("finit_module", _errno.EPERM, "host kernel control"),
    ("delete_module", _errno.EPERM, "host kernel control"),
    ("userfaultfd", _errno.EPERM, "a staple of kernel exploits"),
    ("io_uring_setup", _errno.EPERM, "io_uring bypasses syscall filtering"),
    ("io_uring_enter", _errno.EPERM, "io_uring bypasses syscall filtering"),
    ("io_uring_register", _errno.EPERM, "io_uring bypasses syscall filtering"),
    ("acct", _errno.EPERM, "host accounting"),
    ("swapon", _errno.EPERM, "host memory control"),
    ("swapoff", _errno.EPERM, "host memory control"),
    ("reboot", _errno.EPERM, "host control"),
    ("pidfd_getfd", _errno.EPERM, "taking another process's file descriptors"),
)
# Denied only with certain arguments (see build_filter).
CONDITIONAL: tuple[tuple[str, str], ...] = (
    ("socket", "a family not in SOCKET_FAMILIES (AF_UNIX when deny_unix_sockets: host "
               "Unix sockets such as docker, ssh-agent and D-Bus are reachable through "
               "the shared filesystem), or AF_NETLINK other than NETLINK_ROUTE"),
    ("socketpair", "a datagram pair, when deny_unix_sockets: sendto() on it takes a path"),
    ("clone", "any CLONE_NEW* flag: no nested namespaces"),
    ("unshare", "any CLONE_NEW* flag: no nested namespaces"),
    ("chmod, fchmod, fchmodat, fchmodat2, mknod, mknodat, creat, open, openat",
     "a mode with the setuid or setgid bit (open/openat only when creating): a "
     "root-run sandbox would leave a setuid-root program in a writable root the "
     "host keeps (the tooling dir, a profile's extra roots), where no apply strips it"),
    ("openat2", "ENOSYS: its mode lives in memory; libc falls back to openat"),
)

# Calls that take a file mode, by architecture: (number, the argument holding the
# mode, the argument holding open's flags or None). The setuid and setgid bits in
# that mode are refused (EPERM); open and openat look at the mode only when they
# create (O_CREAT or O_TMPFILE), since without those it is whatever the caller left.
S_ISUID_GID = 0o6000
O_CREAT_TMPFILE = 0o100 | 0o20000000          # O_CREAT | __O_TMPFILE (both arches)
MODE_CALLS: dict[str, tuple[tuple[str, int, int, int | None], ...]] = {
    "x86_64": (("chmod", 90, 1, None), ("fchmod", 91, 1, None), ("fchmodat", 268, 2, None),
               ("fchmodat2", 452, 2, None), ("mknod", 133, 1, None), ("mknodat", 259, 2, None),
               ("creat", 85, 1, None), ("open", 2, 2, 1), ("openat", 257, 3, 2)),
    "aarch64": (("fchmod", 52, 1, None), ("fchmodat", 53, 2, None), ("fchmodat2", 452, 2, None),
                ("mknodat", 33, 2, None), ("openat", 56, 3, 2)),
}
OPENAT2 = 437                                 # both arches


def _arch(arch: str) -> str:
    a = _ALIASES.get(arch, arch)
    if a not in AUDIT_ARCH:
        raise ValueError(f"unsupported seccomp architecture {arch!r} "
                         f"(supported: {', '.join(ARCHES)})")
    return a


def syscall_numbers(arch: str) -> dict[str, int]:
    """Name → number for the syscalls the filter mentions, for ``arch``."""
    return dict(_TABLES[_arch(arch)])


class _Asm:
    """Tiny assembler: instructions with symbolic forward jump targets."""

    def __init__(self) -> None:
        self.ins: list[tuple[int, object, object, int]] = []
        self.labels: dict[str, int] = {}

    def emit(self, code: int, k: int, jt: object = 0, jf: object = 0) -> None:
        self.ins.append((code, jt, jf, k))

    def label(self, name: str) -> None:
        self.labels[name] = len(self.ins)

    def assemble(self) -> bytes:
        out = bytearray()
        for pc, (code, jt, jf, k) in enumerate(self.ins):
            offs = []
            for target in (jt, jf):
                off = target if isinstance(target, int) else self.labels[target] - pc - 1
                if not 0 <= off <= 255:
                    raise AssertionError(f"BPF jump out of range at {pc}: {off}")
                offs.append(off)
            out += struct.pack("<HBBI", code, offs[0], offs[1], k)
        return bytes(out)


def build_filter(arch: str, *, deny_unix_sockets: bool) -> bytes:
    """The packed ``struct sock_filter`` array for ``arch``; ValueError if unsupported."""
    a = _arch(arch)
    nr = _TABLES[a]
    asm = _Asm()
    asm.emit(BPF_LD_W_ABS, OFF_ARCH)
    asm.emit(BPF_JEQ_K, AUDIT_ARCH[a], 1, 0)
    asm.emit(BPF_RET_K, SECCOMP_RET_KILL_PROCESS)
    asm.emit(BPF_LD_W_ABS, OFF_NR)
    if a == "x86_64":
        asm.emit(BPF_JGE_K, X32_SYSCALL_BIT, "eperm", 0)
    for name, err, _why in DENIED:
        asm.emit(BPF_JEQ_K, nr[name], "enosys" if err == _errno.ENOSYS else "eperm", 0)
    asm.emit(BPF_JEQ_K, nr["socket"], "socket", 0)
    if deny_unix_sockets:
        asm.emit(BPF_JEQ_K, nr["socketpair"], "socketpair", 0)
    asm.emit(BPF_JEQ_K, nr["clone"], "nsflags", 0)
    asm.emit(BPF_JEQ_K, nr["unshare"], "nsflags", 0)
    asm.emit(BPF_JEQ_K, OPENAT2, "enosys", 0)
    modes = MODE_CALLS[a]
    for _name, number, mode_arg, flags_arg in modes:
        asm.emit(BPF_JEQ_K, number, f"mode{mode_arg}_{flags_arg}", 0)
    asm.emit(BPF_RET_K, SECCOMP_RET_ALLOW)
    # a file mode: never setuid or setgid (open/openat: only when creating)
    for mode_arg, flags_arg in sorted({(m, f) for _n, _nr, m, f in modes},
                                      key=lambda mf: (mf[0], -1 if mf[1] is None else mf[1])):
        asm.label(f"mode{mode_arg}_{flags_arg}")
        if flags_arg is not None:
            asm.emit(BPF_LD_W_ABS, OFF_ARG_LO[flags_arg])
            asm.emit(BPF_JSET_K, O_CREAT_TMPFILE, 0, "allow")
        asm.emit(BPF_LD_W_ABS, OFF_ARG_LO[mode_arg])
        asm.emit(BPF_JSET_K, S_ISUID_GID, "eperm", "allow")
    # socket(): the family must be on the allowlist.
    asm.label("socket")
    asm.emit(BPF_LD_W_ABS, OFF_ARG0_LO)
    for _name, family, _why in SOCKET_FAMILIES:
        asm.emit(BPF_JEQ_K, family, "netlink" if family == AF_NETLINK else "allow", 0)
    asm.emit(BPF_JEQ_K, AF_UNIX, "eperm" if deny_unix_sockets else "allow", 0)
    asm.emit(BPF_RET_K, SECCOMP_RET_ERRNO | _errno.EAFNOSUPPORT)
    asm.label("netlink")
    asm.emit(BPF_LD_W_ABS, OFF_ARG2_LO)
    asm.emit(BPF_JEQ_K, NETLINK_ROUTE, "allow", 0)
    asm.emit(BPF_RET_K, SECCOMP_RET_ERRNO | _errno.EPROTONOSUPPORT)
    if deny_unix_sockets:
        # socketpair(): only connected stream/seqpacket pairs (flags masked off).
        asm.label("socketpair")
        asm.emit(BPF_LD_W_ABS, OFF_ARG1_LO)
        asm.emit(BPF_AND_K, SOCK_TYPE_MASK)
        asm.emit(BPF_JEQ_K, SOCK_STREAM, "allow", 0)
        asm.emit(BPF_JEQ_K, SOCK_SEQPACKET, "allow", 0)
        asm.emit(BPF_RET_K, SECCOMP_RET_ERRNO | _errno.EPERM)
    asm.label("nsflags")
    asm.emit(BPF_LD_W_ABS, OFF_ARG0_LO)
    asm.emit(BPF_JSET_K, CLONE_NS_MASK, "eperm", 0)
    asm.emit(BPF_RET_K, SECCOMP_RET_ALLOW)
    asm.label("eperm")
    asm.emit(BPF_RET_K, SECCOMP_RET_ERRNO | _errno.EPERM)
    asm.label("enosys")
    asm.emit(BPF_RET_K, SECCOMP_RET_ERRNO | _errno.ENOSYS)
    asm.label("allow")          # after every check: BPF only jumps forward
    asm.emit(BPF_RET_K, SECCOMP_RET_ALLOW)
    return asm.assemble()


def digest(program: bytes) -> str:
    """sha256 of a program, for golden tests and the ledger's spec hash."""
    return sha256(program).hexdigest()


def host_arch() -> str | None:
    """This machine's filter architecture, or None if unsupported (fail closed)."""
    import platform
    m = platform.machine()
    m = _ALIASES.get(m, m)
    return m if m in AUDIT_ARCH else None


if __name__ == "__main__":   # python3 -m ringfence.compiler.seccomp [--allow-unix-sockets] > filter.bpf
    import sys

    arch = host_arch()
    if arch is None:
        sys.exit("no seccomp filter for this architecture")
    sys.stdout.buffer.write(build_filter(arch, deny_unix_sockets="--allow-unix-sockets"
                                         not in sys.argv[1:]))
