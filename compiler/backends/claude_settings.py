"""Export a profile as a Claude Code ``settings.json`` block.

Two parts:

* ``sandbox``: Claude Code's own Bash sandbox (it is built on sandbox-runtime):
  ``enabled``, ``autoAllowBashIfSandboxed``, ``allowUnsandboxedCommands`` (always
  false: ``dangerouslyDisableSandbox`` must never take a command out of it),
  ``network.allowedDomains`` / ``allowAllUnixSockets``, and
  ``filesystem.allowWrite`` / ``denyWrite`` / ``denyRead``. Claude Code reads
  ``//path`` as absolute and ``/path`` as relative to the settings file, so
  absolute paths are written with a leading ``//``; ``~/`` stays as is.
* ``permissions.allow/ask/deny``: the profile's command rules as ``Bash(...)``
  rules, read-denied paths as ``Read(...)`` denials, protected paths as
  ``Edit(...)`` denials, network denials as ``WebFetch(domain:...)`` denials.

Command rules. ``Bash(git push *)`` is a prefix rule ("git push" then a space and
anything; the ``:*`` form is deprecated), ``Bash(npm test)`` an exact one.
ringfence's ``**`` tail (zero or more words) maps to the pair ``Bash(git push)`` +
``Bash(git push *)`` and ``{a,b}`` expands to one rule per alternative. A ``*`` or ``<hole>`` (one
word) has no Claude Code equivalent: for ``ask``/``deny`` the rule is widened
to the prefix before it (asking or denying more, never less); an ``allow``
rule with one is NOT exported (widening an allow would grant more). Both
cases are reported. Note also that Claude Code matches the command text,
while ringfence matches each capability after unwrapping wrappers (the notes
name what Claude's matching misses).

What the profile means, said in Claude Code's terms (issue 13):

* ``sandbox.failIfUnavailable``: a missing bwrap is a hard failure, never an
  unsandboxed run (fail closed).
* ``network.deniedDomains``: the profile's network deny list.
* ``network.strictAllowlist``: a domain that is not allowed is refused, not
  prompted for (ringfence never asks per domain). Without it Claude Code asks
  the person for every new domain, so Strict's "no network" would be one click
  away. ``allowManagedDomainsOnly`` blocks too, but only in managed settings.
  A profile without network also denies the ``WebFetch`` tool.
* A workspace the profile does not make writable (Observe) goes into
  ``filesystem.denyWrite`` (Claude Code's sandbox writes the cwd by default)
  and its Edit/Write tools are denied.
"""

from __future__ import annotations

import itertools
import json
import shlex

from ringfence.profiles.model import Profile

from .exportlib import (Export, common_unsupported, home_mask_gap, private_address_note, protected,
                        read_denied, srt_domains, writable_roots)

MAX_EXPANSION = 64


def _cc_path(path: str) -> str:
    return "/" + path if path.startswith("/") else path


def _word(w: str) -> str:
    return w if w and all(c.isalnum() or c in "-_./=:@+%," for c in w) else shlex.quote(w)


def bash_rules(pattern: str, action: str, unsupported: list[str]) -> list[str]:
    """Claude Code ``Bash(...)`` rules for one ringfence pattern (see module doc)."""
    from ringfence.profiles.patterns import PatternError, compile_pattern   # lark: export path only

    try:
        tokens = compile_pattern(pattern)
    except PatternError as exc:
        unsupported.append(f"{action} rule {pattern!r} does not parse ({exc.message}); "
                           "not exported")
        return []
    words: list[tuple[str, ...]] = []
    tail = False
    for i, tok in enumerate(tokens):
        kind = tok[0]
        if kind == "lit":
            words.append((tok[1],))
        elif kind == "alt":
            words.append(tuple(tok[1]))
        elif kind == "rest":
            tail = True
        else:   # "any" or "hole": one word, no equivalent
            what = "*" if kind == "any" else f"<{tok[1]}>"
            if action == "allow":
                unsupported.append(f"allow rule {pattern!r}: '{what}' (exactly one word) has "
                                   "no Claude Code equivalent; not exported (widening an "
                                   "allow would grant more)")
                return []
            unsupported.append(f"{action} rule {pattern!r}: '{what}' has no Claude Code "
                               f"equivalent; exported as a prefix rule (it {action}s more)")
            tail = True
            break
    combos = 1
    for w in words:
        combos *= len(w)
    if combos > MAX_EXPANSION:
        unsupported.append(f"{action} rule {pattern!r} expands to {combos} alternatives "
                           f"(> {MAX_EXPANSION}); not exported")
        return []
    out = []
    for combo in itertools.product(*words):
        text = " ".join(_word(w) for w in combo)
        out.append(f"Bash({text})")
        if tail:
            out.append(f"Bash({text} *)")
    return out


# Spellings of one action that Claude Code's text matching does not see, while
# ringfence's rules match the capability after unwrapping (gate.py).
MISSED = ("`git -C dir push`", "`/usr/bin/git push`", "`env git push`",
          "`command git push`", "`timeout 5 git push`")


