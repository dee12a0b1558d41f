"""RF0xx checks on a trusted parse: program names and heredoc bodies we cannot
read statically. (Problems with the parse itself come from ``ringfence.classifier.parse``.)"""

from __future__ import annotations

from typing import Iterable

from ..analysis import static_name
from ringfence.classifier.rules import Context, Hit, always, redirects


def dynamic_command_name(ctx: Context) -> Iterable[Hit]:
    # `r``m`, `rm${IFS}-rf`, `$x`, `*.sh`, `{rm,-rf,/}`: what runs is decided at
    # run time, so no standing approval can name it.
    for inv in ctx.invocations:
        w = inv.program
        if w is not None and not static_name(w):
            if w.static and any(c.isspace() for c in w.value):
                yield w.span, f"the program name `{w.raw}` holds a blank, so it cannot be " \
                              "told apart from a program and its subcommand"
            else:
                yield w.span, f"the program name `{w.raw}` is decided at run time " \
                              "(expansion, glob or brace expansion)"
        for f in inv.facts:
            if f.kind == "stdin-program":
                # `xargs env`, `xargs command`: no program left after the wrapper,
                # so xargs appends one read from its input.
                yield f.span, f"`{f.detail}` runs a program read from standard input " \
                              "at run time"


def heredoc_substitution(ctx: Context) -> Iterable[Hit]:
    # tree-sitter's view of substitutions inside heredoc bodies is not trusted;
    # an unquoted body with `$(` or a backtick runs code when the heredoc is read.
    for r in ctx.script.redirects:
        if r.op in ("<<", "<<-") and not r.heredoc_quoted and \
                ("`" in r.heredoc_body or "$(" in r.heredoc_body):
            yield r.span, "the unquoted heredoc body contains a command substitution"


CHECKS = (
    ("RF003", dynamic_command_name, always),
    ("RF004", heredoc_substitution, redirects),
)
