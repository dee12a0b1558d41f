"""Options and operands whose value is code for the program itself: RF133 (runs
a program) and RF131 (writes a file) rows of the option-effects table
(classifier/effects_data.py merges CODE_TOOLS into TOOLS, style ``code``).

`sqlite3 db '.shell id'`, `mysql -e 'system id'`, `psql -c '\\! id'`, `gdb -batch
-ex 'shell id'`, `make --eval '$(shell id)'`: the key names a database client,
a debugger or a build tool; these words make it run a shell command or write
a file. Each value is judged by the program's own command language
(``judge``); standard input as the program is RF116 (data_interp.py).

Sources: sqlite3 CLI ".help" (3.40: .shell, .system, .output, .once, .save,
.backup, .excel, .load, .read, .open, .log; the CLI's writefile(), edit(),
load_extension() SQL functions; ATTACH and VACUUM INTO create files); mysql(1)
"mysql Client Commands" (system, \\!, source, \\., pager, tee; SELECT ... INTO
OUTFILE/DUMPFILE); psql(1) meta-commands (\\!, \\o, \\g, \\w, \\copy ... program,
\\i, \\e, \\setenv, \\pset pager; COPY ... PROGRAM); gdb(1) -ex/-iex, -x/-ix
and the commands shell, !, pipe, |, python, guile, source, run, start, call;
GNU make(1) --eval=STRING (-E, make 4.4).

Row target ``code:LANG`` (an option's value is code) or ``code-operands:LANG:N``
(operands from the N-th, counted from 0, are code).
"""

from __future__ import annotations

import re

from .effects_rows import Row, Tool


def _r(options: str, target: str, why: str) -> Row:
    return Row(frozenset(options.split()), "run", target, why)


def _s(text: str) -> frozenset[str]:
    return frozenset(text.split())


# sqlite3 takes a dot-command's name or a prefix of it (`.sh` is `.shell`); an
# argument starting with `|` (`.output '|cmd'`, `.import '|cmd' t`, `.read '|cmd'`)
# is a command it runs
_SQLITE_DOT_RUN = ("shell", "system", "load", "read", "excel")
_SQLITE_DOT_WRITE = ("output", "once", "save", "backup", "open", "log", "trace", "clone",
                     "restore", "archive", "ar", "import", "cd")
_SQLITE_SQL = [(re.compile(r"(?i)\bload_extension\s*\(|\bedit\s*\("), "run",
                "calls a function that loads code or runs an editor"),
               (re.compile(r"(?i)\bwritefile\s*\(|\battach\b|\bvacuum\b[^;]*\binto\b"), "write",
                "writes a file (writefile(), ATTACH, VACUUM INTO)")]
_MYSQL = [(re.compile(r"(?i)(^|[;\n])\s*(system|source|pager)\b|\\[!.P]"), "run",
           "runs a shell command or a file of commands (system, \\!, source, pager)"),
          (re.compile(r"(?i)\binto\s+(out|dump)file\b|(^|[;\n])\s*tee\b|\\T"), "write",
           "writes a file (INTO OUTFILE, tee)")]
_PSQL = [(re.compile(r"\\!|\\(o|out|g|gx|w|write)\s*\||\\copy\b[^\n]*\bprogram\b|"
                     r"\\(i|ir|include|include_relative|e|edit|ef|ev|setenv)\b|"
                     r"\\pset\s+pager|(?i:\bprogram\s+')"), "run",
          "runs a shell command or a file of commands (\\!, \\o |, \\copy program, \\i)"),
         (re.compile(r"\\(o|out|g|gx|w|write)\s+[^|\s]|\\copy\b[^\n]*\bto\b"), "write",
          "writes a file (\\o FILE, \\g FILE, \\w, \\copy ... to)")]
