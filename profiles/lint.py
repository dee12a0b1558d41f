"""Profile lint: every problem of a profile chain, each with an RF5xx code.

Schema problems come from the loader's own validation (one source of truth);
the semantic checks below run on the merged profile and point back to the file,
line and key path (and for patterns the column) where each value was written.
Lint may import lark: it is not on the per-command hot path.
"""

from __future__ import annotations

import os
import fnmatch
import posixpath
import re
from ringfence.rfcore.records import record

from ringfence.rfcore.rules import REGISTRY

from . import load
from .model import CommandRule, Located, Profile
from .lint_credentials import check_credential_access, check_credentials
from .patterns import (UNMATCHABLE_PROGRAM_CHARS, Compiled, PatternError, compile_pattern,
                       render)


# Diagnostics that say "on purpose?" rather than "wrong": printed, never failing.
WARNINGS = frozenset({"RF540", "RF541"})


@record
class Diagnostic:
    code: str
    message: str
    file: str | None
    line: int | None
    key: str | None
    column: int | None = None       # 1-based column inside the offending pattern/value
    source: str | None = None       # the offending value, for a caret display

    def format(self) -> str:
        where = ":".join(str(x) for x in (self.file or "<profile>", self.line) if x is not None)
        key = f" [{self.key}]" if self.key else ""
        col = (f" (column {self.column})" if self.column
               and f"column {self.column}" not in self.message else "")
        return f"{where}: {self.code} {self.message}{key}{col}"

    @property
    def name(self) -> str:
        return REGISTRY[self.code].name


def _diag(code: str, message: str, where: Located, *, column: int | None = None,
          source: str | None = None, key: str | None = None) -> Diagnostic:
    return Diagnostic(code, message, where.file, where.line, key or where.key, column, source)


def _from_problems(problems) -> list[Diagnostic]:
    return [_diag(p.code, p.message + (f" ({p.hint})" if p.hint and p.code != "RF501" else ""),
                  w, key=p.key or w.key, column=p.column) for p, w in problems]


def lint(path_or_name: str, *, workspace: str | None = None) -> list[Diagnostic]:
    """Lint a built-in name or a profile file (and everything it extends).

    ``workspace``: also report every way a profile file inside it loosens its
    base (RF513: the same overlay rule the loader enforces, with the user config
    of this process as the base). A file named ``.ringfence.toml`` is a project
    file: its directory is taken as the workspace when none is given. The other
    checks look at the file's own chain, not at the base.
    """
    chain = load.resolve_chain(path_or_name)
    out = _from_problems(chain.problems)
    if chain.problems:
        # Like ruff and ShellCheck: one pass reports everything. Schema problems
        # (RF501/RF502) leave the files readable, so lint goes on with the bad
        # keys set aside; a file that cannot be read or resolved stops here.
        chain = _without_bad_keys(chain)
        if chain is None:
            return _dedupe(out)
    leaf = chain.layers[-1]
    if workspace is None and not leaf.builtin and \
            os.path.basename(leaf.path) == ".ringfence.toml":
        workspace = os.path.dirname(os.path.realpath(leaf.path))
    if workspace is not None:
        out.extend(_from_problems(load.workspace_problems(chain, workspace)))
    profile, origins = load.build(chain)
    for problem, where in load.domain_problems(profile, origins):
        out.append(_diag(problem.code, problem.message, where))
    compiled = _check_patterns(profile, out)
    _check_catch_all(compiled, out)
    _check_shadowed(compiled, out, [layer.display for layer in chain.layers])
    _check_writable(profile, origins, out)
    check_credentials(profile, origins, out, _diag)
    check_credential_access(profile, origins, leaf.display, out, _diag)
    _check_network(profile, origins, leaf.display, out)
    if workspace is not None:
        _check_git_copies(profile, origins, workspace, out)
    return _dedupe(out)


_FILE_LEVEL = {load.CODE_TOML, load.CODE_EXTENDS_MISSING, load.CODE_EXTENDS_CYCLE}


def _without_bad_keys(chain):
    """A copy of ``chain`` whose layers lack every key a schema problem names, or
    None when a problem is about a whole file (unreadable, missing, a cycle)."""
    import copy

    if not chain.layers or any(p.code in _FILE_LEVEL for p, _ in chain.problems):
        return None
    by_file: dict = {}
    for problem, where in chain.problems:
        by_file.setdefault(where.file, []).append(problem.key or where.key)
    layers = []
    for layer in chain.layers:
        data = copy.deepcopy(layer.data)
        # Deepest first, and list items from the end, so indexes stay valid.
        for key in sorted(filter(None, by_file.get(layer.display, ())), key=_key_order,
                          reverse=True):
            _drop(data, key)
        layers.append(load.Layer(layer.display, layer.path, layer.text, data, layer.lines,
                                 layer.builtin))
    try:
        load.build(load.Chain(layers))
    except Exception:       # still not buildable: the schema problems are the report
        return None
    return load.Chain(layers)


