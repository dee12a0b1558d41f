"""The house keeps its rooms (issue 18): no import cycles, no long modules without
a reason, no two modules of one name unless they are the same idea.

The import graph is read from the source (``ast``), with every import counted:
module level and function level alike, since a lazy import is still a
dependency. ``CONTRIBUTING.md`` says which names are the same idea and which
modules may be long, and why; this test reads that file, so the two cannot drift.
"""

from __future__ import annotations

import ast
import os
import re
from collections import defaultdict

from tests.conftest import ROOT
from tests.test_module_size import LIMIT, PACKAGES, package_modules

# Basenames that are the same idea in two places (CONTRIBUTING, "Module names").
SAME_IDEA = {
    "__init__.py": "every package has one",
    # a rule family: its codes (rfcore/rules/) and its checks
    "failclosed.py": "family RF0: codes and checks",
    "onetime.py": "family RF1: codes and checks",
    "effects.py": "family RF13x: codes and checks",
    "capability.py": "family RF2: codes and checks",
    "decoration.py": "family RF3: codes and checks",
    "lint.py": "family RF5: codes (rfcore/rules) and the linter (profiles)",
    # one command, two front doors
    "check.py": "the check command: fast path and typer command",
    "run.py": "the run command: fast path and typer command",
    "hook.py": "the hook command: fast path and typer command",
    # the public API: one-shot functions, and the Session (issue 24)
    "api.py": "the public API: ringfence.api and ringfence.session.api (the Session)",
}


# The rooms, lowest first: a module imports only from its own room or a lower one
# (CONTRIBUTING, "The rooms", lists them in this order).
ROOMS = (
    ("rfcore", ("ringfence.rfcore",)),
    ("staging/git", ("ringfence.staging.git",)),
    ("classifier, profiles", ("ringfence.classifier", "ringfence.profiles")),
    ("staging", ("ringfence.staging",)),
    ("compiler", ("ringfence.compiler",)),
    ("ledger", ("ringfence.ledger",)),
    ("session", ("ringfence.session",)),
    ("views", ("ringfence.views",)),
    ("front doors", ("ringfence.hooks", "ringfence.fast", "ringfence.cli", "ringfence.mcp")),
    ("the front of the house", ("ringfence",)),
)


def room_of(module: str) -> int:
    best, where = -1, None
    for i, (_, prefixes) in enumerate(ROOMS):
        for p in prefixes:
            if (module == p or module.startswith(p + ".")) and len(p) > best:
                best, where = len(p), i
    assert where is not None, module
    return where


def module_name(rel: str) -> str:
    parts = rel[:-3].split("/")
    if parts[-1] == "__init__":
        parts = parts[:-1]
    if parts[0] != "ringfence":
        parts = ["ringfence", *parts]
    return ".".join(parts)


def modules() -> dict[str, str]:
    """dotted name -> path (relative to the repository root)."""
    return {module_name(rel): rel for rel in package_modules()}


def imports_of(rel: str, name: str, known: set[str]) -> set[str]:
    with open(ROOT / rel, encoding="utf-8") as f:
        tree = ast.parse(f.read(), rel)
    package = name if rel.endswith("__init__.py") else name.rpartition(".")[0]
    out: set[str] = set()

    def add(target: str) -> None:
        # the longest known module that `target` names (a.b.c -> a.b if c is an attribute)
        while target and target not in known:
            target = target.rpartition(".")[0]
        if target and target != name:
            out.add(target)

    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                add(a.name)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                parts = package.split(".")
                base = ".".join(parts[: len(parts) - node.level + 1])
                base = f"{base}.{node.module}" if node.module else base
            else:
                base = node.module or ""
            if not base.startswith("ringfence"):
                continue
            for a in node.names:
                full = f"{base}.{a.name}"
                add(full if full in known else base)
    return out


def graph() -> dict[str, set[str]]:
    mods = modules()
    known = set(mods)
    g = {name: imports_of(rel, name, known) for name, rel in mods.items()}
    # importing a.b.c runs a/__init__ and a/b/__init__ too: no edge needed for a
    # cycle check, since a package's __init__ that imports its children is fine.
    return g