# gdb commands that only read or print (anything else may run a program: shell,
# !, pipe, python, source, run, call, a user-defined command ...)
_GDB_READS = re.compile(r"(?i)\s*(bt|backtrace|where|info|i|frame|f|list|l|disassemble|"
                        r"x(/\S*)?|p(/\S*)?|print(/\S*)?|output|ptype|whatis|up|down|quit|q|"
                        r"thread\s+apply\s+all\s+(bt|backtrace)|"
                        r"set\s+(pagination|confirm|width|height|print)|show)"
                        r"(\s+[^$()`;|!]*)?\s*")


_MAKE_RUN_VARS = _s("SHELL .SHELLFLAGS MAKE MAKEFLAGS MAKESHELL CC CXX CPP LD AR AS "
                    "CFLAGS CXXFLAGS CPPFLAGS LDFLAGS LDLIBS RUSTC GO PYTHON PERL")
_SHELL_TEXT = re.compile(r"[;&|`<>\n]|\$\(")


def judge(lang: str, text: str) -> list[tuple[str, str]]:
    """(kind, why) for each thing a value of this language makes the program do."""
    if lang == "make":
        return [("run", "evaluates the text as a makefile (`$(shell ...)`, recipes)")]
    if lang == "file":
        return [("run", "runs the commands in the file")]
    if lang == "stdin-makefile":
        return [("run", "reads the makefile from standard input")] \
            if text in ("-", "/dev/stdin", "/dev/fd/0", "/proc/self/fd/0") else []
    if lang == "cmake-e":
        return []          # judged as a whole by cmake_mode (the operands after -E)
    if lang == "path":
        return [("write", "writes the file")]
    if lang == "makevar":
        # `make CC='sh -c id'`, `make SHELL=./x`: a variable a recipe runs
        name, eq, value = text.partition("=")
        if eq and (name.strip(":+?! ") in _MAKE_RUN_VARS or _SHELL_TEXT.search(value)):
            return [("run", "sets a make variable that recipes run")]
        return []
    if lang == "gdb":
        return [] if _GDB_READS.fullmatch(text) else \
            [("run", "runs a debugger command that may run a program (shell, !, python, "
                     "run, call, source)")]
    if lang == "sqlite":
        t = text.lstrip()
        if t.startswith("."):
            words = t[1:].split()
            cmd = words[0].lower() if words else ""
            if cmd and (any(c.startswith(cmd) or cmd.startswith(c) for c in _SQLITE_DOT_RUN)
                        or any(a.lstrip("'\"").startswith("|") for a in words[1:])):
                return [("run", f"runs a shell command or loads code (.{cmd})")]
            if cmd and any(c.startswith(cmd) or cmd.startswith(c) for c in _SQLITE_DOT_WRITE):
                return [("write", f"writes or changes files (.{cmd})")]
            return []
        table = _SQLITE_SQL
    else:
        table = _MYSQL if lang == "mysql" else _PSQL
    return [(kind, why) for rx, kind, why in table if rx.search(text)]


