"""Hypothesis strategies that write shell from grammar fragments.

Words are drawn from a quote-safe alphabet so every quoting variant of a word
means the same word to bash; the properties then check that the classifier
agrees. Every generated command is valid bash (bash -n accepts it), so a
verdict change is never explained by a parse error.
"""

from __future__ import annotations

from hypothesis import strategies as st

# Programs that become capabilities, including multiplexers whose key has a
# subcommand. None of them is a wrapper, a launcher, a shell or an interpreter
# taking inline code, so argument words alone never force one_time.
PROGRAMS = ("rm", "ls", "make", "longbridge", "pytest", "cp", "mv", "curl", "mkdir", "chmod",
            "rustc", "gcc", "du", "df", "ps", "git", "npm", "cargo", "docker", "kubectl")
SUBCOMMANDS = ("push", "status", "run", "build", "test", "install", "delete", "log", "apply")
# Words bash and the classifier read the same whatever the quoting.
WORD_CHARS = "abcdefghijklmnopqrstuvwxyz0123456789._/"

word_text = st.text(WORD_CHARS, min_size=1, max_size=8)
option = st.builds(lambda d, w: d + w, st.sampled_from(("-", "--")),
                   st.text("abcdefghijklmnopqrstuvwxyz", min_size=1, max_size=6))
arg_text = st.one_of(word_text, option)
program = st.sampled_from(PROGRAMS)


def requote(word: str, style: int) -> str:
    """Spell `word` another way that bash reads as the same word."""
    styles = (
        lambda w: w,
        lambda w: f"'{w}'",
        lambda w: f'"{w}"',
        lambda w: f'"{w[:1]}"{w[1:]}',            # "r"m
        lambda w: f"{w[:1]}\\{w[1:]}" if len(w) > 1 else f"\\{w}",   # r\m
        lambda w: f"{w[:1]}''{w[1:]}",            # r''m
        lambda w: f"$'{w}'",                      # $'rm'
        lambda w: f"{w[:1]}\"\"{w[1:]}",          # r""m
    )
    return styles[style % len(styles)](word)


quote_style = st.integers(min_value=0, max_value=7)


@st.composite
def simple_words(draw) -> list[str]:
    """Unquoted words of one simple command: program [subcommand] args."""
    words = [draw(program)]
    if words[0] in ("git", "npm", "cargo", "docker", "kubectl"):
        # Global options come before the subcommand and must be skipped when
        # the key is built (`git -C dir push` is `git push`).
        if words[0] == "git" and draw(st.booleans()):
            words += draw(st.sampled_from((["-C", "src"], ["--no-pager"], ["-P"],
                                           ["--git-dir", "x/.git"])))
        words.append(draw(st.sampled_from(SUBCOMMANDS)))
    words += draw(st.lists(arg_text, max_size=4))
    return words


def render(words: list[str], styles: list[int] | None = None) -> str:
    styles = styles or [0] * len(words)
    return " ".join(requote(w, s) for w, s in zip(words, styles))


simple_command = simple_words().map(render)

# Harmless additions that must never change the capability keys.
DECORATIONS = ("2>&1", ">/dev/null", "2>/dev/null", "| head -n 5", "| tail -n 3", "| wc -l",
               "| grep -v x", "| sort | uniq -c", "> /dev/null 2>&1", "2>&1 | head -n 5")
decoration = st.sampled_from(DECORATIONS)

# Transparent wrappers: the capability is the wrapped program's.
WRAPPERS = ("time", "timeout 5", "nice", "nice -n 5", "nohup", "env A=1", "command",
            "stdbuf -oL", "timeout -s KILL 10")
wrapper = st.sampled_from(WRAPPERS)


@st.composite
def compound(draw, depth: int = 0) -> str:
    """A command line of lists, pipelines, control flow and redirects."""
    if depth >= 2:
        return draw(simple_command)
    inner = compound(depth=depth + 1)
    kind = draw(st.integers(min_value=0, max_value=8))
    a, b = draw(inner), draw(inner)
    if kind == 0:
        return f"{a} && {b}"
    if kind == 1:
        return f"{a} || {b}"
    if kind == 2:
        return f"{a}; {b}"
    if kind == 3:
        return f"{draw(simple_command)} | {draw(simple_command)}"
    if kind == 4:
        return f"if {a}; then {b}; fi"
    if kind == 5:
        return f"for x in a b; do {a}; done"
    if kind == 6:
        return f"( {a} )"
    if kind == 7:
        return f"{{ {a}; }}"
    return f"{draw(simple_command)} < input.txt"


