"""Compare the classifier's invocations with the argv lists bash executes.

The rule (issue 6): a command the classifier calls `helper` or `capability`
whose programs or words differ from what bash executes is a classifier bug.
`one_time` verdicts are out of scope (the classifier already refuses to vouch
for them), and so are commands the oracle could not run to the end.

How the two sides line up (documented in docs/differential.md):

* The oracle gives argv lists R (bash's view, after expansion and quote
  removal, two passes so both branches of `&&`/`||`/`if` are seen).
* The classifier gives capabilities C, each with an argv after quote removal
  with transparent wrappers removed.
* R is *explained* by C when C.argv equals R, or when R starts with a wrapper
  or launcher (`timeout 5 …`, `env A=b …`, `xargs …`, `find … -exec …`) and
  C.argv occurs inside R after that first word. A classifier word that bash
  would expand (`$x`, a glob, `~`, `{a,b}`) matches any run of bash words,
  since the oracle's empty environment cannot say what it expands to.
* R may be left unexplained only when the classifier dropped it on purpose:
  R[0] is a SPEC helper (cd, echo, test, …), or a SPEC filter (head, grep, …)
  that the classifier reported as a decoration.
  Builtins that only declare variables (`export`, `local`, `unset`, …) run
  no program and may be dropped too.
* Every C must explain at least one R, unless bash could not have shown it:
  a path-qualified program (the sandbox root is empty, so `./x` and `/bin/x`
  are never found), a keyword (`[[`), a command where bash printed an error
  (a failed `< file` stops the command before it runs), or a command whose
  control flow branches on data (`case`, `[[`, `((`, loops), which the two
  exit-status passes cannot steer. Those are counted as unverified.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from ringfence.classifier.verdict import Verdict

from ringfence.classifier.data import PACKAGE_RUNNERS, SUB_LAUNCHERS
from ringfence.classifier.data_launch import LAUNCHERS

from .oracle import OracleResult

# SPEC §2 helper programs: dropped by the classifier, run (harmlessly) by bash.
HELPERS = frozenset({"cd", "pushd", "popd", "echo", "printf", "true", "false", ":", "pwd",
                     "exit", "set", "sleep", "test", "["})
# SPEC §2 pure filters: dropped only when reported as a decoration. egrep and
# fgrep are grep -E and grep -F under their historical names; gawk, mawk and
# nawk are awk.
FILTERS = frozenset({"head", "tail", "grep", "egrep", "fgrep", "wc", "sort", "uniq", "cut", "tr",
                     "cat", "tac", "nl", "column", "fold", "rev", "jq", "base64", "sed", "awk",
                     "gawk", "mawk", "nawk", "tee"})
# SPEC §2 transparent wrappers and launchers: the capability is inside them.
# ionice is not in the SPEC list but is as transparent as nice.
WRAPPERS = frozenset({"time", "timeout", "nice", "ionice", "nohup", "stdbuf", "env", "command",
                      "builtin", "exec", "xargs", "find", "watch"}) | frozenset(LAUNCHERS)
# Subcommands that run the rest (`uv run`, `bundle exec`, `ip netns exec`, ...):
# the classifier keys the program they run too (issue 22).
PEELED_BY_SUBCOMMAND = frozenset({"ip", "dpkg-architecture"})
# Printing every variable (bare `set`, `export`, `declare -x`, ...) is keyed
# `<builtin> -p` (or `declare -f` for functions), whatever the spelling (issue 22).
PRINT_KEYS = re.compile(r"(set|export|declare|typeset|readonly|local) -[pf]")
# Builtins that only declare or remove shell variables and functions: bash
# runs no program for them, like a bare assignment. (Dangerous names such as
# `export PATH=…` are the one-time rules' business, checked by the corpus.)
DECLARATIONS = frozenset({"export", "local", "declare", "typeset", "readonly", "unset", "shift"})
# Keywords are syntax, never executed as programs: the oracle cannot see them,
# so a classifier capability named after one is unverifiable here.
KEYWORDS = frozenset({"[[", "((", "]]", "!", "time", "coproc"})
# Control flow that branches on data, not on exit statuses, so neither of the
# two oracle passes need reach every branch: `case`, `[[ ]]`, `(( ))`, and
# loops over words that may expand to nothing.
DATA_BRANCH = re.compile(r"(^|[\s;&|(])(case|\[\[|\(\(|for|select|while|until)(?=[\s(])")
# A wrapper with nothing to wrap is a no-op in bash (`yes | command`).
NO_OPS = frozenset({("command",), ("exec",), ("builtin",)})
# A word bash would still expand in the oracle's empty environment.
DYNAMIC = re.compile(r"[$`*?\[{]|^~")


@dataclass(frozen=True)
class Problem:
    kind: str                       # "missed" | "phantom" | "key" | "syntax"
    detail: str
    oracle: tuple[str, ...] = ()
    classifier: tuple[str, ...] = ()


@dataclass(frozen=True)
class Outcome:
    command: str
    verdict: str
    compared: bool
    reason: str = ""                # why it was not compared
    problems: tuple[Problem, ...] = ()
    unverified: int = 0             # capabilities bash could not have shown


def words_match(classifier: Sequence[str], bash: Sequence[str]) -> bool:
    """Do the classifier's words describe bash's? Dynamic words match any run."""
    memo: dict[tuple[int, int], bool] = {}

    def go(i: int, j: int) -> bool:
        if (i, j) in memo:
            return memo[i, j]
        if i == len(classifier):
            ok = j == len(bash)
        elif j < len(bash) and classifier[i] == bash[j]:
            ok = go(i + 1, j + 1) or (bool(DYNAMIC.search(classifier[i])) and go(i + 1, j))
        elif DYNAMIC.search(classifier[i]):
            ok = any(go(i + 1, k) for k in range(j, len(bash) + 1))
        else:
            ok = False
        memo[i, j] = ok
        return ok

    return go(0, 0)


def explains(cap_argv: Sequence[str], record: Sequence[str]) -> bool:
    if words_match(cap_argv, record):
        return True
    if not record or not (record[0] in WRAPPERS or record[0] in PACKAGE_RUNNERS
                          or tuple(record[:2]) in SUB_LAUNCHERS
                          or record[0] in PEELED_BY_SUBCOMMAND):
        return False
    # Inside a wrapper the capability is a suffix of bash's argv (`timeout 5
    # rm x`), or ends at a `;` or `+` that closes a `find -exec` (which may
    # itself sit inside another wrapper: `xargs find . -exec rm {} +`).
    ends = [len(record)] + [k for k, word in enumerate(record) if word in (";", "+")]
    return any(words_match(cap_argv, record[k:end])
               for k in range(1, len(record)) for end in ends if end > k)


def _decorated(program: str, verdict: Verdict) -> bool:
    # Quote characters are dropped from the decoration's source text, so
    # `| \grep x` and `| 'head' -n 1` still name their program.
    return any(re.search(rf"(^|[\s|&;(]){re.escape(program)}(\s|$)",
                         re.sub(r"[\\'\"]", "", d.text))
               for d in verdict.decorations)


def compare(verdict: Verdict, oracle: OracleResult) -> Outcome:
    """One command: does the classifier's view agree with bash's?"""
    out = dict(command=verdict.command, verdict=verdict.verdict)
    if oracle.status == "parse_error":
        if verdict.verdict == "one_time":
            return Outcome(**out, compared=False, reason="bash syntax error (one_time)")
        # The classifier vouched for a command bash refuses to parse.
        return Outcome(**out, compared=True, problems=(
            Problem("syntax", "bash rejects the syntax, classifier says "
                    f"{verdict.verdict}"),))
    if verdict.verdict == "one_time":
        return Outcome(**out, compared=False, reason="one_time")
    if oracle.status not in ("ok", "capped"):
        return Outcome(**out, compared=False, reason=f"oracle {oracle.status}")
    caps = [c.argv for c in verdict.capabilities]
    used = [False] * len(caps)
    problems: list[Problem] = []
    for cap in verdict.capabilities:
        # The key is made of the argv's own words: the program, then for a
        # multiplexer its subcommand (SPEC §2). A key word bash never sees
        # would grant something the command does not run.
        words = cap.key.split(" ")
        printing = bool(PRINT_KEYS.fullmatch(cap.key)) and list(cap.argv[:1]) == words[:1]
        if not printing and (not cap.argv or words[0] != cap.argv[0]
                             or not set(words[1:]) <= set(cap.argv[1:])):
            problems.append(Problem("key", f"key {cap.key!r} is not made of the argv's words",
                                    classifier=cap.argv))
    for record in dict.fromkeys(oracle.argvs):
        hits = [i for i, argv in enumerate(caps) if explains(argv, record)]
        for i in hits:
            used[i] = True
        if hits or record[0] in HELPERS or record[0] in DECLARATIONS or record in NO_OPS:
            continue
        if record[0] in FILTERS and _decorated(record[0], verdict):
            continue
        near = next((argv for argv in caps if argv and argv[0] == record[0]), ())
        problems.append(Problem("missed", "bash runs this; no capability matches",
                                oracle=record, classifier=near))
    unverified = 0
    data_branch = bool(DATA_BRANCH.search(verdict.command))
    for argv, hit in zip(caps, used):
        if hit:
            continue
        if (argv and ("/" in argv[0] or argv[0] in KEYWORDS)) or oracle.stderr or data_branch:
            unverified += 1
            continue
        near = next((r for r in oracle.argvs if argv and r[0] == argv[0]), ())
        problems.append(Problem("phantom", "classifier capability that bash never runs",
                                oracle=near, classifier=argv))
    return Outcome(**out, compared=True, problems=tuple(problems), unverified=unverified)


def format_problem(outcome: Outcome) -> str:
    lines = [f"  {outcome.command!r} (classifier: {outcome.verdict})"]
    for p in outcome.problems:
        lines.append(f"    {p.kind}: {p.detail}; bash={list(p.oracle)} "
                     f"classifier={list(p.classifier)}")
    return "\n".join(lines)