CODE_TOOLS: dict[str, Tool] = {
    "sqlite3": Tool("sqlite3 .help; -cmd COMMAND, -init FILE", (
        _r("-cmd --cmd", "code:sqlite", "runs the command"),
        _r("-init --init", "code:file", "runs the commands in the file"),
        _r("-A -archive --archive", "code:path", "works on an SQL archive (extracts or "
           "creates files)"),
        _r("", "code-operands:sqlite:1", "runs the SQL or dot-command"),
    ), _s("-cmd -init -separator -newline -nullvalue -vfs -mmap --cmd --init "
          "--separator --newline --nullvalue --vfs"), style="code"),
    "mysql": Tool("mysql(1) -e, --execute; --pager; --defaults-file; --plugin-dir", (
        _r("-e --execute", "code:mysql", "runs the statements"),
        _r("--pager --defaults-file --defaults-extra-file --plugin-dir --default-auth",
           "code:file", "runs a pager, or reads a file or plugin that can run programs"),
        _r("--tee", "code:path", "appends the session to the file"),
    ), _s("-u --user -h --host -P --port -p -S --socket -D --database -e --execute --pager "
          "--defaults-file --defaults-extra-file --init-command --plugin-dir "
          "--default-auth --protocol --tee"),
        _s("--execute --pager --defaults-file --defaults-extra-file --plugin-dir --tee"),
        style="code"),
    "psql": Tool("psql(1) -c, --command; -o, --output; -L, --log-file", (
        _r("-c --command", "code:psql", "runs the command"),
        _r("-o --output -L --log-file", "code:path", "writes query results or a log"),
    ), _s("-c --command -d --dbname -f --file -h --host -p --port -U --username -v --set "
          "--variable -P --pset -o --output -L --log-file -F -R -T -W"),
        _s("--command --output --log-file --file"), style="code"),
    "gdb": Tool("gdb(1) -ex, --eval-command; -iex; -x, --command; -ix", (
        _r("-ex -iex --eval-command --init-eval-command", "code:gdb", "runs the command"),
        _r("-x -ix --command --init-command", "code:file", "runs the commands in the file"),
    ), _s("-ex -iex -x -ix --eval-command --init-eval-command --command --init-command "
          "-p --pid -c --core -d --directory -cd --cd -D --data-directory"), style="code"),
    # lldb(1): -o/--one-line, -O, -k/--one-line-on-crash run commands (`platform
    # shell`, `script` run programs); -s/-S/-K/--source run files of commands
    "lldb": Tool("lldb(1) -o, --one-line; -O; -k; -s, --source; -S; -K", (
        _r("-o --one-line -O --one-line-before-file -k --one-line-on-crash", "code:gdb",
           "runs the command"),
        _r("-s --source -S --source-before-file -K --source-on-crash", "code:file",
           "runs the commands in the file"),
    ), _s("-o --one-line -O --one-line-before-file -k --one-line-on-crash -s --source -S "
          "--source-before-file -K --source-on-crash -p --attach-pid -n --attach-name -c "
          "--core -a --arch -f --file"), style="code"),
    # cmake(1) -E: `rm`/`remove`/`remove_directory` delete, `env`/`chdir`/`time`
    # run a command, `copy*`/`rename`/`touch`/`make_directory`/`create_symlink`/
    # `tar` write; -P runs a script
    "cmake": Tool("cmake(1) -E <command> [<options>]; -P <file>", (
        _r("", "code-operands:cmake-e:0", "runs the tool mode command"),
    ), _s("-E -P -S -B -C -D -G -T -A -U --build --install --preset"), style="code"),
    # openssl(1): -engine/-provider/-provider-path load a library, and so can a
    # -config file (like OPENSSL_CONF); `openssl engine ID` loads an engine
    # (effects_tools.openssl_engine); -out/-keyout write the file
    "openssl": Tool("openssl(1) -engine id, -provider name, -provider-path path, -config "
                    "file; -out file; openssl-engine(1)", (
        _r("-engine -provider-path", "code:library", "loads a library (code)"),
        _r("-provider", "code:provider", "loads a provider (a library) other than the "
           "built-in default, base, legacy, fips and null"),
        _r("-config", "code:openssl-config", "reads a config file that can load engines "
           "and providers"),
        _r("-out -keyout", "code:path", "writes the file"),
    ), _s("-engine -provider -provider-path -out -keyout -in -inkey -key -config "
          "-passin -passout -subj -days -newkey -CA -CAkey -signkey -name -digest -cipher"),
        style="code"),
    "make": Tool("make(1) --eval=STRING, -E STRING", (
        _r("--eval -E", "code:make", "evaluates the text"),
        _r("-f --file --makefile", "code:stdin-makefile", "reads the makefile"),
        _r("", "code-operands:makevar:0", "sets a variable"),
    ), _s("-C --directory -f --file --makefile -I --include-dir -j --jobs -l --load-average "
          "-o --old-file --assume-old -W --what-if --new-file --assume-new -O --output-sync "
          "--eval -E --jobserver-style --shuffle"),
        _s("--eval --directory --file --makefile --include-dir --jobs --what-if "
           "--environment-overrides --always-make"), style="code"),
}


