"""profiles/ has no import cycle and no module over ~400 lines (issue 14, layering)."""

from __future__ import annotations

import ast
from pathlib import Path

from tests.conftest import ROOT

PKG = ROOT / "profiles"


def _imports(path: Path) -> set[str]:
    """Sibling modules ``path`` imports, at any depth (function-level imports count)."""
    out = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom):
            mod = node.module or ""
            if node.level == 1 and mod:
                out.add(mod.split(".")[0])
            elif node.level == 1:
                out.update(a.name for a in node.names)
            elif mod.startswith("ringfence.profiles."):
                out.add(mod.split(".")[2])
    return {m for m in out if (PKG / f"{m}.py").exists()}


def test_profiles_import_graph_has_no_cycle():
    graph = {p.stem: _imports(p) for p in PKG.glob("*.py")}
    state: dict[str, int] = {}

    def visit(node, stack):
        state[node] = 1
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                raise AssertionError("import cycle: " + " -> ".join(stack + [node, nxt]))
            if nxt not in state:
                visit(nxt, stack + [node])
        state[node] = 2

    for node in sorted(graph):
        if node not in state:
            visit(node, [])
    assert "load" not in graph["patterns"] and "load" not in graph["chain"]
    assert "load" not in graph["pattern_cache"]


def test_profile_modules_stay_small():
    sizes = {p.name: len(p.read_text().splitlines()) for p in PKG.glob("*.py")}
    assert sizes["load.py"] < 400, sizes
    assert max(sizes.values()) <= 440, sizes
