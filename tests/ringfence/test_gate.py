"""ringfence.session.gate: a table over the built-in profiles x verdict kinds x contexts."""

from __future__ import annotations

import pytest

from ringfence.classifier.verdict import Capability, Finding, Verdict
from ringfence.profiles.load import load_profile
from ringfence.session.gate import Decision, decide

PROFILES = {n: load_profile(n) for n in ("observe", "build", "strict", "host-assisted", "host")}


def cap(*argv: str, key: str | None = None) -> Capability:
    return Capability(key or argv[0], argv[0], tuple(argv), (0, len(" ".join(argv))))


def verdict(kind: str, *caps: Capability, findings=()) -> Verdict:
    return Verdict(" ; ".join(" ".join(c.argv) for c in caps) or "true", kind, tuple(caps),
                   (), tuple(findings))


HELPER = verdict("helper")
LS = verdict("capability", cap("ls", "-la"))
TWO = verdict("capability", cap("ls"), cap("longbridge", "news", "AAPL"))
ONE_TIME = verdict("one_time", cap("python3", "-c", "print(1)"),
                   findings=(Finding("RF108", "inline code: python3 -c", (0, 18)),))
# A one-time construct that hides no program: a redirection writing a file.
WRITE = verdict("one_time", cap("echo", "hi"),
                findings=(Finding("RF105", "a redirection writes a file", (8, 14)),))
HIDDEN_PUSH = verdict("one_time", cap("bash", "-c", "git push"),
                      findings=(Finding("RF107", "`bash -c` runs inline code", (0, 7)),))
HIDDEN_MAKE = verdict("one_time", cap("bash", "-lc", "make test 2>&1 | tail -3"),
                      findings=(Finding("RF107", "`bash -c` runs inline code", (0, 8)),))
DYNAMIC = verdict("one_time", findings=(Finding("RF003", "the program name `$g` is decided "
                                                "at run time", (6, 8)),))
PUSH = verdict("capability", cap("git", "push", "origin", "main", key="git push"))
PUSH_GLOBAL = verdict("capability", cap("git", "-C", "sub", "push", key="git push"))
PUSH_PATH = verdict("capability", cap("/usr/bin/git", "push", key="/usr/bin/git push"))
PUSH_ONE_TIME = verdict("one_time", cap("git", "push", key="git push"),
                        findings=(Finding("RF101", "command substitution", (9, 15)),))
TF = verdict("capability", cap("terraform", "destroy", "-auto-approve", key="terraform destroy"))

# (verdict, grants, context) -> expected decision per profile:
#                 observe  build   strict  host-assisted host
CASES = [
    ("helper/host", HELPER, (), "host", ("allow", "allow", "allow", "allow", "allow")),
    ("helper/sandbox", HELPER, (), "sandbox", ("allow",) * 5),
    # The built-ins allow read-only programs on the host (observe.toml, issue 20):
    # `ls -la` in the cwd runs; longbridge still asks.
    ("capability/host", LS, (), "host", ("allow", "allow", "deny", "allow", "allow")),
    ("capability/sandbox", LS, (), "sandbox", ("allow",) * 5),
    ("granted/host", LS, ("ls",), "host", ("allow", "allow", "deny", "allow", "allow")),
    ("half-granted/host", TWO, ("ls",), "host", ("ask", "ask", "deny", "ask", "allow")),
    ("all-granted/host", TWO, ("ls", "longbridge"), "host",
     ("allow", "allow", "deny", "allow", "allow")),
    ("one_time/host", ONE_TIME, (), "host", ("ask", "ask", "deny", "ask", "allow")),
    ("one_time-granted/host", ONE_TIME, ("python3",), "host",
     ("ask", "ask", "deny", "ask", "allow")),               # grants never cover one_time
    # interpreter inline code: the sandbox contains it (rules cannot see into it)
    ("one_time/sandbox", ONE_TIME, (), "sandbox", ("allow",) * 5),
    # literal shell code is classified and judged by what it runs
    ("hidden-push/sandbox", HIDDEN_PUSH, (), "sandbox", ("ask", "ask", "deny", "ask", "allow")),
    ("hidden-granted/sandbox", HIDDEN_PUSH, ("bash",), "sandbox",
     ("ask", "ask", "deny", "ask", "allow")),               # a grant for bash is not git push
    ("inline-harmless/sandbox", HIDDEN_MAKE, (), "sandbox", ("allow",) * 5),
    # a program decided at run time could be anything the rules name: held
    ("dynamic/sandbox", DYNAMIC, (), "sandbox", ("ask", "ask", "ask", "ask", "allow")),
    ("write/sandbox", WRITE, (), "sandbox", ("allow",) * 5),
    ("irreversible/host", PUSH, (), "host", ("ask", "ask", "deny", "ask", "allow")),
    ("irreversible/sandbox", PUSH, (), "sandbox", ("ask", "ask", "deny", "ask", "allow")),
    # A grant of the key never covers an ask rule or an irreversible action (issue 20):
    # only an exact grant of that argv does (tests/ringfence/test_ask_grants.py).
    ("irreversible-granted/host", PUSH, ("git push",), "host",
     ("ask", "ask", "deny", "ask", "allow")),
    ("irreversible-granted/sandbox", PUSH, ("git push",), "sandbox",
     ("ask", "ask", "deny", "ask", "allow")),
    ("global-options/sandbox", PUSH_GLOBAL, (), "sandbox", ("ask", "ask", "deny", "ask", "allow")),
    ("path-qualified/sandbox", PUSH_PATH, (), "sandbox",
     ("ask", "ask", "deny", "ask", "allow")),
    ("path-qualified-grant/sandbox", PUSH_PATH, ("git push",), "sandbox",
     ("ask", "ask", "deny", "ask", "allow")),               # a grant for git push != /usr/bin/git
    ("irreversible-in-one_time/sandbox", PUSH_ONE_TIME, (), "sandbox",
     ("ask", "ask", "deny", "ask", "allow")),
    ("terraform/host", TF, (), "host", ("ask", "ask", "deny", "ask", "allow")),
]


