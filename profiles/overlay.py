"""What makes one profile looser than another: the workspace-overlay rule (RF513).

A profile file inside the workspace can be edited by the agent (its own edit
tool never passes through the sandbox) and arrives with every cloned
repository. So it is never a profile of its own: it is applied on top of the
profile that would be active without it (the *base*), and the result must be
no looser than the base in any setting that widens what a sandboxed command
can reach. :func:`loosenings` is that comparison; ``ringfence.profiles.load`` places each
finding at the file, line and key that caused it.

Pure data comparison: stdlib only, it runs on the per-command hot path whenever
a workspace has a ``.ringfence.toml``.
"""

from __future__ import annotations

from ringfence.rfcore.execvars import exec_var

from .model import Profile

# deny < ask < escalate: escalate turns sandbox failures into host requests.
HOST_ORDER = {"deny": 0, "ask": 1, "escalate": 2}
MODE_ORDER = {"none": 0, "proxy": 1}
LIMITS = ("timeout", "memory_mb", "pids", "file_size_mb")


def _added(kp: str, what: str, base: tuple, result: tuple) -> list[tuple[str, str, object]]:
    have = set(base)
    return [(kp, what.format(item=item), item) for item in result if item not in have]


def _dropped(kp: str, what: str, base: tuple, result: tuple) -> list[tuple[str, str, object]]:
    # List extension cannot drop an inherited entry; checked anyway, because a
    # future merge rule that could would silently reopen what the base closed.
    have = set(result)
    return [(kp, what.format(item=item), None) for item in base if item not in have]


def loosenings(base: Profile, result: Profile) -> list[tuple[str, str, object]]:
    """Every way ``result`` is looser than ``base``: (key path, what it does, list item).

    ``what`` completes "a profile file inside the workspace cannot ...". The
    list item (None for scalars) lets the caller find where it was written.
    Tightening (extra read_deny, write_protect, network.deny, deny/ask rules,
    lower limits, env.set of a variable that does not change what runs, another
    description) is not reported.
    """
    out: list[tuple[str, str, object]] = []
    if base.sandbox and not result.sandbox:
        out.append(("sandbox", "turn the sandbox off", None))
    if HOST_ORDER[result.host] > HOST_ORDER[base.host]:
        out.append(("host", f'loosen host requests from "{base.host}" to "{result.host}"',
                    None))
    if base.hook_grant == "once" and result.hook_grant != "once":
        out.append(("hook.grant", "turn a yes in Claude Code into a session grant "
                    '(hook.grant "once" -> "session")', None))
    bn, rn = base.network, result.network
    if MODE_ORDER[rn.mode] > MODE_ORDER[bn.mode]:
        out.append(("network.mode", f'open the network (mode "{bn.mode}" -> "{rn.mode}")',
                    None))
    out += _added("network.allow", "allow the domain {item!r}", bn.allow, rn.allow)
    out += _dropped("network.deny", "drop the network deny entry {item!r}", bn.deny, rn.deny)
    if rn.allow_unix_sockets and not bn.allow_unix_sockets:
        out.append(("network.allow_unix_sockets", "allow AF_UNIX sockets", None))
    bf, rf = base.filesystem, result.filesystem
    # Strictly "not in the base", even under {workspace}: a new root that is a
    # symlink in the workspace would bind its target writable.
    out += _added("filesystem.writable", "make {item!r} writable", bf.writable, rf.writable)
    out += _dropped("filesystem.read_deny", "drop the read-deny entry {item!r}",
                    bf.read_deny, rf.read_deny)
    out += _dropped("filesystem.write_protect", "drop the write-protect entry {item!r}",
                    bf.write_protect, rf.write_protect)
    if bf.private_tmp and not rf.private_tmp:
        out.append(("filesystem.private_tmp", "turn the private /tmp off", None))
    if bf.mask_home and not rf.mask_home:
        out.append(("filesystem.mask_home", "unmask the home directory", None))
    out += _added("filesystem.read_allow", "make {item!r} readable", bf.read_allow,
                  rf.read_allow)
    # A credential source is read (or a command run) ON THE HOST when a run starts:
    # a project file must never add one.
    out += [("credentials", f"add the brokered credential {c.name!r} (its source is read "
             "on the host)", None) for c in result.credentials
            if (c.name, c.source, c.domains) not in
            {(b.name, b.source, b.domains) for b in base.credentials}]
    bt, rt = base.tooling, result.tooling
    if rt.enabled and not bt.enabled:
        out.append(("tooling.enabled", "enable the writable tooling dir", None))
    elif rt.enabled and rt.dir != bt.dir:
        # The tooling dir is a writable root: moving it (to "~", say) widens writes.
        out.append(("tooling.dir", f"move the writable tooling dir to {rt.dir!r}", None))
    benv, renv = base.env, result.env
    out += _added("env.pass", "pass the variable {item!r} into the sandbox",
                  benv.pass_, renv.pass_)
    out += _added("env.allow_credentials", "opt the credential {item!r} into the sandbox",
                  benv.allow_credentials, renv.allow_credentials)
    # A value that changes what runs (LD_PRELOAD, BASH_ENV, PYTHONPATH, NODE_OPTIONS,
    # PATH, ...: the classifier's RF122 table) would run the workspace's code in
    # every sandboxed command, the relay included: setting or changing one is a
    # loosening. Other values (a locale, a CI flag) only narrow what the command sees.
    was_set = dict(benv.set)
    out += [(f"env.set.{name}", f"set the variable {name!r}, which changes what runs", None)
            for name, value in renv.set if exec_var(name) and was_set.get(name) != value]
    for k in LIMITS:
        b, r = getattr(base.limits, k), getattr(result.limits, k)
        if b is not None and r is None:
            out.append((f"limits.{k}", f"remove limits.{k} (was {b})", None))
        elif b is not None and r > b:
            out.append((f"limits.{k}", f"raise limits.{k} from {b} to {r}", None))
    for a in ("allow", "ask", "deny"):
        was = tuple(r.pattern for r in base.rules if r.action == a)
        now = tuple(r.pattern for r in result.rules if r.action == a)
        if a == "allow":   # allow rules skip the approval of host requests
            out += _added("commands.allow", "add the allow rule {item!r}", was, now)
        else:
            out += _dropped(f"commands.{a}", f"drop the {a} rule {{item!r}}", was, now)
    return out
