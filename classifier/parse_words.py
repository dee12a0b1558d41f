"""The tree-sitter front end, words part: lowering word nodes to IR Words.

A mixin of the front end (``parse._Front``): it reads tree-sitter nodes but does
not import tree_sitter (``parse.py`` is the only module that does). Quote
removal itself lives in ``words.py``.
"""

from __future__ import annotations


from ringfence.rfcore.lazyre import lazy
from .ir import Construct, Word
from .parse_tables import VALUE_SITES
from .words import (BRACE_EXPANSION, GLOB_CHARS, ansi_c_end, decode_ansi_c,
                    live_substitution_in_double, plain_tail, unquote_double, unquote_plain,
                    unterminated_quote)

SPECIAL_PARAM = lazy(r"\$[$!?#@*0-9A-Za-z_{(-]")
SUBST = frozenset({"command_substitution", "process_substitution"})
DYNAMIC = frozenset({"simple_expansion", "expansion", "arithmetic_expansion"})


class WordsMixin:
    """Builds Words; needs the front end's data, cmap, cov, stack, problem(), cover()..."""

    def word(self, node, depth: int, in_subst: bool) -> Word:
        """Build one Word. Recurses only through word structure (bounded by the pre-scan)."""
        t = node.type
        if t == "word" or t == "number":
            # fast path: a plain unquoted token (most words)
            start, end = node.start_byte, node.end_byte
            self.cov.append((start, end, True))
            raw = self.data[start:end].decode("utf-8")
            if "\\" in raw:
                value, esc, m = unquote_plain(raw)
            else:
                value, esc, m = raw, False, raw
            if " " in m or "\t" in m or "\n" in m:
                # `lpr { }\;`: tree-sitter made one token of text bash splits at blanks
                self.problem("RF005", f"`{raw}` holds an unescaped blank", node)
            glob = ("*" in m or "?" in m or "[" in m or
                    ("{" in m and BRACE_EXPANSION.search(m) is not None))
            # `/tmp/$$`, `$!`: special parameters tree-sitter leaves inside a plain word
            dyn = "$" in m and SPECIAL_PARAM.search(m) is not None
            cm = self.cmap
            return Word(value, raw, (start, end) if cm is None else (cm[start], cm[end]),
                        dyn, glob, esc, False)
        parts: list[str] = []
        flags = {"dyn": False, "glob": False, "quoted": False, "subst": False}
        mask: list[str] = []
        self._word_parts(node, depth, parts, mask, flags)
        value = "".join(parts)
        glob = flags["glob"]
        if not glob:
            m = "".join(mask)
            glob = any(c in GLOB_CHARS for c in m) or bool(BRACE_EXPANSION.search(m))
        return Word(value, self.src(node), self.nspan(node), flags["dyn"] or flags["subst"],
                    glob, flags["quoted"], flags["subst"])

    def _word_parts(self, node, depth, parts, mask, flags) -> None:
        t = node.type
        if t == "word" or t == "number" or t == "variable_name" or t == "test_operator":
            self.cover(node, True)
            v, esc, m = unquote_plain(self.src(node))
            parts.append(v)
            mask.append(m)
            if esc:
                flags["quoted"] = True
        elif t == "raw_string":
            self.cover(node, True)
            parts.append(self.src(node)[1:-1])
            mask.append("\0")
            flags["quoted"] = True
        elif t == "ansi_c_string":
            self.cover(node, True)
            text = self.src(node)
            end = ansi_c_end(text)
            flags["quoted"] = True
            if end == len(text):
                parts.append(decode_ansi_c(text[2:-1]))
                mask.append("\0")
            else:
                self._misread_ansi_c(node, text, end, parts, mask)
        elif t == "string":
            # The whole string counts as covered: tree-sitter leaves newlines and
            # escapes between string_content tokens, and the static value is
            # computed from the raw text between the quotes, not from tokens.
            self.cover(node, True)
            flags["quoted"] = True
            mask.append("\0")
            inner = self.src(node)[1:-1]
            live = False
            arith: list[tuple[int, int]] = []
            for child in node.children:
                ct = child.type
                if ct in SUBST:
                    live = True
                    flags["subst"] = True
                    self.push_subst(child, depth)
                elif ct in DYNAMIC:
                    flags["dyn"] = True
                    live |= self._scan_dynamic(child, depth, flags)
                    if ct == "arithmetic_expansion":
                        arith.append((child.start_byte, child.end_byte))
                elif ct == "string_content" or not child.is_named:
                    pass
                else:
                    self.problem("RF005", f"unexpected {ct} inside a double-quoted string", child)
            if arith and not live:
                # `"$(( 1 ))"`: the `$((` is arithmetic, not a substitution tree-sitter
                # missed (a `$(` inside it fails the arithmetic check, RF140, anyway)
                base = node.start_byte + 1
                chars = bytearray(self.data[base:node.end_byte - 1])
                for a, b in arith:
                    chars[a - base:b - base] = b" " * (b - a)
                checked = chars.decode("utf-8", "replace")
            else:
                checked = inner
            if live_substitution_in_double(checked) and not live:
                self.problem("RF005", "a substitution inside double quotes was not parsed", node)
            parts.append(inner if (flags["dyn"] or flags["subst"]) else unquote_double(inner))
        elif t == "translated_string":
            for child in node.children:
                if child.is_named:
                    self._word_parts(child, depth, parts, mask, flags)
                else:
                    self.cover(child)
        elif t == "concatenation":
            end = node.start_byte
            for child in node.children:
                if child.start_byte != end:
                    self.problem("RF005", "pieces of one word are separated by blanks", node)
                end = child.end_byte
                if child.is_named:
                    self._word_parts(child, depth, parts, mask, flags)
                else:
                    # anonymous pieces: a literal '$' (`a$`), or backticks (r``m)
                    self.cover(child, True)
                    s = self.src(child)
                    if "`" in s and s != "``":
                        # `a` `b` read as one substitution with body "a` `b": a mis-parse
                        self.problem("RF005", f"ambiguous backticks `{s}`", child)
                    if SPECIAL_PARAM.search(s):           # `/tmp/$$`: the PID
                        flags["dyn"] = True
                    if "`" in s:
                        flags["subst"] = True
                        self.script.constructs.append(
                            Construct("command-substitution", self.nspan(child), s))
                    parts.append(s)
                    mask.append(s)
        elif t in SUBST:
            flags["subst"] = True
            parts.append(self.src(node))
            mask.append("\0")
            self.push_subst(node, depth)
        elif t in DYNAMIC:
            flags["dyn"] = True
            text = self.src(node)
            if t == "simple_expansion" and (" " in text or "\t" in text or "\n" in text):
                # tree-sitter reads `$ file` as the expansion $file; bash sees `$` and `file`
                self.problem("RF005", f"`{text}` is not one expansion", node)
            parts.append(text)
            mask.append("\0")
            self._scan_dynamic(node, depth, flags)
        elif t == "extglob_pattern" or t == "regex":
            self.cover(node, True)
            parts.append(self.src(node))
            mask.append(self.src(node))
            flags["glob"] = True
        elif t == "brace_expression":
            self._scan_dynamic(node, depth, flags)
            parts.append(self.src(node))
            mask.append("\0")
            flags["glob"] = True
        elif t == "special_variable_name" or t == "array":
            flags["dyn"] = True
            parts.append(self.src(node))
            mask.append("\0")
            self._scan_dynamic(node, depth, flags)
        else:
            self.cover(node)
            self.problem("RF005", f"unexpected {t} in a word", node)
            parts.append(self.src(node))
            flags["dyn"] = True

    def _misread_ansi_c(self, node, text: str, end: int | None, parts, mask) -> None:
        """tree-sitter's `$'...'` token runs past where bash closes the string
        (`$'\\\\'\\'`: bash reads `$'\\\\'` then `\\'`). Re-read the rest of the token
        as bash would when it is plain text; otherwise the tree describes another
        command, and we fail closed: RF001 when bash's own reading ends inside a
        quote (bash rejects the command), RF005 when it is only a mis-parse."""
        tail = plain_tail(text[end:]) if end is not None else None
        if tail is not None:
            parts.append(decode_ansi_c(text[2:end - 1]) + tail)
            mask.append("\0")
            return
        rest = self.data[node.start_byte:].decode("utf-8")
        if end is None or unterminated_quote(rest[end:]):
            self.problem("RF001", f"`{text}`: bash closes the $'...' string earlier and then "
                         "reads an unterminated quote (a syntax error)", node)
        else:
            self.problem("RF005", f"`{text}`: bash closes the $'...' string earlier than "
                         "tree-sitter does", node)
        parts.append(text)

    def _scan_dynamic(self, node, depth, flags) -> bool:
        """Cover an expansion's tokens; queue any substitution inside it."""
        found = False
        todo = [node]
        while todo:
            n = todo.pop()
            if n.type in SUBST:
                found = True
                flags["subst"] = True
                self.push_subst(n, depth)
            elif n.child_count == 0:
                self.cover(n, n.is_named)
            elif n.type in VALUE_SITES:
                self.value_site(n)
                todo.extend(n.children)
            elif n.type == "string":
                self.cover(n, True)
                todo.extend(n.children)
            else:
                todo.extend(n.children)
        return found



def join(a: Word, b: Word) -> Word:
    """Two adjacent pieces tree-sitter left apart are one word to bash."""
    raw = a.raw + b.raw
    glob = a.glob or b.glob or (BRACE_EXPANSION.search(raw) is not None)
    return Word(a.value + b.value, raw, (a.span[0], b.span[1]), a.dynamic or b.dynamic, glob,
                a.quoted or b.quoted, a.subst or b.subst)
