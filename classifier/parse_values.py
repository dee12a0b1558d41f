"""The tree-sitter front end, values part: assignments, declarations, tests and
the places where bash evaluates a value as code.

bash evaluates text arithmetically in ``(( ))``, ``$(( ))``, ``$[ ]``, the
header of ``for (( ))``, array subscripts (``${a[i]}``, ``a[i]=1``,
``arr=([i]=1)``) and substring offsets (``${s:i:n}``). Arithmetic evaluation
expands a variable's *value* again, and a value such as ``a[$(id)]`` runs
``id``. ``${!v}`` (indirection) evaluates the subscript of the name stored in
``v``, and ``${v@P}`` expands a value as a prompt string, backticks included.
The front end records each such place as a Construct (``arithmetic`` with the
expression text, ``indirection``, ``prompt-expansion``); the rules
(``rules/values.py``) decide which of them are one-time.

A mixin of the front end (``parse._Front``): it reads tree-sitter nodes but does
not import tree_sitter (``parse.py`` is the only module that does).
"""

from __future__ import annotations

from .ir import Assignment, Command, Construct, Word
from .parse_tables import WORDISH as _WORDISH



class ValuesMixin:
    """Lowers assignments, declarations and tests; records evaluation sites."""

    # -- where bash evaluates a value --
    def _arith_site(self, span, text: str) -> None:
        self.script.constructs.append(Construct("arithmetic", span, text.strip()))

    def _between(self, node, open_types: tuple[str, ...], close_types: tuple[str, ...]) -> str:
        """Source text between the first opening and the last closing token."""
        start, end = node.start_byte, node.end_byte
        for c in node.children:
            if not c.is_named and c.type in open_types:
                start = c.end_byte
                break
        for c in reversed(node.children):
            if not c.is_named and c.type in close_types:
                end = c.start_byte
                break
        return self.data[start:end].decode("utf-8")

    def value_site(self, node) -> None:
        t = node.type
        if t == "arithmetic_expansion":
            self._arith_site(self.nspan(node), self._between(node, ("$((", "$["), ("))", "]")))
        elif t == "subscript":
            # `a[i]`: indexed arrays evaluate the subscript arithmetically; whether `a`
            # is associative is unknown here, so every subscript is judged.
            index = self._between(node, ("[",), ("]",))
            if index.strip() not in ("@", "*"):
                self._arith_site(self.nspan(node), index)
        elif t == "array":
            # `arr=([i]=1 2)`: an element `[EXPR]=value` has an arithmetic subscript
            for c in node.children:
                text = self.src(c) if c.is_named else ""
                if text.startswith("["):
                    close = text.find("]=")
                    self._arith_site(self.nspan(c), text[1:close] if close > 0 else text)
        elif t == "expansion":
            self._expansion_site(node)

    def _expansion_site(self, node) -> None:
        kids = node.children
        n = len(kids)
        for i, c in enumerate(kids):
            if c.is_named:
                continue
            ct = c.type
            if ct == "!" and i == 1:
                # `${!v}` evaluates the name stored in v (with its subscript); only the
                # name listings `${!prefix*}`, `${!prefix@}`, `${!a[@]}` do not.
                nxt = kids[i + 1] if i + 1 < n else None
                after = kids[i + 2] if i + 2 < n else None
                listing = (after is not None and not after.is_named and
                           after.type in ("*", "@") and i + 3 < n and kids[i + 3].type == "}") \
                    or (nxt is not None and nxt.type == "subscript" and
                        self._between(nxt, ("[",), ("]",)).strip() in ("@", "*") and
                        after is not None and after.type == "}")
                if not listing:
                    self.script.constructs.append(Construct("indirection", self.nspan(node),
                                                            self.src(node)))
            elif ct == "@" and i + 1 < n and kids[i + 1].type == "P":
                self.script.constructs.append(Construct("prompt-expansion", self.nspan(node),
                                                        self.src(node)))
            elif ct == ":":
                # `${s:offset}` / `${s:offset:length}`: both are arithmetic
                end = kids[-1].start_byte if kids[-1].type == "}" else node.end_byte
                self._arith_site(self.nspan(node),
                                 self.data[c.end_byte:end].decode("utf-8"))
                return

    def arith(self, node, depth, in_subst) -> None:
        self._arith_site(self.nspan(node), self._between(node, ("((",), ("))",)))
        self._scan_dynamic(node, depth, {"subst": False})
        self.script.commands.append(Command("arith", (), (), self.nspan(node), None, 1, in_subst))

    def c_style_for(self, node, depth, in_subst) -> None:
        self._arith_site(self.nspan(node), self._between(node, ("((",), ("))",)))
        for child in node.children:
            if child.type == "do_group" or child.type == "compound_statement":
                self.stack.append((child, depth + 1, None, 1, in_subst, ()))
            else:
                self._scan_dynamic(child, depth, {"subst": False})
        self.script.commands.append(Command("arith", (), (), self.nspan(node), None, 1, in_subst))

    # -- statements that assign or test --
    def test_command(self, node, depth, stage, stages, in_subst) -> None:
        words: list[Word] = []
        todo = [node]
        while todo:
            n = todo.pop()
            if n.is_named and n.type in _WORDISH:
                words.append(self.word(n, depth, in_subst))
            elif n.child_count == 0:
                self.cover(n, n.is_named)
                words.append(Word(self.src(n), self.src(n), self.nspan(n)))
            else:
                todo.extend(reversed(n.children))
        self.script.commands.append(Command("test", tuple(words), (), self.nspan(node),
                                            stage, stages, in_subst))

    def assignment(self, node, depth, in_subst) -> Assignment:
        name = ""
        value = None
        append = False
        for child in node.children:
            if child.type == "variable_name" and not name:
                self.cover(child, True)
                name = self.src(child)
            elif child.type == "subscript" and not name:
                self._scan_dynamic(child, depth, {"subst": False})
                name = self.src(child)
            elif not child.is_named:
                self.cover(child)
                append |= child.type == "+="
            else:
                value = self.word(child, depth, in_subst)
        return Assignment(name, value, self.nspan(node), append)

    def declaration(self, node, depth, stage, stages, in_subst) -> None:
        words: list[Word] = []
        assigns: list[Assignment] = []
        for child in node.children:
            if child.type == "variable_assignment":
                assigns.append(self.assignment(child, depth, in_subst))
            elif not child.is_named:
                self.cover(child, True)
                words.append(Word(self.src(child), self.src(child), self.nspan(child)))
            elif child.type in _WORDISH:
                words.append(self.word(child, depth, in_subst))
            else:
                self.cover(child)
                self.problem("RF005", f"unexpected {child.type} in a declaration", child)
        self.script.commands.append(Command("declaration" if node.type == "declaration_command"
                                            else "unset", tuple(words), tuple(assigns),
                                            self.nspan(node), stage, stages, in_subst))
