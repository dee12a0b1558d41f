"""Replay agent sessions through the Claude Code hook: how often is the person asked?

A session is a few hundred Bash calls drawn (seeded) from
``../shared/corpus/agent-synthetic.jsonl``. The person approves every ``ask``
once. Three ways to count the prompts of the same session:

* **ringfence with grants** (issue 13): PreToolUse, and after a yes the
  PostToolUse event with the same ``tool_use_id``, which grants a capability
  for the Claude session (profile ``build``, ``hook.grant = "session"``).
* **ringfence without grants** (before issue 13): the hook never heard of the
  yes, so every non-helper asks again.
* **Claude Code's own prefix rules**, as its permissions documentation
  describes them: approving "Yes, and don't ask again" saves a prefix rule per
  subcommand (``Bash(git diff *)``: the program, plus its subcommand when the
  second word is not an option); a command split at ``&&``, ``||``, ``;`` and
  ``|`` runs without asking only when every subcommand matches a saved rule.
  Modelled without Claude's read-only exceptions or its classifier, and with a
  naive split (quotes respected, nothing else): an approximation, stated as such.

It also checks the two properties the hook promises: after one yes to a
capability its decorated variants are ``allow``, and no ``one_time`` command is
ever ``allow``ed through a grant. Exit status 1 if either is violated.

    .venv/bin/python bench/hook_replay.py [--sessions 4] [--calls 300] [--json]
    .venv/bin/python bench/hook_replay.py --realistic [--json]

``--realistic`` replays a fixed 50-call session (git status/diff/add/commit,
pytest, pip, npm test, ls/cat/grep, ``sed -n``, a push and three irreversible
variants of it) through the hook as ``init claude-code`` installs it by default
(``--wrap``, profile build) and with ``--no-wrap``, against stock Claude Code (its
read-only set, and "Yes, and don't ask again" everywhere else): prompts, and
irreversible variants allowed after a yes. Exit 1 if ringfence allows a variant or
prompts more than stock Claude Code with ``--wrap``.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shlex
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
CORPUS = Path(os.environ.get("RINGFENCE_SHARED_CORPUS", ROOT.parent / "shared" / "corpus"))


def load_corpus(path: Path | None = None) -> list[str] | None:
    path = path or CORPUS / "agent-synthetic.jsonl"
    if not path.is_file():
        return None
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()
            if line.strip()]


def sessions(commands: list[str], n: int, calls: int, seed: int = 13) -> list[list[str]]:
    rng = random.Random(seed)
    return [rng.sample(commands, min(calls, len(commands))) for _ in range(n)]


# --- Claude Code's prefix rules (the documented behaviour, approximated) -------------------

def _subcommands(command: str) -> list[list[str]]:
    lex = shlex.shlex(command, posix=True, punctuation_chars=";&|")
    lex.whitespace_split = True
    out, cur = [], []
    try:
        for tok in lex:
            if tok and set(tok) <= set(";&|"):
                if cur:
                    out.append(cur)
                cur = []
            else:
                cur.append(tok)
    except ValueError:          # unbalanced quotes, heredocs: one opaque command
        return [command.split()[:2]]
    if cur:
        out.append(cur)
    return out


def _prefix(words: list[str]) -> tuple[str, ...]:
    if len(words) >= 2 and not words[1].startswith("-"):
        return tuple(words[:2])
    return tuple(words[:1])


def claude_prompts(session: list[str]) -> tuple[int, int]:
    """(prompts, one_time commands its saved rules let through unasked)."""
    from ringfence.classifier import classify

    rules: set[tuple[str, ...]] = set()
    prompts = passed_one_time = 0
    for command in session:
        subs = [s for s in _subcommands(command) if s]
        if subs and all(any(tuple(s[:len(r)]) == r for r in rules) for s in subs):
            passed_one_time += classify(command).verdict == "one_time"
            continue
        prompts += 1                                 # the person says yes, don't ask again
        rules.update(_prefix(s) for s in subs)
    return prompts, passed_one_time


# --- ringfence ---------------------------------------------------------------------------------

def ringfence_prompts(session: list[str], *, grants: bool, sid: str, env: dict,
                      cwd: str) -> dict:
    from ringfence.hooks.claude_code import respond

    prompts = 0
    one_time_allowed = []
    variants_allowed = 0
    approved_keys: set[str] = set()
    for i, command in enumerate(session):
        tid = f"toolu_{sid}_{i}"
        base = {"session_id": sid, "cwd": cwd, "permission_mode": "default",
                "tool_name": "Bash", "tool_use_id": tid,
                "tool_input": {"command": command, "description": "replay"}}
        out = respond(dict(base, hook_event_name="PreToolUse"), profile="build", env=env)
        decision = out["hookSpecificOutput"]["permissionDecision"]
        verdict = out["hookSpecificOutput"]["permissionDecisionReason"].split(", ", 1)[1] \
            .split(")", 1)[0]
        if decision == "allow" and verdict == "one_time":
            one_time_allowed.append(command)
        if decision == "allow" and verdict == "capability" and "is granted" in \
                out["hookSpecificOutput"]["permissionDecisionReason"]:
            variants_allowed += 1
        if decision == "ask":
            prompts += 1                              # the person says yes in Claude
            if grants:
                respond(dict(base, hook_event_name="PostToolUse",
                             tool_response={"stdout": "", "stderr": ""}),
                        profile="build", env=env)
                from ringfence.classifier import classify

                v = classify(command)
                if v.verdict == "capability":
                    approved_keys.update(v.keys)
    return {"prompts": prompts, "one_time_allowed": one_time_allowed,
            "variants_allowed_by_grant": variants_allowed, "keys_granted": len(approved_keys)}


def replay(all_sessions: list[list[str]]) -> dict:
    rows = []
    with tempfile.TemporaryDirectory(prefix="rf-hook-replay-") as tmp:
        env = {"RINGFENCE_HOME": os.path.join(tmp, "state"), "HOME": os.path.join(tmp, "home"),
               "XDG_CONFIG_HOME": os.path.join(tmp, "cfg"), "PATH": os.environ.get("PATH", "")}
        ws = os.path.join(tmp, "proj")
        os.makedirs(os.path.join(ws, ".git"))
        for n, session in enumerate(all_sessions):
            with_g = ringfence_prompts(session, grants=True, sid=f"g{n}", env=env, cwd=ws)
            without = ringfence_prompts(session, grants=False, sid=f"n{n}", env=env, cwd=ws)
            claude = claude_prompts(session)
            rows.append({"calls": len(session), "ringfence_with_grants": with_g["prompts"],
                         "ringfence_without_grants": without["prompts"],
                         "claude_prefix_rules": claude[0],
                         "claude_one_time_unasked": claude[1],
                         "variants_allowed_by_grant": with_g["variants_allowed_by_grant"],
                         "keys_granted": with_g["keys_granted"],
                         "one_time_allowed": with_g["one_time_allowed"]
                         + without["one_time_allowed"]})
    return {"sessions": rows}


# --- the realistic session, with the settings `init claude-code` writes (issue 20) -------

# 50 calls of an ordinary Python/JS fix: look around, test, install, commit, push,
# and three irreversible variants of a push the person already said yes to.
REALISTIC = [
    "git status", "git diff", "git diff --stat", "ls", "ls -la src", "cat README.md",
    "cat pyproject.toml", "grep -rn 'def main' src", "sed -n 1,80p src/app/cli.py",
    "sed -n 80,160p src/app/cli.py", "pytest -q", "pytest -q tests/test_cli.py",
    "pytest -q tests/test_cli.py -k parse 2>&1 | tail -20", "pip install -e .",
    "pip install -r requirements-dev.txt", "npm test", "npm test -- --watch=false",
    "npm run lint", "git add src/app/cli.py", "git add -A",
    "git commit -m 'Fix argument parsing'", "git log --oneline -5", "git show --stat HEAD",
    "grep -n TODO src/app/cli.py", "cat src/app/cli.py | head -40", "wc -l src/app/cli.py",
    "ls tests", "cat tests/test_cli.py", "git diff HEAD~1", "git status --short",
    "sed -n 1,40p tests/test_cli.py", "grep -rn 'import argparse' src tests",
    "git push origin main", "pytest -q 2>&1 | tail -5", "git push --force origin main",
    "git push --delete origin old-feature", "git -C ../other push -f",
    "npm test 2>&1 | tail -30", "git add tests/test_cli.py",
    "git commit -m 'Add parse tests'", "git push origin main", "ls -la", "cat setup.cfg",
    "head -50 CHANGELOG.md", "tail -20 CHANGELOG.md", "git log -3 --stat",
    "pip install pytest-cov", "pytest --cov=app -q", "git status", "git diff --cached",
]
# Stock Claude Code runs its read-only commands without a prompt ("Read-only: file
# reads, LS, Grep: no approval", permissions docs; grep/cat/head/tail/find/wc and git's
# read-only subcommands in practice). The full list is not published: this is the set
# counted, an approximation stated as such.
STOCK_READ_ONLY = {("ls",), ("cat",), ("head",), ("tail",), ("grep",), ("rg",), ("find",),
                   ("wc",), ("pwd",), ("echo",), ("file",), ("stat",), ("diff",), ("tree",),
                   ("du",), ("git", "status"), ("git", "diff"), ("git", "log"),
                   ("git", "show"), ("git", "branch")}


def stock_prompts(session: list[str]) -> tuple[int, int]:
    """(prompts, irreversible variants it lets through) for stock Claude Code: its
    read-only set runs unasked; anything else asks once and the person answers
    "Yes, and don't ask again" (a prefix rule, as in :func:`claude_prompts`)."""
    from ringfence.classifier import classify
    from ringfence.profiles.patterns import argv_views
    from ringfence.rfcore.actions import irreversible

    rules: set[tuple[str, ...]] = set(STOCK_READ_ONLY)
    prompts = variants = 0
    seen: set[tuple[str, ...]] = set()
    for command in session:
        subs = [s for s in _subcommands(command) if s]
        caps = classify(command).capabilities
        irr = [tuple(c.argv) for c in caps if irreversible(argv_views(c.key, c.argv, aliases=True))]
        if subs and all(any(tuple(s[:len(r)]) == r for r in rules) for s in subs):
            variants += sum(1 for a in irr if a not in seen)
            continue
        prompts += 1
        seen.update(irr)
        rules.update(_prefix(s) for s in subs)
    return prompts, variants


def realistic(session: list[str] | None = None) -> dict:
    """Prompts of the realistic session through the hook with the settings `init`
    writes by default (``--wrap``, the active profile: build), and with ``--no-wrap``;
    irreversible variants allowed after a yes; stock Claude Code on the same session."""
    from ringfence.classifier import classify
    from ringfence.hooks.claude_code import respond
    from ringfence.profiles.patterns import argv_views
    from ringfence.rfcore.actions import irreversible

    session = session or REALISTIC
    out: dict = {"calls": len(session)}
    with tempfile.TemporaryDirectory(prefix="rf-hook-realistic-") as tmp:
        env = {"RINGFENCE_HOME": os.path.join(tmp, "state"), "HOME": os.path.join(tmp, "home"),
               "XDG_CONFIG_HOME": os.path.join(tmp, "cfg"), "PATH": os.environ.get("PATH", "")}
        ws = os.path.join(tmp, "proj")
        os.makedirs(os.path.join(ws, ".git"))
        for mode, wrap in (("wrap", True), ("no_wrap", False)):
            prompts, variants, asked = 0, [], []
            approved: set[tuple[str, ...]] = set()
            for i, command in enumerate(session):
                base = {"session_id": f"real-{mode}", "cwd": ws, "permission_mode": "default",
                        "tool_name": "Bash", "tool_use_id": f"toolu_{mode}_{i}",
                        "tool_input": {"command": command, "description": "realistic"}}
                answer = respond(dict(base, hook_event_name="PreToolUse"), wrap=wrap, env=env)
                decision = answer["hookSpecificOutput"]["permissionDecision"]
                irr = [tuple(c.argv) for c in classify(command).capabilities
                       if irreversible(argv_views(c.key, c.argv, aliases=True))]
                if decision == "allow":
                    variants += [command for a in irr if a not in approved]
                if decision == "ask":
                    prompts += 1
                    asked.append(command)
                    approved.update(irr)
                    respond(dict(base, hook_event_name="PostToolUse",
                                 tool_response={"stdout": "", "stderr": ""}), wrap=wrap, env=env)
            out[mode] = {"prompts": prompts, "asked": asked,
                         "irreversible_variants_allowed": variants}
    stock, stock_variants = stock_prompts(session)
    out["stock_claude_code"] = {"prompts": stock, "irreversible_variants_allowed": stock_variants}
    return out


def _print_realistic() -> int:
    r = realistic()
    print(f"realistic session: {r['calls']} calls (settings `init claude-code` writes)")
    for mode, label in (("wrap", "ringfence --wrap (default)"), ("no_wrap", "ringfence --no-wrap"),
                        ("stock_claude_code", "stock Claude Code (read-only set + "
                                              "'don't ask again')")):
        row = r[mode]
        allowed = row["irreversible_variants_allowed"]
        n = len(allowed) if isinstance(allowed, list) else allowed
        print(f"  {label:<52} prompts {row['prompts']:>3}   irreversible variants allowed "
              f"after a yes: {n}")
    for mode in ("wrap", "no_wrap"):
        print(f"  asked ({mode}): " + "; ".join(r[mode]["asked"]))
    bad = r["wrap"]["irreversible_variants_allowed"] + r["no_wrap"]["irreversible_variants_allowed"]
    if bad or r["wrap"]["prompts"] > r["stock_claude_code"]["prompts"]:
        print(f"VIOLATION: variants allowed {bad}, or more prompts than stock", file=sys.stderr)
        return 1
    return 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sessions", type=int, default=4)
    ap.add_argument("--calls", type=int, default=300)
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--realistic", action="store_true",
                    help="the 50-call session with the settings init writes (issue 20)")
    args = ap.parse_args(argv)
    if args.realistic:
        if args.json:
            print(json.dumps(realistic(), indent=2))
            return 0
        return _print_realistic()
    commands = load_corpus()
    if commands is None:
        print(f"hook_replay: skipped: {CORPUS / 'agent-synthetic.jsonl'} not found "
              "(set RINGFENCE_SHARED_CORPUS)")
        return 0
    result = replay(sessions(commands, args.sessions, args.calls))
    if args.json:
        print(json.dumps(result, indent=2))
    else:
        print(f"{'session':>7} {'calls':>5} {'ringfence+grants':>16} {'ringfence (before)':>18} "
              f"{'claude prefix rules':>19} {'variants allowed':>16} "
              f"{'one_time unasked by claude':>26}")
        for i, r in enumerate(result["sessions"]):
            print(f"{i:>7} {r['calls']:>5} {r['ringfence_with_grants']:>16} "
                  f"{r['ringfence_without_grants']:>18} {r['claude_prefix_rules']:>19} "
                  f"{r['variants_allowed_by_grant']:>16} {r['claude_one_time_unasked']:>26}")
        n = len(result["sessions"])
        for key in ("ringfence_with_grants", "ringfence_without_grants", "claude_prefix_rules"):
            print(f"mean prompts per session, {key.replace('_', ' ')}: "
                  f"{sum(r[key] for r in result['sessions']) / n:.1f}")
    bad = [c for r in result["sessions"] for c in r["one_time_allowed"]]
    if bad:
        print(f"VIOLATION: {len(bad)} one_time command(s) allowed: {bad[:3]}", file=sys.stderr)
        return 1
    if not any(r["variants_allowed_by_grant"] for r in result["sessions"]):
        print("VIOLATION: no decorated variant was ever allowed by a grant", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