def render(profile: Profile, *, workspace: str) -> Export:
    unsupported: list[str] = []
    net = profile.network
    allowed = srt_domains(net.allow, deny=False, unsupported=unsupported) \
        if net.mode == "proxy" else []
    note = private_address_note(profile)
    if note:
        unsupported.append(note)
    denied = srt_domains(net.deny, deny=True, unsupported=unsupported) \
        if net.mode == "proxy" else []
    unsupported.append("network.strictAllowlist (refuse, never prompt for, a domain that is "
                       "not allowed) is not in Claude Code's documentation yet (v2.1.219+); "
                       "an older Claude Code asks the person for each new domain instead")
    if profile.rules:
        unsupported.append("command rules: Claude Code matches the command text, so a "
                           "Bash(...) rule misses other spellings of the same action that "
                           "ringfence's rules catch, e.g. " + ", ".join(MISSED)
                           + "; keep the ringfence hook in front of it")
    unsupported += home_mask_gap(profile)
    unsupported += common_unsupported(profile, has_env=False, has_limits=False,
                                      has_private_tmp=False)
    unsupported.append("seccomp denials beyond Unix sockets (io_uring, mount, nested user "
                       "namespaces, ptrace, bpf, keyctl) follow Claude Code's sandbox, not "
                       "this profile")
    perms: dict[str, list[str]] = {"allow": [], "ask": [], "deny": []}
    from ringfence.rfcore.actions import READERS

    readers = []
    for rule in profile.rules:
        if rule.action == "allow" and rule.pattern.split(" ", 1)[0] in READERS:
            readers.append(rule.pattern)      # ringfence allows them inside the project only
            continue
        perms[rule.action] += bash_rules(rule.pattern, rule.action, unsupported)
    if readers:
        unsupported.append("allow rules for read-only programs (" + ", ".join(readers) + "): "
                           "ringfence allows them on the host only while every path stays "
                           "inside the project; a Bash(...) rule cannot say that, so they are "
                           "not exported")
    for path in read_denied(profile, workspace):
        p = _cc_path(path)
        perms["deny"] += [f"Read({p})", f"Read({p}/**)"]
    for path in protected(profile, workspace):
        p = _cc_path(path)
        perms["deny"] += [f"Edit({p})", f"Edit({p}/**)"]
    if net.mode == "proxy":
        for text in net.deny:
            perms["deny"].append(f"WebFetch(domain:{text})")
    else:
        perms["deny"].append("WebFetch")     # no network: Claude's own fetch tool neither
    writable = writable_roots(profile, workspace)
    deny_write = [_cc_path(p) for p in protected(profile, workspace)]
    if profile.sandbox and workspace not in writable:
        # Claude Code's sandbox (and its Edit/Write tools) write the cwd by default.
        deny_write.insert(0, _cc_path(workspace))
        perms["deny"] += (["Edit", "Write", "NotebookEdit"] if not writable else
                          [f"{t}({_cc_path(workspace)}/**)" for t in ("Edit", "Write")])
    sandbox = {
        "enabled": bool(profile.sandbox),
        # No bwrap means no Bash, never Bash without a sandbox (fail closed).
        "failIfUnavailable": bool(profile.sandbox),
        # ringfence runs sandboxed commands without asking unless a rule says
        # ask/deny; Claude Code still applies explicit ask/deny rules.
        "autoAllowBashIfSandboxed": bool(profile.sandbox),
        # Never: with it, one `dangerouslyDisableSandbox: true` in a Bash call runs the
        # command outside every sandbox. Host requests go through the ringfence hook,
        # which judges such a call as one (issue 20); Claude Code then ignores the flag.
        "allowUnsandboxedCommands": False,
        "network": {"allowedDomains": allowed, "deniedDomains": denied,
                    "strictAllowlist": True,
                    "allowAllUnixSockets": bool(net.allow_unix_sockets)},
        "filesystem": {
            "allowWrite": [_cc_path(p) for p in writable],
            "denyWrite": deny_write,
            "denyRead": [_cc_path(p) for p in read_denied(profile, workspace)],
        },
    }
    if not profile.sandbox:
        unsupported.append("profile runs with the sandbox off: exported with "
                           "sandbox.enabled = false")
    if profile.host != "deny":
        unsupported.append(f"host {profile.host!r} (host requests "
                           + ("ask; sandbox failures escalate to one" if profile.host ==
                              "escalate" else "ask") + "): exported with "
                           "allowUnsandboxedCommands = false, so Claude Code never runs a "
                           "command outside its sandbox; a host request goes through "
                           "`ringfence run --host` (or the ringfence hook without Claude's "
                           "sandbox)")
    settings = {
        "sandbox": sandbox,
        "permissions": {k: list(dict.fromkeys(v)) for k, v in perms.items()},
        "_unsupported": unsupported,
        "_source": f"ringfence profile {profile.name!r}",
    }
    return Export(json.dumps(settings, indent=2) + "\n", unsupported)
