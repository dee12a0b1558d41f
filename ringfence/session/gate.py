"""The gate: Verdict x Profile -> allow | ask | deny, with reasons. Pure.

Precedence is deny over ask over allow. Two contexts:

* ``host``: the command would run directly on the machine (a host request).
  Only harmless helpers pass freely; a one-time construct always asks (no
  grant or allow rule may cover it); every capability must be granted or
  allowed by a rule, and an ``ask`` rule (irreversible actions) overrides an
  allow rule unless the capability itself was granted.
* ``sandbox``: the command runs inside the profile's sandbox, which is the
  boundary, so only deny and ask rules matter (``git push`` under Build asks).

Rules match each capability's argv (never raw text), both as written and with
a multiplexer's global options removed (``git -C d push`` is ``git push``);
deny and ask rules also match the action's canonical spelling from the one
alias table, ``rfcore/actions.py`` (``git send-pack`` is ``git push``).
Deny and ask rules also see through a path (``/usr/bin/git push``); allow rules
never do, so a rule for ``sed`` cannot cover ``./sed``.

Rules apply to the capabilities of every verdict class: a one-time command
that also runs ``git push`` is still caught by a deny rule on ``git push``.
Lives in ``ringfence`` because ``classifier`` and ``profiles`` never import
each other. Imports no lark (compiled patterns come from the cache).
"""

from __future__ import annotations

from ringfence.rfcore.records import record
from typing import Literal

from ringfence.classifier.verdict import Capability, Verdict
from ringfence.profiles.model import CommandRule, Profile
from ringfence.profiles.pattern_cache import compiled_rules
from ringfence.profiles.patterns import Compiled, argv_views, match

DecisionKind = Literal["allow", "ask", "deny"]
Context = Literal["host", "sandbox"]


@record
class RuleMatch:
    """A command rule that matched one capability."""

    action: str                       # "allow" | "ask" | "deny"
    pattern: str
    key: str                          # the capability key it matched
    where: str                        # "file:line", or "" if unknown
    holes: tuple[tuple[str, str], ...] = ()

    def describe(self) -> str:
        holes = ", ".join(f"{k}={v}" for k, v in self.holes)
        bound = f" ({holes})" if holes else ""
        at = f" at {self.where}" if self.where else ""
        return f"{self.action} rule '{self.pattern}'{bound}{at}"

    def to_json(self) -> dict:
        return {"action": self.action, "pattern": self.pattern, "key": self.key,
                "where": self.where, "holes": dict(self.holes)}


@record
class Decision:
    decision: DecisionKind
    reasons: tuple[str, ...]
    matched: tuple[RuleMatch, ...] = ()

    def to_json(self) -> dict:
        return {"decision": self.decision, "reasons": list(self.reasons)}


def _where(rule: CommandRule) -> str:
    w = rule.where
    if w.file and w.line:
        return f"{w.file}:{w.line}"
    return w.file or ""


def _first_match(cap: Capability, rules, action: str) -> RuleMatch | None:
    views = argv_views(cap.key, cap.argv)
    passes = [views]
    if action != "allow":
        # deny/ask rules also match the canonical spelling (`git send-pack` pushes),
        # after every rule had its chance on the spelling as written
        passes.append(argv_views(cap.key, cap.argv, aliases=True)[len(views):])
    for group in passes:
        for rule, compiled in rules:
            if rule.action != action:
                continue
            for argv in group:
                holes = match(compiled, argv, by_basename=action != "allow")
                if holes is not None:
                    return RuleMatch(action, rule.pattern, cap.key, _where(rule),
                                     tuple(holes.items()))
    return None


def _one_time_reasons(verdict: Verdict) -> list[str]:
    if not verdict.findings:
        return ["one-time approval required"]
    return [f"one-time approval required: {f.code} {f.message}" for f in verdict.findings]


# In the sandbox the sandbox is the boundary, and deny/ask rules add policy on top
# for what the classifier can see. Some constructs hide *shell code* or the
# program name itself, so `bash -c "git push"`, `eval "git push"` or
# `g=git; $g push` could walk around `git push **`. Those are held for approval
# whenever the profile has deny or ask rules, unless the hidden code is a literal
# string we can classify ourselves (`bash -c '...'`, `eval '...'`): then the rules
# judge what is inside. Interpreter inline code (`python -c`, `node -e`, RF108)
# is not held: the sandbox contains it, and the docs say rules cannot see into it.
HIDES_PROGRAMS = frozenset({
    "RF003",            # dynamic command name
    "RF004",            # substitution in an unquoted heredoc body
    "RF109", "RF110", "RF111", "RF112", "RF113",   # options that run commands
    "RF114", "RF115",   # launchers that hand over to a shell
    "RF133",            # options that run another program (nc -e, git grep -O, ...)
    "RF118", "RF119", "RF121", "RF127",            # source, alias, trap, dynamic subcommand
    "RF143",            # a command stored as text in a value evaluated as code
})
# ringfence's own commands that approve, deny, grant, revoke, change the profile
# or run on the host (classifier/selfcontrol.py): denied outright, everywhere.
PERSON_ONLY = frozenset({"RF134"})
INLINE_SHELL = frozenset({"RF107", "RF117"})       # classified recursively when literal
SHELLS = frozenset({"sh", "bash", "dash", "zsh", "ksh", "mksh", "ash", "yash", "fish"})
_MAX_DEPTH = 4


