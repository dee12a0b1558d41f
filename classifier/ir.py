"""The normalized intermediate representation every classifier rule reads.

The tree-sitter front end (``parse.py``) lowers a parse tree into these
records; nothing downstream ever sees a tree-sitter node. The IR is *flat*
on purpose: a script is a list of simple commands (each carrying its pipeline
position and nesting context), a list of redirects and a list of structural
constructs. Rules iterate over lists, so no stage ever recurses on untrusted
nesting depth.

All spans are ``[start, end)`` *character* offsets into the command string.
The records are NamedTuples: immutable and cheap to build on the hot path.
"""


from typing import NamedTuple

Span = tuple[int, int]


class Word(NamedTuple):
    """One shell word after quote removal, as bash would see it.

    ``value`` is only meaningful when ``dynamic`` is false: a dynamic word's
    final text depends on the environment (parameter, arithmetic or command
    expansion), so rules must treat it as unknown. (A NamedTuple: immutable and
    cheap to build; words are the most numerous IR records.)
    """

    value: str          # text after quote removal ('l\\ongbridge' -> 'longbridge')
    raw: str            # source text
    span: Span
    dynamic: bool = False   # contains $var, ${..}, $((..)), $(..), `..`, <(..)
    glob: bool = False      # unquoted *, ?, [ or a brace expansion {a,b} / {1..3}
    quoted: bool = False    # any quoting or escaping was removed
    subst: bool = False     # contains a live command or process substitution

    @property
    def static(self) -> bool:
        """True when bash would produce exactly ``value``, as one word."""
        return not (self.dynamic or self.glob)


class Assignment(NamedTuple):
    name: str
    value: Word | None      # None for `export NAME` without '='
    span: Span
    append: bool = False    # NAME+=value


class Redirect(NamedTuple):
    op: str                 # '<', '>', '>>', '>|', '&>', '&>>', '<>', '>&', '<&',
                            # '>&-', '<&-', '<<', '<<-', '<<<'
    fd: int | None          # explicit descriptor (the 2 in 2>&1), else None
    target: Word | None     # file, fd number, here-string word; None for heredoc/close
    span: Span
    owner: int | None = None    # index into Script.commands; None = a compound statement
    heredoc_quoted: bool = False
    heredoc_body: str = ""


class Command(NamedTuple):
    """A simple command (or a command-like statement such as ``[[ .. ]]``).

    ``kind`` is 'simple' (name + arguments), 'test' (``[ ]``/``[[ ]]``),
    'declaration' (export/declare/local/readonly/typeset), 'unset',
    'assign' (bare assignments, no command), 'arith' (``(( .. ))``) or 'loop' (the
    variable of ``for``/``select``: one assignment of a dynamic value, no words).
    """

    kind: str
    words: tuple[Word, ...]
    assignments: tuple[Assignment, ...]
    span: Span
    stage: int | None = None    # position in its pipeline, None if not a direct stage
    stages: int = 1             # number of stages of that pipeline
    in_subst: bool = False      # inside a command/process substitution
    background: bool = False    # followed by '&'


class Construct(NamedTuple):
    """A structural fact rules care about (not a command)."""

    kind: str      # 'command-substitution', 'process-substitution', 'heredoc',
                   # 'here-string', 'background', 'function', 'comment'
    span: Span
    text: str = ""


class ParseProblem(NamedTuple):
    """The parse itself cannot be trusted (RF0xx); the engine fails closed."""

    code: str
    message: str
    span: Span


class Script:
    """The whole command string lowered: flat lists the rules iterate."""

    __slots__ = ("source", "commands", "redirects", "constructs", "problems")

    def __init__(self, source: str, problems: list[ParseProblem] | None = None) -> None:
        self.source = source
        self.commands: list[Command] = []
        self.redirects: list[Redirect] = []
        self.constructs: list[Construct] = []
        self.problems: list[ParseProblem] = problems if problems is not None else []

    def argvs(self) -> list[list[str]]:
        """Each simple command's argv after quote removal (the differential form)."""
        return [[w.value for w in c.words] for c in self.commands if c.kind == "simple"]
