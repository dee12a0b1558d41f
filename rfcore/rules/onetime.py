"""RF1xx: constructs that force one-time approval."""

from . import Rule


def _r(code, name, summary, explanation, bad, good, known_problems=""):
    return Rule(code, name, summary, explanation, bad, good, known_problems=known_problems)


RULES: tuple[Rule, ...] = (
    _r("RF101", "command-substitution", "Command substitution runs a hidden command.",
       "`$(...)` and backticks run a command and splice its output into this one, live "
       "anywhere including inside double quotes and inside `${x:-...}`. What finally runs "
       "depends on that output, so no standing approval can cover it. In single quotes or "
       "when escaped it is plain text.",
       bad='echo "$(id)"', good="echo '$(id)'"),
    _r("RF102", "process-substitution", "Process substitution runs a hidden command.",
       "`<(...)` and `>(...)` start commands whose output or input is wired to a file "
       "descriptor; they run beside the visible command.",
       bad="diff <(ls a) <(ls b)", good="diff a.txt b.txt"),
    _r("RF103", "heredoc", "A heredoc feeds an inline document to the command.",
       "A heredoc is a program or data blob inside the command string; approving the "
       "program once would approve any future document. It is one-time.",
       bad="cat <<'EOF'\nhello\nEOF", good="cat hello.txt"),
    _r("RF104", "here-string", "A here-string feeds a program to a shell or interpreter.",
       "`<<<` feeds inline text as standard input; for a shell or interpreter (or a "
       "program whose name is decided at run time, or `exec`) that text is the program. It "
       "is one-time. Into any other program the text is data, like `< file`: decoration "
       "RF308.",
       bad="bash <<< \"$script\"", good="grep x <<< \"$data\""),
    _r("RF105", "file-write-redirect", "A redirection writes a file.",
       "`>`, `>>`, `>|`, `&>`, `>& file` and `exec 3>f` create or overwrite files (for "
       "example `.bashrc` or a git hook) outside what the program itself was approved to "
       "do. Redirections to /dev/null, /dev/stdout and /dev/stderr are decoration instead.",
       bad="echo hi > notes.txt", good="echo hi > /dev/null"),
    _r("RF106", "network-redirect", "A redirection opens a network connection.",
       "bash treats /dev/tcp/HOST/PORT and /dev/udp/HOST/PORT as sockets: any redirection to "
       "or from them is a network connection without any network program.",
       bad="cat < /dev/tcp/example.com/80", good="cat < notes.txt"),
    _r("RF107", "shell-inline-code", "A shell runs inline code (-c).",
       "`bash -c STRING` (also `-lc`, `-ec`, `-xc`, `-o opt -c`) runs an arbitrary program "
       "given inline; approving `bash` would approve every string. A dynamic argument that "
       "could be `-c` counts too.",
       bad="bash -lc 'make test'", good="bash ./build.sh"),
    _r("RF108", "interpreter-inline-code", "An interpreter runs inline code.",
       "python `-c` (also `-cCODE` and after other flags), node `-e/-p/--eval`, perl "
       "`-e/-E` (also in clusters such as `-ne`, `-pi -e`, `-le`), ruby `-e`, php `-r`, lua "
       "`-e`, `deno eval`, Rscript `-e`, osascript `-e`, pwsh `-c`, ipython `-c` (and its "
       "`--InteractiveShellApp.exec_lines`-style options) and mongosh/mongo `--eval` (Node.js "
       "JavaScript run here: `require('child_process')`) run code given inline; so do `python "
       "-m timeit STMT`/`-s SETUP` and `python -m pdb -c CMD`. Versioned names are matched by "
       "pattern, not listed: `python3.11`, `python3.13t`, `perl5.36`, "
       "`perl5.36-x86_64-linux-gnu`, `ruby3.1`, `php8.2`, `lua5.4`, `guile-3.0`, `zsh5`.",
       bad="python3 -Ic 'print(1)'", good="python3 script.py"),
    _r("RF109", "git-exec-config", "git options that run programs.",
       "`git -c KEY=VAL`, `--config-env=KEY=ENVVAR` (and GIT_CONFIG_COUNT/KEY_n/VALUE_n, "
       "RF122) can set core.pager, core.sshCommand, aliases or hooks paths: they are judged "
       "by the key with the one table of `ringfence/staging/git/keys.py` (`user.*`, `color.*` run "
       "nothing; unknown keys count as running a program); `--exec-path` always counts. "
       "`git config` setting such a key (core.hooksPath, "
       "core.fsmonitor, filter drivers, credential helpers, `!` aliases...) makes git run it "
       "later; `rebase --exec`, `submodule foreach`, `bisect run` or `--upload-pack` run "
       "shell commands. Each turns git into a shell.",
       bad="git -c core.pager='sh -c id' log", good="git -c user.email=a@b log"),
    _r("RF110", "awk-exec", "An awk program runs commands.",
       "awk's `system()`, `print | \"cmd\"` and `\"cmd\" | getline` run shell commands. A "
       "program we cannot read (dynamic, unparseable) is treated the same, and so is a "
       "program in a file: `awk -f FILE`, gawk `-E FILE` and `-i FILE` (other than "
       "`inplace`), mawk `-W exec FILE` (any prefix: `-We FILE`).",
       bad="awk '{system(\"rm \" $1)}' list.txt", good="awk '{print $1}' list.txt"),
    _r("RF111", "sed-exec", "A sed script runs commands.",
       "GNU sed's `e` command and the `e` flag of `s///` run shell commands. A script we "
       "cannot parse is treated the same, and so is a script in a file (`sed -f FILE`, "
       "`--file=FILE`): it may hold `e` or `w` commands the classifier cannot see.",
       bad="sed 's/.*/id/e' f.txt", good="sed 's/a/b/g' f.txt"),
    _r("RF112", "env-split-string", "`env -S` splits a string into a command line.",
       "`env -S STRING` re-parses a string into program and arguments, so the program is "
       "not the word shown.",
       bad="env -S 'sh -c id'", good="env LANG=C sort f.txt"),
    _r("RF113", "option-runs-command", "An option makes the tool run another command.",
       "Options such as tar `--to-command`/`--checkpoint-action`/`-I`, rsync `-e`, rg "
       "`--pre`, `npx -c`/`npm exec -c`, vim `-c`/`+cmd`/`-s scriptin`/`-u vimrc`, less "
       "`+!cmd`/`-k lesskey`, `mapfile -C`/`readarray -C` callbacks, `compgen -C`/`-F`/"
       "`-W '$(...)'`, lftp `-c`/`-e`, emacs `--eval`/`-l`, nmap `--script`, tcpdump `-z`, "
       "gawk `-l`, and a launcher's own `fakeroot --faked`/`-l`, `faketime --date-prog`, "
       "`screen -c`/`-s`, `rlwrap -z`, `firejail --shell`, `dbus-launch --config-file` run "
       "arbitrary commands, so the tool's capability would cover anything.",
       bad="tar -xf a.tar --to-command='sh -c id'", good="tar -xf a.tar"),
    _r("RF114", "shell-launcher", "A launcher hands its arguments to a shell.",
       "`watch` without `-x`, `parallel`, `hyperfine`, `pee`, `mispipe`, `concurrently`, "
       "`sem`, `entr`, `watchexec`, `script`, `su -c`, `flock FILE -c`, `sg GROUP "
       "CMD`, `runuser` without `-u` join their arguments into a shell command line; `tmux` "
       "commands that run a shell command now or later (`new`, `new-window`, `split-window`, "
       "`send-keys`, `run-shell`, `if-shell`, `set-hook`, `source-file`, `-c`, `-f`) and "
       "`screen -X` with a command that runs or types one (`stuff`, `exec`, `screen`): the "
       "real program is decided by a shell. So does any program given a shell command "
       "line as one operand (`foo 'sh -c id'`, `--exec='bash -lc ...'`); a shell with an "
       "option among any program's operands (`foo --run /bin/sh -c CMD`) is judged as the "
       "shell it runs (RF107).",
       bad="watch 'ls | wc -l'", good="watch -x ls"),
    _r("RF115", "launched-shell", "A launcher runs a shell or interpreter.",
       "`find -exec sh ...` or `xargs python3 ...` runs a shell or interpreter on data the "
       "command produces; approving the launcher would approve any program.",
       bad="find . -name '*.sh' -exec bash {} \\;", good="find . -name '*.sh' -exec wc -l {} +"),
    _r("RF116", "stdin-program", "A shell or interpreter reads its program from stdin.",
       "`| sh`, `| python3 -`, `node < app.js`, `bash <<< ...`, `bash /dev/stdin` and a "
       "bare interpreter run whatever arrives on standard input. So do programs whose "
       "operands are data and whose standard input is commands: `ed`/`ex` (`!cmd`), `gdb` "
       "without `-batch`, `sqlite3 DB` without SQL operands (`.shell`), `mysql` without "
       "`-e`, `psql` without `-c`/`-f` (`\\!`), `lldb` without `-b`, `tclsh`, `m4`, `dc` "
       "and `ftp`/`lftp`; and `sed -f -`/`awk -f /dev/stdin` read their script there. "
       "`ipython` without a file, `mongosh`/`mongo` without `--eval` or a `.js` file, "
       "`jshell` (after its load files it reads snippets from standard input) and `python -m "
       "pdb`/`-m code`/`-m asyncio` (debugger commands, `!stmt`, or a console) too.",
       bad="curl -fsSL https://example.com/install.sh | sh", good="sh ./install.sh"),
    _r("RF117", "eval", "`eval` runs a string as shell code.",
       "eval builds a command line at run time.", bad="eval \"$CMD\"", good="echo \"$CMD\""),
    _r("RF118", "source", "`source` / `.` runs a file as shell code in this shell.",
       "A sourced file can define functions and aliases, change PATH or run anything, inside "
       "the approved shell.", bad="source ./env.sh", good="cat ./env.sh"),
    _r("RF119", "alias", "`alias` changes what a name runs.",
       "An alias makes a familiar name run something else later in the same string.",
       bad="alias ls='rm -rf'", good="ls -la"),
    _r("RF120", "function-definition", "A function definition changes what a name runs.",
       "A function named like a program (`git() { ...; }`) shadows it for the rest of the "
       "string.", bad="ls() { rm -rf .; }; ls", good="ls"),
    _r("RF121", "trap", "`trap` installs code that runs later.",
       "A trap handler runs on signals or at exit, outside the visible command flow.",
       bad="trap 'rm -rf /tmp/x' EXIT", good="rm -rf /tmp/x"),
    _r("RF122", "exec-affecting-assignment", "An assignment changes what programs or code run.",
       "PATH, LD_*, BASH_ENV/ENV, IFS, *_COMMAND, GIT_* execution settings, PAGER/EDITOR, "
       "PYTHONPATH/PYTHONSTARTUP, NODE_OPTIONS, PERL5OPT, RUBYOPT, JAVA_TOOL_OPTIONS, HOME, "
       "CC/RUSTC/GOFLAGS/CFLAGS/RUSTFLAGS, npm_config_*, options read from the environment "
       "(TAR_OPTIONS, RSYNC_RSH, LESS, MANOPT), *PAGER/*_EDITOR/*_BROWSER/*_RSH/*_ASKPASS, "
       "GCONV_PATH, and config files that name programs (AWS_CONFIG_FILE's "
       "credential_process, KUBECONFIG's exec plugins, DOCKER_CONFIG) decide which binary or "
       "code runs, whether written as a prefix, bare, with `export`/`declare`, through "
       "`env` or a launcher (`strace -E`, `systemd-run -E`), or by a builtin that assigns "
       "(`read PATH`, `printf -v PATH`, a `declare -n` nameref). One table, "
       "rfcore/execvars.py, shared with the profile overlay check (RF513).",
       bad="PATH=/tmp/evil:$PATH git status", good="LANG=C git status"),
    _r("RF123", "privilege-escalation", "The command runs with other privileges.",
       "sudo, doas, su, pkexec and run0 cross a privilege boundary, with a program or "
       "without one (`sudo -i`, `sudo -s`, bare `sudo`, `doas -s`, `su -`, bare `pkexec` or "
       "`run0`), and so do sudoedit, runuser, setpriv, nsenter, chroot, sg, newgrp, capsh, "
       "ksu, systemd-run, unshare, `strace -u`/`ltrace -u`, `chpst -u` and `machinectl "
       "shell`/`login`: one family mapped over a list, never a standing grant. The "
       "launchers among them are also peeled, so the command they run is judged too.",
       bad="sudo apt-get install -y jq", good="apt-get download jq"),
    _r("RF124", "background-job", "`&` runs a job in the background.",
       "A background job keeps running after the approved command returns, beyond what was "
       "seen and recorded.", bad="python3 -m http.server &", good="python3 -m http.server"),
    _r("RF125", "coproc", "`coproc` starts an asynchronous co-process.",
       "A co-process runs beside the shell, wired to file descriptors.",
       bad="coproc cat", good="cat notes.txt"),
    _r("RF126", "detached-process", "The command detaches from the session.",
       "`setsid`, `disown`, `screen -d -m` and `dbus-launch` (its bus daemon) let a "
       "process outlive the approved run.",
       bad="setsid ./server", good="./server"),
    _r("RF127", "dynamic-subcommand", "A multiplexer's subcommand is decided at run time.",
       "For git, docker, kubectl, npm and the like the subcommand is part of the key "
       "(`git push` is not `git status`). If it comes from an expansion, the key is unknown.",
       bad="git $ACTION origin main", good="git push origin main"),
    _r("RF128", "command-lookup-change", "The command changes how names are looked up.",
       "`enable -f` loads builtins from a shared object and `hash -p` binds a name to any "
       "file: later names run something else.",
       bad="hash -p /tmp/x ls", good="hash -r"),
    _r("RF129", "wrapper-writes-file", "A wrapper writes a file (an option's file, nohup.out).",
       "The program `time` (GNU time: `\\time`, `command time`, `env time`, `nice time`, "
       "`/usr/bin/time`, or `time` after an assignment, a redirection or a `|`) writes its "
       "report to the file named by `-o FILE` / `--output=FILE` (`-a` appends), like a "
       "redirection would. The wrapper is removed from the key, so the grant for the wrapped "
       "program must not cover that write. The bash keyword `time` (first word, `-p` only) "
       "writes no file; /dev/null, /dev/stdout and /dev/stderr are not writes. The "
       "launcher table's writers too: `strace -o`, `ltrace -o`, `valgrind --log-file=`/"
       "`--xml-file=`, `xvfb-run -e`/`-f`, `firejail --output=`, `fakeroot -s`, "
       "`screen -Logfile`. `nohup CMD` appends the output to `nohup.out` (in the current "
       "directory, else `$HOME`) when standard output is a terminal; the command string "
       "cannot tell, so it counts unless stdout is redirected (`> log`, `>/dev/null`) or "
       "piped. The capability's `effects` lists `write:FILE`.",
       bad="\\time -o time.log make", good="time -p make"),
    _r("RF130", "program-writes-file", "A program's own option, operand or script writes a file.",
       "Tools people approve as read-only filters can write files by their own means: "
       "`sort -o FILE`/`--output=FILE` (and prefixes such as `--out=FILE`), uniq's second "
       "operand (`uniq in out`), every operand of `tee`, `base64 -o FILE` (BSD), the `w FILE`/"
       "`W FILE` commands and the `w FILE` flag of `s` in a sed script, `print`/`printf` "
       "redirected with `>` or `>>` in an awk program, gawk's `-o`/`-p`/`-d` files, and "
       "`split`/`csplit`, which always write their pieces into new files. Such a write can "
       "create or overwrite any file (`.bashrc`, a git hook) exactly as a `>` redirection "
       "(RF105) can, so a standing grant for the program must not cover it. /dev/null, "
       "/dev/stdout and /dev/stderr are not writes; a target decided at run time is.",
       bad="make 2>&1 | tee build.log", good="make 2>&1 | tee /dev/stderr",
       known_problems="`sed -i` (in-place edits) is RF131. "
                      "A sed or awk program read from a file (`-f`) is not inspected. "
                      "`base64 -o` is a BSD option; GNU base64 rejects it, so there the "
                      "finding costs one approval for a command that would fail."),
    _r("RF140", "arithmetic-evaluation", "bash evaluates a non-literal value arithmetically.",
       "`(( ))`, `$(( ))`, `$[ ]`, `for (( ))`, `let`, variables declared `-i` (`declare`, "
       "`local`, `typeset`), indexed-array subscripts (`${a[i]}`, `a[i]=1`, `arr=([i]=x)`, a "
       "subscript in a name given to `read`, `printf -v`, `declare`, `test -v`, `[[ -v ]]`, "
       "`unset` (not `-f`/`-n`) or `wait -p`), substring "
       "offsets and lengths (`${s:i:n}`) and the numeric operators of `[[ ]]` (`-eq`, `-ne`, "
       "`-lt`, `-le`, `-gt`, `-ge`) evaluate their operands arithmetically. A name there is a "
       "variable whose value is evaluated again, and a value such as `a[$(id)]` runs `id` "
       "(checked against bash 5.2). The command can set that value itself "
       "(`x='a[$(id)]'; (( x ))`), so only literal integers (decimal, octal, `0x` hex, "
       "`BASE#N`), operators and the always-numeric `$#`, `$?`, `$$`, `$!`, `${#x}` are "
       "plain; anything else, whatever its quoting, is one-time. `[ ]` and `test` accept "
       "only integers for `-eq` and evaluate nothing.",
       bad="x='a[$(id)]'; (( x ))", good="(( 2 * 3 ))",
       known_problems="Associative-array subscripts are not evaluated arithmetically, but "
                      "whether an array is associative is not known from the command text, "
                      "so every non-literal subscript counts. Values are followed only inside "
                      "one expression: `i` in `for ((i=0; i<3; i++))` or `let a=1 b=a+1` is "
                      "plain when nothing else in the command assigns it, but `i=0; (( i++ ))` "
                      "is one-time."),
    _r("RF141", "indirect-expansion", "`${!v}` expands the variable named by a value.",
       "Indirection reads the name of the variable to expand from `v`'s value; when that name "
       "has a subscript (`p='a[$(id)]'; echo ${!p}`) bash evaluates it and runs the command "
       "substitution. The name listings `${!prefix*}`, `${!prefix@}` and `${!a[@]}` evaluate "
       "nothing and stay plain.",
       bad="p='a[$(id)]'; echo ${!p}", good="echo ${!BASH*}"),
    _r("RF142", "prompt-expansion", "`${v@P}` expands a value as a prompt string.",
       "The `@P` transformation expands the value as PS1 would, and prompt expansion runs "
       "command substitutions (`` `id` ``) inside the value, which the command can set "
       "itself: `echo \"${x=\\140id\\140}${x@P}\"` runs id.",
       bad="result=${input@P}", good="result=${input@Q}"),
    _r("RF143", "code-text-in-evaluated-value",
       "A command stored as text may run when a value is evaluated as code.",
       "The command evaluates a value as code (RF140, RF141, RF142) and also holds the text "
       "of a command that does not run where it stands: a quoted `$(...)` or backtick, or "
       "an escape that becomes one (`\\140`, `\\x60`, `\\044`). "
       "`x='a[$(git push)]'; (( x ))` runs git push, hidden from the profile's deny and "
       "ask rules, so the sandbox holds it for approval when the profile has such rules "
       "(like `bash -c \"$code\"`). On the host it is one-time anyway.",
       bad="x='a[$(git push)]'; (( x ))", good="(( $(wc -l < f) > 3 ))",
       known_problems="Text read at run time (`(( $(cat f) ))`, `read x < f; (( x ))`) is "
                      "not visible: inside the sandbox such a command is contained like "
                      "interpreter inline code (RF108), not held."),
    _r("RF144", "scheduled-commands", "The command installs commands that run later.",
       "`at` and `batch` queue the commands they read (from standard input or `-f FILE`) "
       "to run at a later time, and `crontab FILE` or `crontab -` replaces the user's "
       "crontab: what runs then is outside this session, its approval and its record. "
       "Listing forms (`at -l`, `crontab -l`) stay plain capabilities.",
       bad="echo 'make deploy' | at now + 1 hour", good="at -l"),
)
