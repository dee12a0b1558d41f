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

from ringfence.rfcore.hashing import sha256
import json
from ringfence.rfcore.records import record
from ringfence.rfcore.notes import Note  # noqa: F401 - part of the spec's vocabulary


class _Op:
    """A frozen, slotted record compared by type and values.

    Not a dataclass on purpose: ``ringfence run`` imports this module on every
    command, and generating ~20 frozen dataclasses costs several milliseconds.
    """

    __slots__ = ()
    FIELDS: tuple[str, ...] = ()
    DEFAULTS: dict = {}

    def __init__(self, *args, **kwargs) -> None:
        names = self.FIELDS
        if len(args) > len(names):
            raise TypeError(f"{type(self).__name__} takes {len(names)} arguments")
        values = dict(self.DEFAULTS)
        values.update(zip(names, args))
        for key, value in kwargs.items():
            if key not in names or key in names[:len(args)]:
                raise TypeError(f"{type(self).__name__}: bad argument {key!r}")
            values[key] = value
        for name in names:
            if name not in values:
                raise TypeError(f"{type(self).__name__}: missing argument {name!r}")
            object.__setattr__(self, name, values[name])

    def __setattr__(self, name, value):
        raise AttributeError(f"{type(self).__name__} is frozen")

    __delattr__ = __setattr__

    def values(self) -> tuple:
        return tuple(getattr(self, n) for n in self.FIELDS)

    def __eq__(self, other):
        if not isinstance(other, _Op):
            return NotImplemented
        return type(self) is type(other) and self.values() == other.values()

    def __hash__(self) -> int:
        return hash((type(self).__name__, self.values()))

    def __repr__(self) -> str:
        inner = ", ".join(f"{n}={getattr(self, n)!r}" for n in self.FIELDS)
        return f"{type(self).__name__}({inner})"


def _op(name: str, fields: str = "", doc: str = "", **defaults):
    names = tuple(fields.split())
    return type(name, (_Op,), {"__slots__": names, "FIELDS": names, "DEFAULTS": defaults,
                               "__doc__": doc, "__module__": __name__})


RoBind = _op("RoBind", "src dst may_be_missing", "Bind a host path read-only.",
             may_be_missing=False)
Bind = _op("Bind", "src dst may_be_missing", "Bind a host path writable.",
           may_be_missing=False)
Tmpfs = _op("Tmpfs", "dst", "An empty, private tmpfs (also how directories are masked).")
DevNullOver = _op("DevNullOver", "dst", "Mask a file: bind /dev/null read-only over it.")
Sanitized = _op("Sanitized", "src dst kind",
                "Serve a host config file read-only with its secrets removed "
                "(compiler/sanitize.py KINDS): the executor hands bwrap the cleaned bytes "
                "through a memfd; an export without one masks the file instead.")
Broker = _op("Broker", "entries helper",
             "The per-run credential broker: entries are (name, source, domains, "
             "username); git asks through the helper at ``helper`` (an inherited fd to "
             "ringfence on the host; no path to open, no value in the spec).")
Proc = _op("Proc", "dst", "A fresh /proc of the sandbox's own pid namespace.", dst="/proc")
Dev = _op("Dev", "dst", "A minimal /dev (null, zero, random, tty, pts...).", dst="/dev")
UnshareAll = _op("UnshareAll", "", "Every namespace: user, pid, net, ipc, uts, cgroup, mount.")
DisableUserns = _op("DisableUserns", "",
                    "No nested user namespaces inside (defence in depth beside seccomp).")
DieWithParent = _op("DieWithParent", "", "The sandbox dies when ringfence dies.")
NewSession = _op("NewSession", "",
                 "setsid: the sandbox cannot inject keystrokes into our terminal (TIOCSTI).")
CapDropAll = _op("CapDropAll", "", "No capabilities, even for root.")
ClearEnv = _op("ClearEnv", "", "Start from an empty environment.")
SetEnv = _op("SetEnv", "name value", "Set a variable to a constant.")
PassEnv = _op("PassEnv", "name", "Pass the named variable's value from the run's environment.")
Seccomp = _op("Seccomp", "deny_unix_sockets", "Apply ringfence's seccomp filter.",
              deny_unix_sockets=True)
Rlimit = _op("Rlimit", "kind value", 'A resource limit: kind "as" | "nproc" | "fsize" | '
             '"stage" (bytes of staged writes, watched by the supervisor).')
Chdir = _op("Chdir", "path", "The working directory inside.")
Proxy = _op("Proxy", "allow deny listen socket_dir",
            "Network only through the host proxy, reached by an in-sandbox relay; "
            "socket_dir is where the host socket dir appears inside.",
            listen="127.0.0.1:3128", socket_dir="/tmp/.ringfence-proxy")
Stage = _op("Stage", "path",
            "Stage every write under this writable root in an overlay (the root is its "
            "lower layer, the upper lives in ringfence's private state): nothing reaches "
            "the host until ringfence applies it, judging what the host obeys.")

Op = (RoBind | Bind | Tmpfs | DevNullOver | Proc | Dev | UnshareAll | DisableUserns
      | DieWithParent | NewSession | CapDropAll | ClearEnv | SetEnv | PassEnv | Seccomp
      | Rlimit | Chdir | Proxy | Stage | Sanitized | Broker)


@record
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
        """sha256 of the canonical JSON; a spec is frozen, so it is computed once (a
        warm run asks twice: its spare's key and its ledger row)."""
        known = self.__dict__.get("_digest")
        if known is None:
            canonical = json.dumps(self.to_json(), sort_keys=True, separators=(",", ":"))
            known = self.__dict__["_digest"] = sha256(canonical.encode()).hexdigest()
        return known


def _op_json(op) -> dict:
    out: dict = {"op": type(op).__name__}
    for name in op.FIELDS:
        value = getattr(op, name)
        out[name] = list(value) if isinstance(value, tuple) else value
    return out