def cycles(g: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    found: list[list[str]] = []
    counter = 0
    for root in sorted(g):
        if root in index:
            continue
        work = [(root, iter(sorted(g[root])))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, it = work[-1]
            advanced = False
            for nxt in it:
                if nxt not in g:
                    continue
                if nxt not in index:
                    index[nxt] = low[nxt] = counter
                    counter += 1
                    stack.append(nxt)
                    on_stack.add(nxt)
                    work.append((nxt, iter(sorted(g[nxt]))))
                    advanced = True
                    break
                if nxt in on_stack:
                    low[node] = min(low[node], index[nxt])
            if advanced:
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index[node]:
                comp = []
                while True:
                    w = stack.pop()
                    on_stack.discard(w)
                    comp.append(w)
                    if w == node:
                        break
                if len(comp) > 1:
                    found.append(sorted(comp))
    return found


def contributing_section(title: str) -> str:
    text = (ROOT / "CONTRIBUTING.md").read_text(encoding="utf-8")
    m = re.search(rf"^#+ {re.escape(title)}\n(.*?)(?=^#+ )", text, re.S | re.M)
    assert m, f"CONTRIBUTING.md has no section {title!r}"
    return m.group(1)


def long_module_allowances() -> dict[str, int]:
    rows = re.findall(r"^\| `([^`]+\.py)` \| (\d+) \|", contributing_section("Long modules"), re.M)
    return {path: int(n) for path, n in rows}


def test_the_graph_sees_the_rooms():
    g = graph()
    # a known edge of each kind: relative, absolute, lazy (function level)
    assert "ringfence.ledger.store" in g["ringfence.session.governor"]
    assert "ringfence.staging.git.keys" in g["ringfence.classifier.git_cmdline"]
    assert "ringfence.staging.settle" in g["ringfence.session.runner"]      # lazy
    for room in ("session", "ledger", "staging", "staging.git", "views"):
        assert f"ringfence.{room}" in g


def test_the_cycle_finder_finds_a_cycle():
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert cycles({"a": {"b"}, "b": set()}) == []


def test_no_import_cycles():
    found = cycles(graph())
    assert found == [], "import cycles (lazy imports count): " + "; ".join(
        " <-> ".join(c) for c in found)


def test_a_room_imports_only_from_its_own_or_a_lower_room():
    upward = sorted(f"{a} -> {b}" for a, bs in graph().items() for b in bs
                    if room_of(b) > room_of(a) and b != "ringfence")
    # `ringfence` itself (the package __init__: the version, the lazy public API) is
    # imported by the CLI for its version; it imports nothing at module level.
    assert upward == [], "imports into a higher room: " + "; ".join(upward)


def test_contributing_lists_the_rooms_in_this_order():
    section = contributing_section("The rooms")
    rows = re.findall(r"^\| `([^`]+)`", section, re.M)
    firsts = [r.rstrip("/").removeprefix("ringfence/") for r in rows]
    assert firsts == ["rfcore", "staging/git", "classifier", "staging", "compiler", "ledger",
                      "session", "views", "cli"], firsts


def test_no_two_modules_of_one_name_unless_the_same_idea():
    by_name: dict[str, list[str]] = defaultdict(list)
    for rel in package_modules():
        by_name[os.path.basename(rel)].append(rel)
    dups = {n: sorted(p) for n, p in by_name.items() if len(p) > 1 and n not in SAME_IDEA}
    assert dups == {}, f"rename these, or say in CONTRIBUTING why they are one idea: {dups}"


def test_the_same_idea_list_is_the_one_contributing_explains():
    section = contributing_section("Module names")
    for name in SAME_IDEA:
        if name != "__init__.py":
            assert f"`{name[:-3]}`" in section, f"{name} is allowed twice but CONTRIBUTING does not say why"


def test_no_module_over_the_limit_without_a_reason():
    allowed = long_module_allowances()
    sizes = package_modules()
    over = {p: n for p, n in sizes.items() if n > allowed.get(p, LIMIT)}
    assert over == {}, (f"split these by responsibility (limit {LIMIT} lines), or list them "
                        f"with the reason in CONTRIBUTING's 'Long modules': {over}")
    stale = {p for p in allowed if p not in sizes}
    assert not stale, f"CONTRIBUTING allows long modules that do not exist: {stale}"


def test_the_top_level_holds_only_the_front_of_the_house():
    top = sorted(f for f in os.listdir(ROOT / "ringfence") if f.endswith(".py"))
    assert top == ["__init__.py", "__main__.py", "api.py", "docs.py"], top


def test_every_package_is_in_the_wheel():
    text = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    listed = set(re.findall(r'"(ringfence(?:\.[a-z_]+)*)"', text))
    for dirpath, dirnames, filenames in os.walk(ROOT / "ringfence", followlinks=False):
        dirnames[:] = [d for d in dirnames if d != "__pycache__"
                       and not os.path.islink(os.path.join(dirpath, d))]
        if "__init__.py" in filenames:
            rel = os.path.relpath(dirpath, ROOT)
            assert rel.replace("/", ".") in listed, f"{rel} is not in pyproject's packages"
    for top in PACKAGES:
        assert top == "ringfence" or f"ringfence.{top}" in listed
