"""Preflight classifier: command string -> parse -> analysis -> verdict.

Never imports `profiles`, `compiler` or `ringfence`. The tree-sitter front end
(`parse.py`) is the only module that imports tree_sitter.
"""

from .verdict import Capability, Decoration, Finding, Verdict


def classify(command: str) -> Verdict:
    """Classify one ``bash -c`` string. Never raises on any input string."""
    from .engine import classify as _classify

    return _classify(command)


__all__ = ["Capability", "Decoration", "Finding", "Verdict", "classify"]
