"""Rich rendering of a Verdict for people (``check``, ``explain``; rules: render_rules).

Renders the very same :class:`classifier.Verdict` objects that ``check --json``
serialises, so what a person reads and what a machine reads cannot diverge.

Security: every piece of text shown here may come from an untrusted command, so
it is always wrapped in ``rich.text.Text`` (never parsed as rich markup: a
command containing ``[link=...]`` must not become markup) and passed through
:func:`visible` first, which replaces terminal control characters and bidi
overrides one-for-one. Raw ESC sequences from a command must never reach the
reviewer's terminal: they could recolour, hide or rewrite what is approved.
Replacing one character with one character keeps every span offset valid.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from rich.cells import cell_len
from rich.console import Group, RenderableType
from rich.padding import Padding
from rich.table import Table
from rich.text import Text
from rich.tree import Tree

from ringfence.classifier.verdict import Capability, Decoration, Finding, Verdict
from ringfence.rfcore.actions import canonical_action
from ringfence.rfcore.visible import _BIDI, _visible_char, visible  # noqa: F401
from ringfence.rfcore.rules import REGISTRY

CLASS_STYLE = {"helper": "bold green", "capability": "bold yellow", "one_time": "bold red"}
CLASS_MEANING = {
    "helper": "only harmless helpers and decoration; nothing to approve",
    "capability": "approvable: every capability below must be granted",
    "one_time": "needs one-time approval; no standing grant may cover it",
}
DECISION_STYLE = {"allow": "bold green", "ask": "bold yellow", "deny": "bold red"}

# Span kinds, lowest priority first: a finding drawn over a decoration drawn over
# the capability that contains both. Marker characters make the spans visible
# without colour (pipes, logs, NO_COLOR).
KINDS = ("capability", "decoration", "finding")
SPAN_STYLE = {"capability": "bold green underline", "decoration": "dim cyan",
              "finding": "bold white on red"}
MARKER = {"capability": "-", "decoration": "~", "finding": "^"}

# ``visible`` lives in rfcore (the hook needs it without rich); re-exported here.


def _spans(verdict: Verdict) -> list[tuple[str, tuple[int, int], object]]:
    out: list[tuple[str, tuple[int, int], object]] = []
    # RF2xx findings only explain how a capability got its key (`git push`
    # includes its subcommand); drawn as findings they would look like problems.
    # They stay in the findings table and the code explanations.
    findings = [f for f in verdict.findings if not f.code.startswith("RF2")]
    for kind, items in zip(KINDS, (verdict.capabilities, verdict.decorations, findings)):
        out.extend((kind, tuple(item.span), item) for item in items)
    return out


def highlight(verdict: Verdict) -> Text:
    """The command, made visible, with each span styled by kind (character offsets)."""
    text = Text(visible(verdict.command, keep_newlines=True))
    n = len(verdict.command)
    for kind, (start, end), _ in _spans(verdict):
        start, end = max(0, start), min(n, end)
        if start < end:
            text.stylize(SPAN_STYLE[kind], start, end)
    return text


def marker_lines(verdict: Verdict) -> list[tuple[str, str]]:
    """``[(line, markers)]``: each command line with a marker line under it.

    The marker line puts ``-`` under capabilities, ``~`` under decorations and
    ``^`` under findings (later kinds win), one marker per terminal cell.
    """
    command = verdict.command
    kind_at: list[str | None] = [None] * len(command)
    for kind, (start, end), _ in _spans(verdict):
        for i in range(max(0, start), min(len(command), end)):
            kind_at[i] = kind
    out, pos = [], 0
    for line in command.split("\n"):
        shown = visible(line)
        marks = "".join(
            (MARKER[kind_at[pos + i]] if kind_at[pos + i] else " ") * cell_len(ch)
            for i, ch in enumerate(shown))
        out.append((shown, marks.rstrip()))
        pos += len(line) + 1
    return out


def _annotated(verdict: Verdict, width: int | None = None) -> Text:
    """The command with its marker line under each line. A line wider than
    ``width`` is folded into chunks, each followed by its own slice of markers, so
    the terminal never wraps the two apart (issue 14 §6)."""
    styled = highlight(verdict)
    out, pos = Text(no_wrap=True, overflow="ignore"), 0
    for line, marks in marker_lines(verdict):
        for (c0, c1), (m0, m1) in _folds(line, max(8, width) if width else None):
            out.append_text(styled[pos + c0:pos + c1])
            out.append("\n")
            piece = marks[m0:m1].rstrip()
            if piece:
                out.append(piece + "\n", style="dim")
        pos += len(line) + 1
    out.rstrip()
    return out


def _folds(line: str, width: int | None) -> list[tuple[tuple[int, int], tuple[int, int]]]:
    """``[((char start, end), (cell start, end))]``: chunks of at most ``width`` cells
    (a wide character is never split from its markers)."""
    if width is None or cell_len(line) <= width:
        return [((0, len(line)), (0, cell_len(line)))]
    out, start, cells, cell0 = [], 0, 0, 0
    for i, ch in enumerate(line):
        w = cell_len(ch)
        if cells + w > width and i > start:
            out.append(((start, i), (cell0, cell0 + cells)))
            start, cell0, cells = i, cell0 + cells, 0
        cells += w
    out.append(((start, len(line)), (cell0, cell0 + cells)))
    return out


def legend() -> Text:
    out = Text("legend: ")
    for kind in KINDS:
        out.append(f"{MARKER[kind]} ", style="dim")
        out.append(kind, style=SPAN_STYLE[kind])
        out.append("  ")
    out.rstrip()
    return out


def _rule_name(code: str) -> str:
    rule = REGISTRY.get(code)
    return rule.name if rule else "unregistered code"


def _span_text(span: Iterable[int]) -> Text:
    # Text, never a str: rich would try to read a str cell as markup.
    start, end = span
    return Text(f"[{start}, {end})")


def verdict_header(verdict: Verdict, decision: Mapping | None = None) -> Text:
    out = Text("verdict: ")
    out.append(verdict.verdict, style=CLASS_STYLE.get(verdict.verdict, "bold"))
    out.append(f"  ({CLASS_MEANING.get(verdict.verdict, 'unknown class')})", style="dim")
    if decision is not None:
        out.append("\ndecision: ")
        out.append(str(decision.get("decision")),
                   style=DECISION_STYLE.get(decision.get("decision"), "bold"))
        for reason in decision.get("reasons", ()):
            out.append(f"\n  - {visible(str(reason))}")
    return out


# A person cannot review 10,000 pipeline stages; past this many rows (or tree
# items) the view says how many more there are and points at --json, which
# always has everything.
MAX_ROWS = 200


def _more(n: int, what: str) -> Text:
    return Text(f"… and {n} more {what} (ringfence check --json lists all)", style="dim")


def _capped(items, notes: list[Text], what: str):
    """The first MAX_ROWS items; a note for the rest goes into ``notes``."""
    items = list(items)
    if len(items) > MAX_ROWS:
        notes.append(_more(len(items) - MAX_ROWS, what))
    return items[:MAX_ROWS]


def capability_table(caps: Iterable[Capability], notes: list[Text]) -> Table:
    table = Table(title="capabilities", title_justify="left")
    for col in ("key", "program", "argv", "span", "effects"):
        table.add_column(col, overflow="fold")
    for cap in _capped(caps, notes, "capabilities"):
        table.add_row(Text(visible(cap.key), style="bold"), Text(visible(cap.program)),
                      Text(visible(" ".join(cap.argv))), _span_text(cap.span),
                      Text(visible(", ".join(cap.effects))))
    return table


def _coded_table(title: str, rows: Iterable[Decoration | Finding], notes: list[Text]) -> Table:
    table = Table(title=title, title_justify="left")
    for col in ("code", "name", "text" if title == "decorations" else "message", "span"):
        table.add_column(col, overflow="fold")
    for item in _capped(rows, notes, title):
        body = item.text if isinstance(item, Decoration) else item.message
        table.add_row(Text(item.code, style="bold"), Text(_rule_name(item.code)),
                      Text(visible(body)), _span_text(item.span))
    return table


def verdict_view(verdict: Verdict, decision: Mapping | None = None) -> RenderableType:
    """What ``ringfence check 'CMD'`` prints."""
    parts: list[RenderableType] = [highlight(verdict), verdict_header(verdict, decision)]
    if verdict.capabilities:
        notes: list[Text] = []
        parts += [capability_table(verdict.capabilities, notes), *notes]
    else:
        parts.append(Text("capabilities: none", style="dim"))
    for title, rows in (("decorations", verdict.decorations), ("findings", verdict.findings)):
        if rows:
            notes = []
            parts += [_coded_table(title, rows, notes), *notes]
    parts.append(Text(f"parser: {verdict.parser}", style="dim"))
    return Group(*parts)


def _node_label(kind: str, item, verdict: Verdict) -> Text:
    if kind == "capability":
        label = Text("capability ", style="dim")
        label.append(visible(item.key), style=SPAN_STYLE[kind])
        if item.program != item.key:
            label.append(f"  program {visible(item.program)}", style="dim")
        action = canonical_action(item.key, item.argv)
        if action is not None:
            # deny/ask rules on the canonical action cover this spelling too
            label.append(f"  action {visible(action)}", style="dim")
        return label
    label = Text(f"{kind} ", style="dim")
    label.append(f"{item.code} {_rule_name(item.code)}", style=SPAN_STYLE[kind])
    body = item.text if kind == "decoration" else item.message
    label.append(f"  {visible(body)}")
    return label


_PIPES = ("|", "|&")


def _is_operator(text: str) -> bool:
    return bool(text) and len(text) <= 3 and not any(c.isalnum() for c in text)


def _prefixed(node: Tree, joiner: str) -> Tree:
    if _is_operator(joiner):
        node.label = Text(f"{visible(joiner)} ", style="bold").append_text(node.label)
    return node


def invocation_tree(verdict: Verdict) -> Tree:
    """The tree of invocations: lists -> pipelines -> commands -> argv.

    Built from the Verdict's spans alone (the same objects as the JSON). A
    capability's span is its whole simple command, so the decorations and
    findings inside it hang under it; its argv (wrappers already unwrapped by
    the classifier) and effects are its leaves. Top-level items joined by ``|``
    form a pipeline node; the operator joining list items (``&&``, ``;``...)
    prefixes them. An item separated from the previous one by blanks only
    (``git push 2>&1``: the redirect lies outside the argv's span) belongs to
    the same simple command and hangs under it.
    """
    command = verdict.command
    root = Tree(Text(f"bash -c  ({verdict.verdict})", style=CLASS_STYLE.get(verdict.verdict)))
    order = {k: i for i, k in enumerate(KINDS)}
    items = sorted(_spans(verdict), key=lambda s: (s[1][0], -s[1][1], order[s[0]]))
    stack: list[tuple[int, Tree]] = []      # (end, node) of open containers
    groups: list[tuple[str, list[tuple[str, Tree]]]] = []   # (joiner, [(gap, stage)])
    prev_end = 0
    for kind, (start, end), item in items:
        while stack and start >= stack[-1][0]:
            stack.pop()
        node = Tree(_node_label(kind, item, verdict))
        if stack:
            stack[-1][1].children.append(node)
        else:
            raw_gap = command[prev_end:start]
            gap = raw_gap.strip()
            piped = gap in _PIPES or (not gap and command[start:end].startswith("|"))
            if piped and groups:
                groups[-1][1].append((gap, node))
            elif groups and not gap and "\n" not in raw_gap:
                # only blanks since the previous item: the same simple command
                # goes on (a redirect such as `2>&1` after the argv's span)
                groups[-1][1][-1][1].children.append(node)
            else:
                groups.append((gap, [("", node)]))
            prev_end = max(prev_end, end)
        if kind == "capability":
            argv = node.add(Text("argv", style="dim"))
            for word in item.argv:
                argv.add(Text(visible(word)))
            for effect in item.effects:
                node.add(Text(f"effect {visible(effect)}", style="dim"))
        stack.append((end, node))
    for joiner, stages in groups[:MAX_ROWS]:
        if len(stages) == 1:
            root.children.append(_prefixed(stages[0][1], joiner))
            continue
        pipeline = _prefixed(Tree(Text(f"pipeline ({len(stages)} stages)", style="bold")),
                             joiner)
        pipeline.children.extend(_prefixed(node, gap) for gap, node in stages[:MAX_ROWS])
        if len(stages) > MAX_ROWS:
            pipeline.add(_more(len(stages) - MAX_ROWS, "stages"))
        root.children.append(pipeline)
    if len(groups) > MAX_ROWS:
        root.add(_more(len(groups) - MAX_ROWS, "items"))
    if not items:
        root.add(Text("(no invocations)", style="dim"))
    return root


def _codes_in_order(verdict: Verdict) -> list[str]:
    codes = [d.code for d in verdict.decorations] + [f.code for f in verdict.findings]
    return list(dict.fromkeys(codes))


def explain_view(verdict: Verdict, decision: Mapping | None = None, *,
                 width: int | None = None) -> RenderableType:
    """What ``ringfence explain 'CMD'`` prints; ``width``: the terminal's columns."""
    parts: list[RenderableType] = [
        Text("command", style="bold underline"), _annotated(verdict, width), legend(), Text(""),
        verdict_header(verdict, decision), Text(""),
        Text("invocations", style="bold underline"), invocation_tree(verdict),
    ]
    codes = _codes_in_order(verdict)
    if codes:
        parts += [Text(""), Text("codes", style="bold underline")]
        for code in codes:
            rule = REGISTRY.get(code)
            head = Text(code, style="bold")
            if rule is None:
                parts += [head.append("  (not in the rule registry)", style="red")]
                continue
            head.append(f" {rule.name}", style="bold")
            head.append(f"  ({rule.family})", style="dim")
            parts += [head, Padding(Text(rule.explanation), (0, 0, 0, 2))]
    return Group(*parts)
