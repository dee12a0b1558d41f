"""RF0xx: the parse could not be trusted; fail closed."""

from ringfence.rfcore.rules import Rule

RULES: tuple[Rule, ...] = (
    Rule("RF001", "parse-error",
         "The command does not parse cleanly (ERROR or MISSING node).",
         "tree-sitter-bash recovers from syntax errors by inserting ERROR or MISSING nodes "
         "and carrying on. Whatever it guessed is not what bash will do, so nothing derived "
         "from such a tree can be approved standing: the verdict is one_time with only this "
         "finding. Fix the quoting or syntax, or approve the exact string once.",
         bad="echo 'unterminated", good="echo 'terminated'",
         known_problems="Some inputs bash accepts are errors for tree-sitter (e.g. `cmd <> f`, "
                        "extglob `!(x)`, a brace expansion in command position); they fail "
                        "closed here."),
    Rule("RF002", "dropped-input",
         "A non-blank input byte is covered by no token: the parser silently dropped it.",
         "tree-sitter-bash silently drops some bytes it does not model: the `-` in "
         "`python3 - <<EOF`, an escaped space `\\ `, and it splits a word at a "
         "backslash-newline (`ec\\<newline>ho` is `echo` to bash). The classifier checks "
         "that every non-blank byte belongs to some token, and fails closed when one does "
         "not, because the tree then describes a different command from the one bash runs.",
         bad="python3 - <<EOF\nprint(1)\nEOF", good="python3 script.py"),
    Rule("RF003", "dynamic-command-name",
         "The program name is decided at run time (expansion, glob or brace expansion).",
         "A capability is a statically known program. If the command name, after quote "
         "removal, contains `$`, a backtick, `{`, `}`, `*`, `?` or `[`, or is an expansion "
         "(`$x`, `r``m`, `rm${IFS}-rf`), then what runs depends on the environment or the "
         "file system at run time, so no standing approval can name it. So does a wrapper "
         "left without a program under xargs (`xargs env`, `xargs command`, `xargs nice`): "
         "xargs appends its input, so the program is read from stdin.",
         bad="$tool --version", good="tool --version"),
    Rule("RF004", "heredoc-substitution",
         "An unquoted heredoc body contains a command substitution.",
         "In an unquoted heredoc (`<<EOF`), bash expands `$(...)` and backticks in the body "
         "when the document is read: hidden commands run. Quote the delimiter (`<<'EOF'`) "
         "to make the body literal text.",
         bad="cat <<EOF\n$(id)\nEOF", good="cat <<'EOF'\n$(id)\nEOF"),
    Rule("RF005", "unknown-construct",
         "The classifier met a construct it does not understand.",
         "Any node kind the front end has no rule for, or a sign that tree-sitter mis-read "
         "the text (a live `$(` inside double quotes with no substitution node, a token with "
         "an unescaped blank such as `{ }`, `$ ls` read as one expansion, two backtick "
         "substitutions read as one, a word left after a group's redirection), makes the "
         "parse untrusted. Failing closed keeps a gap in the classifier from becoming a "
         "silent approval.",
         bad="{ make; } > log.txt extra", good="{ make; } > /dev/null"),
    Rule("RF006", "nul-byte",
         "The input contains a NUL byte.",
         "bash cannot carry a NUL inside a `-c` string, so the command that would run is "
         "not the text shown. It is refused before parsing.",
         bad="echo a\0b", good="echo ab"),
    Rule("RF007", "control-character",
         "The input contains a control or invisible formatting character.",
         "Control characters (other than tab and newline) such as CR, VT, FF and ESC, and "
         "invisible formatting characters such as zero-width spaces and bidi overrides, make "
         "the text a person reads differ from what runs (tree-sitter also drops VT, FF and "
         "CR). The input is refused before parsing.",
         bad="echo safe\r rm -rf ~", good="echo safe"),
    Rule("RF008", "invalid-utf8",
         "The input is not valid UTF-8 (a lone surrogate or undecodable byte).",
         "Commands are parsed as UTF-8. Bytes that do not decode (carried as lone surrogates "
         "by Python's surrogateescape) cannot be shown faithfully, so the command is refused "
         "before parsing.",
         bad="echo \udcff", good="echo \u00ff"),
    Rule("RF009", "input-too-large",
         "The input is larger than 64 KiB.",
         "Very large inputs are refused before parsing, so classification time stays "
         "bounded and nobody approves a command they cannot read.",
         bad="echo " + "a" * 65536, good="echo a"),
    Rule("RF010", "nesting-too-deep",
         "The input nests deeper than 256 levels.",
         "Deeply nested input is refused before parsing by a cheap bracket pre-scan, and the "
         "walker stops at the same depth: no recursion limit or stack overflow can be "
         "triggered by a crafted command.",
         bad="echo " + "$(" * 300 + ")" * 300, good="echo $(echo $(id))"),
)
