"""What a yes to an ask rule or an irreversible action may grant (issue 20, SPEC §5).

**Ask rules are never widened by a grant.** A grant of a capability key covers its
decorated variants (``pytest -q 2>&1 | tail``), which is right for ``pytest`` and
wrong for ``git push``: a yes to ``git push origin main`` must not allow
``git push --force origin main``, ``git push --delete origin x`` or
``git -C ../other push -f``. So for a capability that matched an ask rule, or that
is an irreversible action (``rfcore.actions.IRREVERSIBLE``, whatever the profile's
rules), the only grant that covers it is an *exact* one: this argv after quote
removal, in this working directory, for one session (``always`` never stores it).

An exact grant is a grants row whose key is :func:`exact_token`, a JSON object.
It can never collide with a capability key: a command name holding ``{`` or ``[``
is fail-closed in the classifier, so no capability is ever keyed like that.

A capability is exactly coverable only when nothing around it can change what the
same argv does: the verdict is ``capability`` (no one-time construct such as
``GIT_DIR=x``), no ``cd``/``pushd``/``popd`` runs anywhere in the command (by argv after quote
removal: ``"cd" ..``, ``\\cd``, ``c'd'``), no
wrapper or launcher was removed around it (``env -C dir``, ``xargs`` appending
operands), and no variable is assigned in front of it. Otherwise a yes approves
that one call only and grants nothing.

Pure: stdlib only (the hook and ``run`` import it).
"""

from __future__ import annotations

import json
import os

from ringfence.ledger.grants import EXACT_PREFIX, is_exact
from ringfence.rfcore.lazyre import lazy
_DIR_MOVES = frozenset({"cd", "pushd", "popd"})
_ASSIGNMENT = lazy(r"\s*[A-Za-z_][A-Za-z0-9_]*(\[[^\]]*\])?\+?=")
# The only finding that may sit on an exactly granted capability: its key names
# the subcommand. Anything else (a wrapper removed, a launcher, an effect) means
# the argv alone does not say what runs.
_BENIGN = frozenset({"RF203"})


def describe(key: str) -> str:
    """``git push origin main (in /repo)`` for an exact key; the key otherwise."""
    if not is_exact(key):
        return key
    try:
        data = json.loads(key)
        import shlex

        return f"exactly `{shlex.join(data['argv'])}` (in {data['cwd']})"
    except (ValueError, KeyError, TypeError):
        return key


def _overlaps(a, b) -> bool:
    return a[0] < b[1] and b[0] < a[1]


def exact_token(verdict, cap, cwd: str | None) -> str | None:
    """The exact-grant key for ``cap`` run from ``cwd``, or None when the same argv
    could do something else in this command (see the module docstring)."""
    if not cwd or verdict.verdict != "capability":
        return None
    if any(c.key in _DIR_MOVES for c in verdict.capabilities):
        return None
    from ringfence.session.host_reads import dir_moves

    if dir_moves(verdict.command):      # by argv after quote removal: `"cd" ..`, `\\cd`
        return None
    span = tuple(cap.span)
    if any(f.code not in _BENIGN and _overlaps(tuple(f.span), span)
           for f in verdict.findings):
        return None
    text = verdict.command[span[0]:span[1]]
    if _ASSIGNMENT.match(text):
        return None
    return json.dumps({"argv": list(cap.argv), "cwd": os.path.realpath(cwd)})


__all__ = ["EXACT_PREFIX", "describe", "exact_token", "is_exact"]