_GDB_LONG = {"eval-command": "-ex", "init-eval-command": "-iex", "command": "-x",
             "init-command": "-ix", "ex": "-ex", "iex": "-iex", "x": "-x", "ix": "-ix"}


def _canonical(name: str, tool: Tool) -> str:
    """An option as the program reads it: a unique prefix of a long option
    (getopt_long: `make --ev`), and gdb's getopt_long_only (`--ex`, `-eval-c`)."""
    if tool.source.startswith("gdb"):
        bare = name.lstrip("-")
        if bare in _GDB_LONG:
            return _GDB_LONG[bare]
        hits = {v for k, v in _GDB_LONG.items() if len(bare) >= 2 and k.startswith(bare)}
        return hits.pop() if len(hits) == 1 else name
    if name.startswith("--") and name not in tool.value:
        longs = tool.longs | {o for o in tool.value if o.startswith("--")}
        hits = [o for o in longs if o.startswith(name)]
        if len(hits) == 1:
            return hits[0]
    return name


def scan(args, tool: Tool):
    """(option, value word) pairs and operands, as these programs read them: an
    option of ``tool.value`` takes the next word, `--opt=value`, or an attached
    value after a two-letter option (`-e'system id'`); gdb's and sqlite3's
    single-dash long options (`-ex`, `-cmd`) are whole words."""
    opts, operands = [], []
    i, n = 0, len(args)
    while i < n:
        w = args[i]
        v = w.value
        if not w.static or not v.startswith("-") or v == "-":
            operands.append(w)
            i += 1
            continue
        if v == "--":
            operands.extend(args[i + 1:])
            break
        name, eq, rest = v.partition("=")
        name = _canonical(name, tool)
        if name in tool.value and not eq:
            opts.append((name, args[i + 1] if i + 1 < n else None))
            i += 2
            continue
        if eq and name in tool.value:
            opts.append((name, w._replace(value=rest, raw=rest)))
        elif not v.startswith("--") and v[:2] in tool.value and len(v) > 2:
            opts.append((v[:2], w._replace(value=v[2:], raw=v[2:])))
        else:
            opts.append((name, None))
        i += 1
    return opts, operands


_CMAKE_DELETE = _s("rm remove remove_directory")
_CMAKE_RUN = _s("env chdir time")
_CMAKE_WRITE = _s("copy copy_directory copy_directory_if_different copy_if_different rename "
                  "touch touch_nocreate make_directory create_symlink create_hardlink tar "
                  "cat md5sum")


def cmake_mode(args) -> tuple[str, str] | None:
    """`cmake -E rm -rf DIR`: (kind, why) of the tool-mode command after -E; a script
    (`-P F`, `-C F` the initial cache) runs CMake code."""
    for i, w in enumerate(args):
        if w.static and w.value == "-E" and i + 1 < len(args):
            cmd = args[i + 1]
            if not cmd.static:
                return "run", "runs a tool-mode command decided at run time"
            if cmd.value in _CMAKE_DELETE:
                return "delete", f"deletes files (-E {cmd.value})"
            if cmd.value in _CMAKE_RUN:
                return "run", f"runs a command (-E {cmd.value})"
            if cmd.value in _CMAKE_WRITE - _s("cat md5sum"):
                return "write", f"writes files (-E {cmd.value})"
            return None
        if w.static and w.value == "-P":
            return "run", "runs a CMake script (execute_process runs programs)"
        if w.static and w.value.startswith("-C") and (len(w.value) > 2 or i + 1 < len(args)):
            return "run", "loads an initial-cache script (-C: CMake code, execute_process " \
                          "runs programs)"
        if w.static and w.value == "--":
            break
    return None