# Constructs that no standing approval may cover (SPEC §2 forced one-time).
LIVE = ("$(date)", "`date`", "<(ls)", "\"$(id -u)\"", "${x:-$(pwd)}", "\"`whoami`\"")
live_word = st.sampled_from(LIVE)
INLINE = ("bash -c 'ls'", "sh -c ls", "python3 -c 'print(1)'", "node -e 'x'", "bash -lc ls",
          "perl -e 'print 1'")
inline_code = st.sampled_from(INLINE)
heredoc = st.sampled_from(("cat <<EOF\nhello\nEOF", "cat <<'EOF'\nhello\nEOF",
                           "cat <<-EOF\n\thello\n\tEOF", "bash <<< hello"))


@st.composite
def with_live_construct(draw) -> str:
    """A command with one live substitution, heredoc or inline-code stage."""
    kind = draw(st.integers(min_value=0, max_value=2))
    if kind == 0:
        words = draw(simple_words())
        at = draw(st.integers(min_value=1, max_value=len(words)))
        body = render(words[:at]) + " " + draw(live_word) + " " + render(words[at:])
        return body.strip()
    if kind == 1:
        construct = draw(inline_code)
    else:
        construct = draw(heredoc)
    other = draw(simple_command)
    joiner = draw(st.sampled_from(("; ", " && ", " || ")))
    # A heredoc body must end the line, so the other command comes first.
    if kind == 2 or draw(st.booleans()):
        return other + joiner + construct
    return construct + joiner + other


# Anything at all: the classifier must never crash on any string.
SHELL_ALPHABET = st.sampled_from(list("abc -|&;<>()$`'\"\\{}[]*?~=#!\n\t0123456789/.:%@^,") +
                                 ["$(", "<<", "<<<", "&&", "||", "2>&1", "\r", "\x0b", "\x00",
                                  "é", "\udcff"])
any_text = st.one_of(st.text(max_size=80),
                     st.lists(SHELL_ALPHABET, max_size=40).map("".join))

# The same constructs made inert: single-quoted or escaped (SPEC §2: "not
# inside single quotes or when escaped").
# (An unquoted `\$(date)` is not one of them: the `(` is then a bash syntax error.)
DEAD = ("'$(date)'", '"\\$(date)"', "\\$\\(date\\)", "'`date`'", "\\`date\\`", '"\\`date\\`"',
        "'<(ls)'", "'${x:-$(pwd)}'", "\\${x:-y}")
dead_word = st.sampled_from(DEAD)


# --- words whose quote removal is tricky (checked against bash itself) -------
# Each piece is valid on its own and concatenates with any other into one word.
# Unquoted text avoids what bash would expand or treat specially in the
# oracle's empty environment (globs, braces, `$`, `~`, a leading `#`); those
# characters appear escaped or quoted instead.
_PLAIN = "abcXYZ019._-/:,+@%=^!"
_ESCAPABLE = ";()<>|& \t'\"\\$`*?[]{}#~!^=%"
_DQ_SAFE = "abc XYZ019._-/:;()<>|&'*?[]{}#~!^%=\t"
_SQ_SAFE = _DQ_SAFE + '"\\$`'

piece = st.one_of(
    st.text(_PLAIN, min_size=1, max_size=4),
    st.sampled_from(_ESCAPABLE).map(lambda c: "\\" + c),                    # \;  \(  \   \\
    st.text(_SQ_SAFE, max_size=5).map(lambda t: f"'{t}'"),                  # 'a$b'
    st.lists(st.one_of(st.text(_DQ_SAFE, min_size=1, max_size=3),
                       st.sampled_from(('\\"', "\\\\", "\\$", "\\`", "\\a", "\\;"))),
             max_size=3).map(lambda ps: '"' + "".join(ps) + '"'),            # "a\"b\a"
    st.lists(st.sampled_from(("a", " ", "\\n", "\\t", "\\\\", "\\'", '\\"', "\\x41",
                              "\\101", "\\u00e9", "\\e", "\\?", ";", "$", "`")),
             max_size=4).map(lambda ps: "$'" + "".join(ps) + "'"),           # $'a\n\x41'
)
tricky_word = st.lists(piece, min_size=1, max_size=4).map("".join).filter(
    lambda w: not w.startswith(("#", "~", "=")))