def _overlaps(a: tuple[int, int], b: tuple[int, int]) -> bool:
    return a[0] < b[1] and b[0] < a[1]


def _inline_code(finding, verdict: Verdict) -> str | None:
    """The literal code a `bash -c` / `eval` finding runs, if its argv holds it."""
    for cap in verdict.capabilities:
        if not _overlaps(tuple(cap.span), tuple(finding.span)):
            continue
        argv = list(cap.argv)
        name = argv[0].rsplit("/", 1)[-1] if argv else ""
        if name == "eval":
            return " ".join(argv[1:])
        if name in SHELLS:
            i = 1
            while i < len(argv):
                a = argv[i]
                if a in ("-o", "+o"):
                    i += 2
                    continue
                if a.startswith("-") and not a.startswith("--") and "c" in a[1:]:
                    return argv[i + 1] if i + 1 < len(argv) else None
                if not a.startswith(("-", "+")):
                    break
                i += 1
    return None


def _hidden_code(verdict: Verdict, profile: Profile, grants: frozenset[str],
                 depth: int) -> "Decision | None":
    """A hold (or the inner decision) for code the rules cannot otherwise see."""
    held = []
    for f in verdict.findings:
        if f.code.startswith("RF0") or f.code in HIDES_PROGRAMS:
            held.append(f)
        elif f.code == "RF116" and any(
                c.program.rsplit("/", 1)[-1] in SHELLS for c in verdict.capabilities
                if _overlaps(tuple(c.span), tuple(f.span))):
            held.append(f)                       # a shell reading its program from stdin
        elif f.code in INLINE_SHELL:
            code = _inline_code(f, verdict)
            if code is None or depth >= _MAX_DEPTH:
                held.append(f)
                continue
            from ringfence.session.recent import recent   # the runner asks again

            inner = decide(recent(code), profile, grants=grants, context="sandbox",
                           _depth=depth + 1)   # no cwd: inner code is never exactly granted
            if inner.decision != "allow":
                where = f"inside {f.code} ({code!r})"
                return Decision(inner.decision, tuple(f"{where}: {r}" for r in inner.reasons),
                                inner.matched)
    if not held:
        return None
    return Decision("ask", tuple(
        f"{f.code} {f.message}: what it runs is hidden from the classifier, so the "
        f"deny/ask rules of '{profile.name}' cannot check it" for f in held))



def _exact_only(cap: Capability, ask: RuleMatch | None) -> bool:
    """An ask rule matched, or the action is irreversible: only an exact grant covers."""
    if ask is not None:
        return True
    from ringfence.rfcore.actions import irreversible

    return irreversible(argv_views(cap.key, cap.argv, aliases=True))


def _exactly_granted(verdict: Verdict, cap: Capability, grants, cwd) -> bool:
    if not grants:
        return False
    from ringfence.session.ask_grants import exact_token

    token = exact_token(verdict, cap, cwd)
    return token is not None and token in grants


def _reads_outside(cap: Capability, verdict: Verdict, cwd, workspace, home) -> str | None:
    from ringfence.session.host_reads import reads_outside

    return reads_outside(cap, verdict, cwd=cwd, workspace=workspace, home=home)


def grant_items(verdict: Verdict, profile: Profile | None, cwd: str | None, *,
                keys=None) -> tuple[str, ...]:
    """What a yes to ``verdict`` may store as grants (issue 20): each capability key
    (``keys``, default the verdict's), except a capability under an ask rule of
    ``profile`` or an irreversible action, which gets at most its exact grant
    (``session.ask_grants``), and nothing when even that is not safe. Without
    ``keys``, a verdict that is not ``capability`` grants nothing."""
    if keys is None:
        if verdict.verdict != "capability":
            return ()
        keys = verdict.keys
    from ringfence.session.ask_grants import exact_token

    rules = compiled_rules(profile) if profile is not None else ()
    out: list[str] = []
    for key in keys:
        caps = [c for c in verdict.capabilities if c.key == key]
        exact = [c for c in caps if _exact_only(c, _first_match(c, rules, "ask"))]
        if not exact:
            out.append(key)
            continue
        out.extend(t for c in exact if (t := exact_token(verdict, c, cwd)) is not None)
    return tuple(dict.fromkeys(out))