def _key_order(key: str):
    return [(0, int(p), "") if p.isdigit() else (1, 0, p)
            for p in re.split(r"[.\[\]]+", key) if p]


def _drop(data: dict, key: str) -> None:
    """Remove ``a.b`` or ``a.b[2]`` from nested data (no error if it is not there)."""
    parts = [int(p) if p.isdigit() else p for p in re.split(r"[.\[\]]+", key) if p]
    node = data
    for part in parts[:-1]:
        try:
            node = node[part]
        except (KeyError, IndexError, TypeError):
            return
    last = parts[-1] if parts else None
    try:
        if isinstance(node, dict) and last in node or isinstance(node, list) and \
                isinstance(last, int) and last < len(node):
            del node[last]
    except TypeError:
        return


def _dedupe(diags: list[Diagnostic]) -> list[Diagnostic]:
    """Drop duplicates; order by file (first seen), then line."""
    diags = list(dict.fromkeys(diags))
    files = list(dict.fromkeys(d.file for d in diags))
    return sorted(diags, key=lambda d: (files.index(d.file), d.line or 0))


# --------------------------------------------------------------------------- patterns

def _check_patterns(profile: Profile, out: list[Diagnostic]
                    ) -> list[tuple[CommandRule, Compiled]]:
    compiled = []
    for rule in profile.rules:
        try:
            toks = compile_pattern(rule.pattern)
        except PatternError as exc:
            out.append(_diag("RF505", f"bad pattern {rule.pattern!r}: {exc.message}",
                             rule.where, column=exc.column, source=rule.pattern))
            continue
        why = _never_matches(toks, rule.pattern)
        if why:
            msg, col = why
            out.append(_diag("RF512", f"pattern {rule.pattern!r} can never match: {msg}",
                             rule.where, column=col, source=rule.pattern))
            continue
        compiled.append((rule, toks))
    return compiled


def _never_matches(toks: Compiled, source: str) -> tuple[str, int] | None:
    m = re.search(r"\{\s*\}", source)
    for i, tok in enumerate(toks):
        if tok[0] == "alt" and not tok[1]:
            return "'{}' has no alternatives, so no word matches it", (m.start() + 1 if m else 1)
    first = toks[0]
    words = [first[1]] if first[0] == "lit" else list(first[1]) if first[0] == "alt" else []
    if words and all(set(w) & UNMATCHABLE_PROGRAM_CHARS or not w for w in words):
        lead = len(source) - len(source.lstrip())
        return ("the program word contains a glob or expansion character; a capability's "
                "program never does (the classifier refuses such command names)", lead + 1)
    return None


# Programs that run whatever their arguments say: allowing them with any
# arguments approves arbitrary code in advance.
_CODE_RUNNERS = frozenset("""sh bash zsh dash ksh fish csh tcsh busybox python python2 python3
node nodejs deno bun perl ruby php lua Rscript pwsh osascript env sudo doas su pkexec xargs
nohup timeout nice stdbuf setsid exec eval command builtin time watch parallel ssh""".split())


def _check_catch_all(compiled, out: list[Diagnostic]) -> None:
    for rule, toks in compiled:
        if rule.action != "allow":
            continue
        first = toks[0]
        if first[0] in ("any", "rest", "hole"):
            out.append(_diag("RF507", f"allow rule {rule.pattern!r} allows every program",
                             rule.where, column=1, source=rule.pattern))
        elif (first[0] == "lit" and posixpath.basename(first[1]) in _CODE_RUNNERS
              and any(t[0] in ("rest", "any", "hole") for t in toks[1:])):
            out.append(_diag("RF507", f"allow rule {rule.pattern!r} lets {first[1]} run "
                             "arbitrary code", rule.where, column=1, source=rule.pattern))


# --------------------------------------------------------------------------- shadowing

_RANK = {"deny": 0, "ask": 1, "allow": 2}


def _tok_covers(a, b) -> bool:
    """Does pattern token ``a`` match every word token ``b`` can match?"""
    if a[0] in ("any", "hole"):
        return True
    if b[0] in ("any", "hole"):
        return False
    a_set = {a[1]} if a[0] == "lit" else set(a[1])
    b_set = {b[1]} if b[0] == "lit" else set(b[1])
    return b_set <= a_set


def covers(a: Compiled, b: Compiled) -> bool:
    """True when every argv matched by ``b`` is also matched by ``a``."""
    for i, ta in enumerate(a):
        if ta[0] == "rest":
            return True
        if i >= len(b) or b[i][0] == "rest":
            return False
        if not _tok_covers(ta, b[i]):
            return False
    return len(a) == len(b)