tricky_command = st.builds(lambda prog, words: " ".join([prog, *words]),
                           st.sampled_from(("ls", "rm", "longbridge", "grep", "mv", "make")),
                           st.lists(tricky_word, min_size=1, max_size=4))

# Output redirection targets: SPEC §2 exempts only these from "writes a file".
EXEMPT_TARGETS = ("/dev/null", "/dev/stdout", "/dev/stderr")
WRITE_TARGETS = ("out.txt", "/dev/nul", "/dev/null2", "/dev/nullx", "/dev/stdout/x", "./null",
                 "/tmp/dev/null", "/dev/tcp/127.0.0.1/80", "dev/null", "/dev/sda")
OUTPUT_OPS = (">", ">>", "2>", "&>", ">|", "1>", "2>>", "&>>")

# Word lists that SPEC §2 forces to one_time; quoting any word must not evade it.
ONE_TIME_WORDS = (
    ["sudo", "rm", "x"], ["doas", "ls"], ["pkexec", "ls"], ["su", "-c", "ls"], ["eval", "ls"],
    ["source", "x.sh"], [".", "x.sh"], ["bash", "-c", "ls"], ["sh", "-c", "ls"],
    ["bash", "-lc", "ls"], ["python3", "-c", "print(1)"], ["node", "-e", "1"],
    ["perl", "-e", "1"], ["ruby", "-e", "1"], ["git", "-c", "core.pager=x", "log"],
    ["env", "PATH=/tmp", "ls"], ["env", "-S", "sh -c ls"], ["xargs", "sh", "-c", "ls"],
    ["find", ".", "-exec", "sh", "-c", "ls", ";"], ["timeout", "5", "bash", "-c", "ls"],
    ["nohup", "python3", "-c", "1"], ["setsid", "ls"], ["rsync", "-e", "ssh", "a", "b"],
    ["tar", "--to-command=sh", "-xf", "a.tar"], ["watch", "ls"], ["alias", "ls=rm"],
    ["trap", "ls", "EXIT"], ["awk", "BEGIN{system(1)}"], ["sed", "e", "f"],
)
one_time_words = st.sampled_from(ONE_TIME_WORDS)


# --- arithmetic contexts (issue 11 §2) --------------------------------------------
# Places where bash evaluates text arithmetically; `{}` is the operand. Each is valid
# bash for both a name and a literal integer operand.
ARITH_CONTEXTS = (
    "(( {} ))", "(( {} + 1 ))", "echo $(( {} * 2 ))", "echo $[{}]", "x=$(( 1 - {} ))",
    "let {}", "declare -i n; n={}", "local -i n={}", "echo ${{arr[{}]}}", "a[{}]=1",
    "echo ${{s:{}}}", "echo ${{s:0:{}}}", "[[ {} -eq 1 ]]", "[[ 1 -lt {} ]]",
    "for ((i=0; i<{}; i++)); do :; done", "echo \"$(( {} ))\"", "[[ -n x && {} -ge 2 ]]",
)
arith_name = st.text("abcdefghijklmnopqrstuvwxyz_", min_size=1, max_size=6)


def _spell_operand(name: str, style: int) -> str:
    forms = (name, f"${name}", f"${{{name}}}", f'"${name}"', f'"{name}"', f"'{name}'",
             f"{name[:1]}\\{name[1:]}" if len(name) > 1 else f"\\{name}", "$1", f"${name}0")
    return forms[style % len(forms)]


@st.composite
def arith_with_variable(draw) -> str:
    """An arithmetic context whose operand is a variable, spelled any way."""
    ctx = draw(st.sampled_from(ARITH_CONTEXTS))
    operand = _spell_operand(draw(arith_name), draw(st.integers(0, 8)))
    return ctx.format(operand)


@st.composite
def arith_with_literal(draw) -> str:
    """The same contexts with a literal integer operand (decimal, octal, hex, BASE#N)."""
    ctx = draw(st.sampled_from(ARITH_CONTEXTS))
    n = draw(st.integers(0, 10 ** 6))
    lit = draw(st.sampled_from((str(n), f"0{n:o}", f"0x{n:X}", f"2#{n:b}", f"16#{n:x}")))
    return ctx.format(lit)
