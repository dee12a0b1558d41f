"""SandboxSpec: an ordered tuple of typed, frozen setup ops.

Like bubblewrap itself, a sandbox is a list of setup steps executed in order;
order matters (a tmpfs over /tmp must come before binds below /tmp, a mask
over a secret must come after the bind that would reveal it). Backends render
the ops; only ``compiler/backends/bwrap.py`` spells bwrap flags.

``digest()`` is the sha256 of the canonical JSON; the ledger stores it. The
spec never holds environment *values* of the host (only names to pass), so
the digest is stable and the JSON can be stored without leaking secrets.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, fields


@dataclass(frozen=True)
class RoBind:
    src: str
    dst: str
    may_be_missing: bool = False


@dataclass(frozen=True)
class Bind:
    src: str
    dst: str
    may_be_missing: bool = False


@dataclass(frozen=True)
class Tmpfs:
    dst: str


@dataclass(frozen=True)
class DevNullOver:
    """Mask a file: bind /dev/null read-only over it."""
    dst: str


@dataclass(frozen=True)
class Proc:
    dst: str = "/proc"


@dataclass(frozen=True)
class Dev:
    dst: str = "/dev"


@dataclass(frozen=True)
class UnshareAll:
    """Every namespace: user, pid, net, ipc, uts, cgroup, mount."""


@dataclass(frozen=True)
class DisableUserns:
    """No nested user namespaces inside (defence in depth beside seccomp)."""


@dataclass(frozen=True)
class DieWithParent:
    pass


@dataclass(frozen=True)
class NewSession:
    """setsid: the sandbox cannot inject keystrokes into our terminal (TIOCSTI)."""


@dataclass(frozen=True)
class CapDropAll:
    pass


@dataclass(frozen=True)
class ClearEnv:
    pass


@dataclass(frozen=True)
class SetEnv:
    name: str
    value: str


@dataclass(frozen=True)
class PassEnv:
    """Pass the named variable's value from the run's environment, if set."""
    name: str


@dataclass(frozen=True)
class Seccomp:
    deny_unix_sockets: bool = True


@dataclass(frozen=True)
class Rlimit:
    kind: str       # "as" | "nproc" | "fsize"
    value: int


@dataclass(frozen=True)
class Chdir:
    path: str


@dataclass(frozen=True)
class Proxy:
    """Network only through the host proxy, reached by an in-sandbox relay."""
    allow: tuple[str, ...]
    deny: tuple[str, ...]
    listen: str = "127.0.0.1:3128"
    socket_dir: str = "/tmp/.ringfence-proxy"   # where the host socket dir appears inside


@dataclass(frozen=True)
class Protect:
    """A write-protected path that did not exist at compile time.

    Nothing is mounted for it (that would leave a placeholder on the host);
    the executor journals it and reports/removes it if the run creates it.
    """
    path: str


Op = (RoBind | Bind | Tmpfs | DevNullOver | Proc | Dev | UnshareAll | DisableUserns
      | DieWithParent | NewSession | CapDropAll | ClearEnv | SetEnv | PassEnv | Seccomp
      | Rlimit | Chdir | Proxy | Protect)


@dataclass(frozen=True)
class Note:
    """A compile-time finding (RF6xx) shown to the user and stored in the ledger."""
    code: str
    message: str


@dataclass(frozen=True)
class SandboxSpec:
    profile: str
    workspace: str | None
    ops: tuple[Op, ...]
    notes: tuple[Note, ...] = ()
    sandboxed: bool = True          # False only for the host profile

    def of(self, kind: type) -> list:
        return [op for op in self.ops if isinstance(op, kind)]

    @property
    def proxy(self) -> Proxy | None:
        found = self.of(Proxy)
        return found[0] if found else None

    @property
    def seccomp(self) -> Seccomp | None:
        found = self.of(Seccomp)
        return found[0] if found else None

    def to_json(self) -> dict:
        return {
            "profile": self.profile,
            "workspace": self.workspace,
            "sandboxed": self.sandboxed,
            "ops": [_op_json(op) for op in self.ops],
            "notes": [{"code": n.code, "message": n.message} for n in self.notes],
        }

    def digest(self) -> str:
        canonical = json.dumps(self.to_json(), sort_keys=True, separators=(",", ":"))
        return hashlib.sha256(canonical.encode()).hexdigest()


def _op_json(op) -> dict:
    out: dict = {"op": type(op).__name__}
    for f in fields(op):
        value = getattr(op, f.name)
        out[f.name] = list(value) if isinstance(value, tuple) else value
    return out