def _check_shadowed(compiled, out: list[Diagnostic], files: list[str]) -> None:
    """A rule covered by a rule of the same or a stronger action is dead.

    Not reported when the covering rule comes from a *child* file of the covered
    one: a child that turns an inherited ``ask`` into a ``deny`` is tightening
    on purpose, and the parent (often a built-in) is not the user's to edit.
    """
    def layer(rule: CommandRule) -> int:
        return files.index(rule.where.file) if rule.where.file in files else -1

    ordered = sorted(compiled, key=lambda rc: _RANK[rc[0].action])  # stable: file order kept
    for j, (rule, toks) in enumerate(ordered):
        for prev, ptoks in ordered[:j]:
            if layer(prev) > layer(rule):
                continue
            if covers(ptoks, toks):
                at = f" at {prev.where.file}:{prev.where.line}" if prev.where.line else ""
                what = ("is redundant" if prev.action == rule.action
                        else "never takes effect")
                out.append(_diag("RF511", f"{rule.action} rule {rule.pattern!r} {what}: "
                                 f"{prev.action} rule {render(ptoks)!r}{at} already covers it",
                                 rule.where, column=1, source=rule.pattern))
                break


# --------------------------------------------------------------------------- paths, env

def _norm(p: str) -> str:
    return p.rstrip("/") or "/"


def _inside(path: str, denied: str) -> bool:
    path, denied = _norm(path), _norm(denied)
    parts = path.split("/")
    for n in range(1, len(parts) + 1):
        prefix = "/".join(parts[:n]) or "/"
        if prefix == denied or fnmatch.fnmatchcase(prefix, denied):
            return True
    return False


def _check_writable(profile: Profile, origins, out: list[Diagnostic]) -> None:
    from ringfence.rfcore.credentials import export_paths

    # The credential table is read-denied in every sandbox, as the profile's own list.
    denied = list(profile.filesystem.read_deny) + (export_paths() if profile.sandbox else [])
    for w in profile.filesystem.writable:
        for d in denied:
            if _inside(w, d):
                where = origins.get(("filesystem.writable", w), Located())
                out.append(_diag("RF506", f"writable path {w!r} is inside read-denied {d!r}",
                                 where, source=w))
                break


def _check_network(profile: Profile, origins, leaf: str, out: list[Diagnostic]) -> None:
    net = profile.network
    if net.mode == "none":
        for d in net.allow:
            where = origins.get(("network.allow", d), Located())
            if where.file == leaf:
                out.append(_diag("RF514", f"{d!r} is unreachable: network.mode is \"none\" "
                                 "(set mode = \"proxy\")", where, source=d))
    elif not net.allow:
        where = origins.get("network.mode", Located())
        if where.file == leaf:
            out.append(_diag("RF514", 'network.mode is "proxy" but the allowlist is empty, '
                             "so there is no network (no proxy is started)", where))


def _glob_regex(glob: str) -> re.Pattern:
    """A read_deny glob relative to the workspace, as the compiler expands it."""
    out, i = "", 0
    while i < len(glob):
        if glob.startswith("**/", i):
            out, i = out + "(?:.*/)?", i + 3
        elif glob.startswith("**", i):
            out, i = out + ".*", i + 2
        elif glob[i] == "*":
            out, i = out + "[^/]*", i + 1
        elif glob[i] == "?":
            out, i = out + "[^/]", i + 1
        else:
            out, i = out + re.escape(glob[i]), i + 1
    return re.compile(out + r"\Z")


def _check_git_copies(profile: Profile, origins, workspace: str, out: list[Diagnostic]) -> None:
    """RF520: a workspace path masked by read_deny that git also tracks (``git show :.env``)."""
    from ringfence.staging.git.index import tracked_paths

    masks = [(entry, entry[len("{workspace}/"):]) for entry in profile.filesystem.read_deny
             if entry.startswith("{workspace}/")]
    if not masks:
        return
    tracked = tracked_paths(workspace)
    for entry, rel in masks:
        rx = _glob_regex(rel)
        hits = [t for t in tracked if rx.match(t)]
        if hits:
            where = origins.get(("filesystem.read_deny", entry), Located())
            more = f" and {len(hits) - 1} more" if len(hits) > 1 else ""
            out.append(_diag(
                "RF520", f"{entry!r} masks files by path only, but git tracks {hits[0]!r}"
                f"{more}: inside the sandbox `git show :{hits[0]}` (or .git/objects) still "
                "reads it; remove it from the index and history, or keep the repository "
                "out of the sandboxed workspace", where, source=entry))
