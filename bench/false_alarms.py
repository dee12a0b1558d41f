"""How often benign corpus commands stop for a person, per gate context.

    python bench/false_alarms.py [--corpus DIR] [--profile build] [--json]

The shared corpora (``nl2bash.cm``, ``agent-synthetic.jsonl``; see
bench/README.md) are unlabeled real and agent-shaped commands, nearly all
benign, so every stop is counted as a false alarm. For each corpus it reports:

- ``one_time``: verdicts of class one_time (no grant can cover them, so on the
  host they always ask);
- ``host_ask``: the gate's decision in the ``host`` context with every
  capability key of the command granted (what still stops a session in which
  the person has granted everything they were asked for once): ask or deny;
- ``sandbox_ask``: the gate's decision in the ``sandbox`` context (``ringfence
  run``, ``hook --wrap``) under the profile: ask or deny.

Run it before and after a classifier change on the same corpus; the figures
are counts, not timings, so load on the machine does not move them.
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
DEFAULT_CORPUS = Path(os.environ.get("RINGFENCE_SHARED_CORPUS", ROOT.parent / "shared" / "corpus"))
CORPORA = ("nl2bash.cm", "agent-synthetic.jsonl")


def load_corpus(path: Path) -> list[str]:
    text = path.read_text(encoding="utf-8", errors="surrogateescape")
    if path.suffix == ".jsonl":
        return [json.loads(line) for line in text.splitlines() if line.strip()]
    return [line for line in text.splitlines() if line.strip()]


def measure(commands: list[str], profile) -> dict:
    from ringfence.classifier import classify
    from ringfence.session.gate import decide

    counts = collections.Counter()
    codes = collections.Counter()
    for cmd in commands:
        v = classify(cmd)
        counts["n"] += 1
        if v.verdict == "one_time":
            counts["one_time"] += 1
            codes.update(set(v.codes))
        if decide(v, profile, grants=frozenset(v.keys), context="host").decision != "allow":
            counts["host_ask"] += 1
        if decide(v, profile, context="sandbox").decision != "allow":
            counts["sandbox_ask"] += 1
    return {**counts, "codes": dict(codes.most_common())}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS)
    ap.add_argument("--profile", default="build")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    from ringfence.profiles.load import load_profile

    profile = load_profile(args.profile)
    out = {}
    for name in CORPORA:
        path = args.corpus / name
        if not path.exists():
            print(f"skip {name}: {path} not found", file=sys.stderr)
            continue
        out[name] = measure(load_corpus(path), profile)
    if args.json:
        print(json.dumps(out, indent=1))
        return 0
    for name, r in out.items():
        n = r["n"]
        print(f"{name}: n={n}  one_time={r.get('one_time', 0)}  "
              f"host_ask(all keys granted)={r.get('host_ask', 0)} "
              f"({100 * r.get('host_ask', 0) / n:.2f}%)  "
              f"sandbox_ask({args.profile})={r.get('sandbox_ask', 0)} "
              f"({100 * r.get('sandbox_ask', 0) / n:.2f}%)")
        print("   codes:", ", ".join(f"{c}={k}" for c, k in list(r["codes"].items())[:25]))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
