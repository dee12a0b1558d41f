"""The tree-sitter front end, redirects part: redirects, heredocs and the coverage check.

A mixin of the front end (``parse._Front``): it reads tree-sitter nodes but does
not import tree_sitter (``parse.py`` is the only module that does).
"""

from __future__ import annotations

from .ir import Construct, ParseProblem, Redirect, Word
from .parse_tables import REDIRECTS as _REDIRECTS, WORDISH as _WORDISH
from .parse_words import join



class RedirectsMixin:
    """Redirect lowering and the integrity check; needs the front end's helpers."""

    def redirected(self, node, depth, stage, stages, in_subst) -> None:
        body = node.child_by_field_name("body")
        outer = []
        for child in node.children:
            if body is not None and child.id == body.id:
                continue
            if child.type in _REDIRECTS:
                outer.append(child)
            elif not child.is_named:
                self.cover(child)
            else:
                self.cover(child)
                self.problem("RF005", f"unexpected {child.type} after a redirection", child)
        if body is None:
            for r in outer:
                self._orphan_redirect(r, depth, in_subst)
        elif body.type == "command":
            self.command(body, depth, stage, stages, in_subst, outer)
        else:
            self.stack.append((body, depth, stage, stages, in_subst, tuple(outer)))

    def redirect(self, node, owner, depth, in_subst) -> list[Word]:
        """Record one redirect; return words tree-sitter attached after its target."""
        t = node.type
        op = ""
        fd = None
        target = None
        quoted = False
        body = ""
        extra: list[Word] = []
        for child in node.children:
            ct = child.type
            if ct == "file_descriptor":
                self.cover(child, True)
                text = self.src(child)
                if text.isdigit():
                    fd = int(text)
                else:
                    # `head -200>f`: only an all-digit word is a descriptor; bash
                    # passes `-200` to the command as an argument
                    extra.append(Word(text, text, self.nspan(child)))
            elif not child.is_named:
                self.cover(child)
                op = op or ct
            elif ct == "heredoc_start":
                self.cover(child, True)
                delim = self.src(child)
                quoted = any(q in delim for q in "'\"\\")
            elif ct == "heredoc_body":
                self.cover(child)
                body = self.src(child)
            elif ct == "heredoc_end":
                self.cover(child)
            elif ct in _REDIRECTS:
                # `cat <<'EOF' > out`: tree-sitter nests the second redirect
                extra.extend(self.redirect(child, owner, depth, in_subst))
            elif ct in _WORDISH:
                w = self.word(child, depth, in_subst)
                last = extra[-1] if extra else target
                if last is not None and self._adjacent(last, child):
                    # `> $f-$g.md5`: tree-sitter splits one word into adjacent nodes
                    if extra:
                        extra[-1] = join(last, w)
                    else:
                        target = join(last, w)
                elif target is None:
                    target = w
                else:
                    extra.append(w)
            else:
                # A heredoc line's continuation (`cat <<EOF | sh`) hangs off the
                # redirect in tree-sitter's tree; its leading '|' makes it a
                # later pipeline stage.
                if ct == "pipeline":
                    self._heredoc_pipeline(child, depth, in_subst)
                else:
                    self.stack.append((child, depth, None, 1, in_subst, ()))
        if t == "heredoc_redirect":
            op = op or "<<"
            self.script.constructs.append(Construct("heredoc", self.nspan(node), body))
        elif t == "herestring_redirect":
            op = "<<<"
            self.script.constructs.append(Construct("here-string", self.nspan(node),
                                                    self.src(node)))
        self.script.redirects.append(Redirect(op, fd, target, self.nspan(node), owner,
                                              quoted, body))
        return extra

    def _orphan_redirect(self, node, depth, in_subst) -> None:
        for w in self.redirect(node, None, depth, in_subst):
            self.problem("RF005", f"unexpected word `{w.raw}` after a redirection", None, w.span)

    def _heredoc_pipeline(self, node, depth, in_subst) -> None:
        # Every statement of a `| a | b` continuation is a non-first pipeline stage.
        stmts = [c for c in node.children if c.is_named]
        for c in node.children:
            if not c.is_named:
                self.cover(c)
        n = len(stmts) + 1
        self.stack.extend((c, depth, i + 1, n, in_subst, ())
                          for i, c in reversed(list(enumerate(stmts))))

    # -- integrity --
    def check_coverage(self) -> None:
        """Every non-blank byte must belong to some token (fail closed otherwise)."""
        data = self.data
        cov = sorted(self.cov)
        pos = 0
        prev_wordish = False
        for start, end, wordish in cov:
            if start > pos:
                # fast path: plain blanks (CR/VT/FF never get here: pre-scan)
                if not data[pos:start].isspace():
                    self._gap(pos, start, prev_wordish, wordish)
            if end > pos:
                pos = end
                prev_wordish = wordish
        if pos < len(data):
            self._gap(pos, len(data), prev_wordish, False)

    def _gap(self, start: int, end: int, left_word: bool, right_word: bool) -> None:
        gap = self.data[start:end]
        rest = gap.replace(b"\\\n", b"")
        stripped = rest.strip(b" \t\n")
        if stripped:
            off = start + gap.index(stripped[:1])
            ch = chr(self.data[off]) if self.data[off] < 128 else "non-ASCII byte"
            self.script.problems.append(ParseProblem(
                "RF002", f"the parser dropped input `{ch}` at offset {off}: no token covers it",
                self.span(off, off + 1)))
        elif rest == b"" and gap and left_word and right_word:
            # `ec\<newline>ho`: bash joins the halves into one word; tree-sitter splits it
            self.script.problems.append(ParseProblem(
                "RF002", "a backslash-newline inside a word was split by the parser",
                self.span(start, end)))