@pytest.mark.parametrize("label,v,grants,context,expected", CASES, ids=[c[0] for c in CASES])
def test_gate_table(label, v, grants, context, expected):
    got = tuple(decide(v, PROFILES[n], grants=frozenset(grants), context=context).decision
                for n in PROFILES)
    assert got == expected


def test_reasons_cite_rule_source_and_codes():
    d = decide(PUSH, PROFILES["build"], context="sandbox")
    assert d.reasons == ("`git push` needs approval: ask rule 'git push **' at "
                         "builtin/observe.toml:30",)
    assert d.to_json() == {"decision": "ask", "reasons": list(d.reasons)}
    assert [(m.action, m.pattern, m.key) for m in d.matched] == [("ask", "git push **",
                                                                  "git push")]
    d = decide(TF, PROFILES["strict"])
    assert d.decision == "deny"
    assert d.reasons[0].startswith("`terraform destroy` is denied by deny rule "
                                   "'terraform destroy **' at builtin/strict.toml:")
    d = decide(LS, PROFILES["strict"])
    assert d.reasons == ("host requests are denied under strict",)
    d = decide(ONE_TIME, PROFILES["build"])
    assert d.reasons == ("one-time approval required: RF108 inline code: python3 -c",)
    d = decide(HIDDEN_PUSH, PROFILES["strict"], context="sandbox")
    assert d.decision == "deny" and len(d.reasons) == 1
    assert d.reasons[0].startswith("inside RF107 ('git push'): `git push` is denied by deny "
                                   "rule 'git push **' at builtin/strict.toml:")
    d = decide(DYNAMIC, PROFILES["build"], context="sandbox")
    assert d.reasons == ("RF003 the program name `$g` is decided at run time: what it runs is "
                         "hidden from the classifier, so the deny/ask rules of 'build' cannot "
                         "check it",)
    d = decide(TWO, PROFILES["build"], grants=frozenset({"ls"}))
    assert d.reasons == ("`ls` is granted", "needs approval for capability `longbridge`")
    d = decide(LS, PROFILES["host"])
    assert d.decision == "allow" and "without a sandbox" in d.reasons[0]


def _custom(tmp_path, body: str):
    p = tmp_path / "p.toml"
    p.write_text(body)
    return load_profile(str(p))