def decide(verdict: Verdict, profile: Profile, *, grants: frozenset[str] = frozenset(),
           context: Context = "host", cwd: str | None = None,
           workspace: str | None = None, home: str | None = None,
           _depth: int = 0) -> Decision:
    """Decide what happens to ``verdict`` under ``profile`` (see module docstring).

    ``grants`` holds capability keys and exact grants (``session.ask_grants``); an
    ask rule or an irreversible action is covered only by an exact grant of the
    same argv run from ``cwd``, never by a grant of its key. On the host an allow rule
    covers a file reader only inside ``cwd``, and ``cwd`` inside ``workspace``
    (``session.host_reads``)."""
    if context not in ("host", "sandbox"):
        raise ValueError(f"unknown gate context {context!r}")
    never = [f for f in verdict.findings if f.code in PERSON_ONLY]
    if never:
        # Approving is a person's act: no profile, grant, rule or context lets an
        # agent's command approve, grant, change the profile or leave the sandbox.
        return Decision("deny", tuple(f"{f.code} {f.message}" for f in never) + (
            "approve it yourself in a terminal, outside the agent, if you mean it",))
    rules: tuple[tuple[CommandRule, Compiled], ...] = compiled_rules(profile)
    caps = verdict.capabilities

    denied = [m for c in caps if (m := _first_match(c, rules, "deny"))]
    if denied:
        return Decision("deny", tuple(f"`{m.key}` is denied by {m.describe()}" for m in denied),
                        tuple(denied))

    if not profile.sandbox:
        return Decision("allow", (f"profile '{profile.name}' runs without a sandbox and "
                                  "asks no approvals (recorded)",))

    ask_of = [(c, _first_match(c, rules, "ask")) for c in caps]
    asks = [m for c, m in ask_of
            if m is not None and not _exactly_granted(verdict, c, grants, cwd)]
    if context == "sandbox":
        if asks:
            return Decision("ask", tuple(f"`{m.key}` needs approval: {m.describe()}"
                                         for m in asks), tuple(asks))
        if any(rule.action in ("deny", "ask") for rule, _ in rules):
            held = _hidden_code(verdict, profile, grants, _depth)
            if held is not None:
                return held
        return Decision("allow", (f"runs inside the '{profile.name}' sandbox",))

    # context == "host"
    if verdict.verdict == "helper":
        return Decision("allow", ("only harmless helpers and decoration",))
    if profile.host == "deny":
        return Decision("deny", (f"host requests are denied under {profile.name}",))
    if verdict.verdict != "capability" or not caps:
        # one_time, or anything unexpected (fail closed: never allow what we
        # cannot name as capabilities).
        reasons = _one_time_reasons(verdict)
        reasons += [f"`{m.key}` needs approval: {m.describe()}" for m in asks]
        return Decision("ask", tuple(reasons), tuple(asks))

    reasons: list[str] = []
    matched: list[RuleMatch] = list(asks)
    pending = False
    for cap, m in ask_of:
        key = cap.key
        exact = _exact_only(cap, m)
        if exact and _exactly_granted(verdict, cap, grants, cwd):
            reasons.append(f"`{key}` was approved exactly as written for this session")
        elif m is not None:
            reasons.append(f"`{key}` needs approval: {m.describe()}")
            pending = True
        elif not exact and key in grants and (
                far := _reads_outside(cap, verdict, cwd, workspace, home)) is not None:
            # A grant of a reader covers reads in the project; on the host a read
            # outside it (~/.ssh, ..) asks every time (session/host_reads.py).
            reasons.append(f"`{key}` {far}: its grant covers reads inside the project only")
            pending = True
        elif not exact and key in grants:
            reasons.append(f"`{key}` is granted")
        elif (allow := _first_match(cap, rules, "allow")) is not None \
                and (outside := _reads_outside(cap, verdict, cwd, workspace, home)) is None:
            # Every invocation of the key must be allowed, not just the first.
            matched.append(allow)
            reasons.append(f"`{key}` is allowed by {allow.describe()}")
        elif allow is not None:
            reasons.append(f"`{key}` {outside}: {allow.describe()} covers reads inside "
                           "the directory it runs in only")
            pending = True
        else:
            reasons.append(f"needs approval for capability `{key}`" + (
                " (an irreversible action: a grant of the key never covers it)"
                if exact and key in grants else ""))
            pending = True
    return Decision("ask" if pending else "allow", tuple(dict.fromkeys(reasons)),
                    tuple(dict.fromkeys(matched)))