def test_allow_rules_with_holes_and_exact_program(tmp_path):
    prof = _custom(tmp_path, 'extends = "build"\n[commands]\n'
                             'allow = ["longbridge news <ticker>", "npm run {test,build}"]\n')
    d = decide(verdict("capability", cap("longbridge", "news", "AAPL")), prof)
    assert d.decision == "allow"
    assert d.reasons[0].startswith("`longbridge` is allowed by allow rule "
                                   "'longbridge news <ticker>' (ticker=AAPL) at ")
    assert d.matched[0].holes == (("ticker", "AAPL"),)
    # the program word is exact: ./longbridge is a different program
    assert decide(verdict("capability", cap("./longbridge", "news", "AAPL")),
                  prof).decision == "ask"
    assert decide(verdict("capability", cap("longbridge", "news")), prof).decision == "ask"
    run = verdict("capability", cap("npm", "run", "test", key="npm run"))
    assert decide(run, prof).decision == "allow"
    deploy = verdict("capability", cap("npm", "run", "deploy", key="npm run"))
    assert decide(deploy, prof).decision == "ask"
    # every invocation of a key must be allowed, not just the first
    both = verdict("capability", cap("npm", "run", "test", key="npm run"),
                   cap("npm", "run", "deploy", key="npm run"))
    assert decide(both, prof).decision == "ask"


def test_ask_rule_beats_allow_rule_unless_granted(tmp_path):
    prof = _custom(tmp_path, 'extends = "observe"\n[commands]\nallow = ["git status"]\n')
    assert decide(verdict("capability", cap("git", "status", key="git status")),
                  prof).decision == "allow"
    prof = _custom(tmp_path, 'extends = "observe"\n[commands]\nallow = ["docker build **"]\n')
    assert decide(verdict("capability", cap("docker", "push", "x", key="docker push")),
                  prof).decision == "ask"


def test_deny_beats_grants_and_allow_everywhere(tmp_path):
    prof = _custom(tmp_path, 'extends = "build"\n[commands]\ndeny = ["curl **"]\n'
                             'allow = ["ls"]\n')
    v = verdict("capability", cap("ls"), cap("curl", "https://x"))
    for context in ("host", "sandbox"):
        d = decide(v, prof, grants=frozenset({"curl", "ls"}), context=context)
        assert d.decision == "deny"
    host_with_deny = _custom(tmp_path, 'extends = "host"\n[commands]\ndeny = ["curl **"]\n')
    assert decide(v, host_with_deny).decision == "deny"
    assert decide(LS, host_with_deny).decision == "allow"


def test_capability_verdict_without_capabilities_fails_closed():
    empty = Verdict("x", "capability")
    assert decide(empty, PROFILES["build"]).decision == "ask"
    odd = Verdict("x", "weird")  # type: ignore[arg-type]
    assert decide(odd, PROFILES["observe"]).decision == "ask"


def test_unknown_context_is_a_bug_not_a_decision():
    with pytest.raises(ValueError):
        decide(LS, PROFILES["build"], context="elsewhere")  # type: ignore[arg-type]


def test_decision_is_frozen():
    d = decide(LS, PROFILES["build"])
    assert isinstance(d, Decision)
    with pytest.raises(AttributeError):
        d.decision = "allow"  # type: ignore[misc]


def test_end_to_end_through_the_classifier():
    classify = pytest.importorskip("ringfence.classifier.engine").classify
    build, strict = PROFILES["build"], PROFILES["strict"]
    v = classify("git -C sub push origin main 2>&1 | tail -5")
    assert v.keys == ("git push",)
    assert decide(v, build, context="sandbox").decision == "ask"
    assert decide(v, strict, context="sandbox").decision == "deny"
    v = classify("cd . && ls -la")            # read-only, in the project: allowed on the host
    assert decide(v, build).decision == "allow"
    v = classify("cd src && ls -la")          # a directory change not provably staying (issue 20b)
    assert decide(v, build).decision == "ask"
    v = classify("cd .. && ls -la")           # ... but not after leaving it (issue 20)
    assert decide(v, build).decision == "ask"
    v = classify("cd src && longbridge news X")
    assert decide(v, build).decision == "ask"
    assert decide(v, build, grants=frozenset(v.keys)).decision == "allow"
    v = classify("echo $(whoami)")
    assert v.verdict == "one_time"
    assert decide(v, build, grants=frozenset({"whoami"})).decision == "ask"
    assert decide(classify("echo DONE"), strict).decision == "allow"


def test_profile_built_in_code_without_digest():
    from ringfence.profiles.model import CommandRule, Profile

    prof = Profile(name="inline", rules=(CommandRule("deny", "curl **"),
                                         CommandRule("allow", "ls *")))
    assert decide(verdict("capability", cap("curl", "x")), prof).decision == "deny"
    assert decide(verdict("capability", cap("ls", "-l")), prof).decision == "allow"
    assert decide(verdict("capability", cap("ls")), prof).decision == "ask"
