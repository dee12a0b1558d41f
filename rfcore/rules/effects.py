"""RF131-RF135: what an option makes a program do beyond its key, and
ringfence's own commands that only a person may run."""

from . import Rule

RULES: tuple[Rule, ...] = (
    Rule("RF131", "option-writes-file", "An option, operand or variable makes a program write "
         "a file its key does not name.",
         "A grant covers only what its key names. `git log --output=FILE`, `find -fprint "
         "FILE`, `sed -i`, `less -o FILE`, `shuf -o`, `iconv -o`, `tree -o`, `xxd IN OUT`, "
         "`curl -o FILE`/`-O`/`-D`/`-c`/`--trace`, `wget -O`/`-P`/`-N`, `dd of=FILE`, "
         "`yq -i`, `gawk -i inplace`, sqlite3 `.output`/`.once`/`.save`/`writefile()`/`ATTACH`, "
         "psql `\\o FILE`/`-o`/`-L`, mysql `INTO OUTFILE`/`--tee`, `openssl -out`/`-keyout`, "
         "`pytest --junitxml`/`--log-file`/`--debug`/`--rootdir` outside the current "
         "directory/`-o cache_dir=`, `ctest -O`/`--output-junit`, `python -m cProfile -o`, "
         "`python -m trace -c`/`-C`/`-f`, `gpg -o`/`--log-file`, `redis-cli --rdb`, `npm config "
         "set`/`delete`/`edit` (`npm set`, `npm c set`), `npm pkg set`, `pnpm config set`, "
         "`yarn config set`/`unset` (the configuration every later npm, pnpm or yarn obeys: "
         "registries, script-shell, yarnPath), `GIT_TRACE=/path` and git's other trace "
         "variables (GIT_TRACE_PACKET, GIT_TRACE2_EVENT, ...: an absolute path, `~`, "
         "`af_unix:` or a value decided at run time; `1`, `2`, `true` write to stderr), "
         "`git remote set-url` and the other rows of "
         "classifier/effects_data.py (and its family effects_git.py, effects_code.py, "
         "effects_tools.py) turn a "
         "program people approve as a reader into one that creates or overwrites any file "
         "(`~/.bashrc`, a git hook), exactly as `> FILE` (RF105) would. The capability's "
         "`effects` lists `write:FILE`. Inside the sandbox the write is contained (the "
         "workspace is the only writable place), so the sandbox context does not ask; on the "
         "host it is one-time. /dev/null, /dev/stdout, /dev/stderr and `-` are not writes.",
         bad="git log -1 --format=%B --output=notes.txt", good="git log -1 --format=%B",
         known_problems="Programs whose key names the write (`cp`, `tar`, `unzip`, `wget "
                        "URL` saving into the current directory) stay plain capabilities. "
                        "`curl -K`/`wget --config` files are not read: they count as writes."),
    Rule("RF132", "option-deletes-files", "An option makes a program delete files.",
         "`find -delete`, `rsync --delete*`/`--remove-source-files`, `tar --remove-files` and "
         "`zip -m` delete files although their keys name a search, a copy or an archive. "
         "git's destructive forms are rows too (classifier/effects_git.py): `git clean` "
         "(every use but `-n`/`--dry-run`), `git stash clear`/`drop`, `git branch -d`/`-D`/"
         "`-M`/`-C`/`-f`, `git tag -d`/`-f`, `git checkout` of paths (`--`, `.`, a glob, a "
         "file name, tree-ish then paths) or with `-f`/`-m`/`-B`, `git switch "
         "--discard-changes`/`-f`/`-C`, `git restore`, `git reset --hard`/`--merge`/`--keep`, "
         "`git worktree remove`/`prune`, `git gc --prune`, `git prune`, `git reflog expire`/"
         "`delete`, `git update-ref`, `git symbolic-ref -d`, `git remote remove`, `git "
         "submodule deinit`, `git checkout-index -f`, `git read-tree -u`; and `cmake -E "
         "rm`/`remove`/`remove_directory`, and `pytest --basetemp=DIR` (pytest removes DIR "
         "if it exists). So a grant from "
         "`git clean -n`, `git stash list`, `git branch` or `git checkout main` never covers "
         "them. "
         "A grant of `find` for listing files must not cover `find ~ -delete`. The "
         "capability's `effects` lists `delete:PATH` (find's starting points). Contained by "
         "the sandbox like RF131.",
         bad="find build -name '*.o' -delete", good="find build -name '*.o'",
         known_problems="`rm` and `rmdir` name the deletion in their keys and stay plain "
                        "capabilities. `git checkout NAME` with a single operand that looks "
                        "like a branch (no extension, no `/.`) is read as switching branches, "
                        "although git restores a file of that name when no such branch "
                        "exists. `git stash pop` stays plain: it drops an entry only after "
                        "applying it cleanly."),
    Rule("RF133", "option-runs-program", "An option or operand makes a program run another "
         "program.",
         "`git grep -O[CMD]`/`--open-files-in-pager`, `nc -e`/`-c`, ncat `--exec`/"
         "`--sh-exec`/`--lua-exec`, socat `EXEC:`/`SYSTEM:` addresses, `rg --hostname-bin`, "
         "`ssh -F`/`-I`, `scp`/`sftp -F`/`-D`, `sftp -b`, `wget --use-askpass`, `tar "
         "--rsh-command`, `man -C`, `git send-email --to-cmd`, and code handed to the "
         "program's own language (classifier/effects_code.py: sqlite3 `.shell`/`.system`/"
         "`.load`/`.read`/`-cmd`/`-init`/`load_extension()`, mysql `-e 'system ...'`/`\\!`/"
         "`source`/`--pager`, psql `-c '\\! ...'`/`\\o |cmd`/`\\copy ... program`/`\\i`, "
         "gdb `-ex`/`-iex` (any spelling getopt_long_only takes) other than read-only "
         "commands such as `bt`, gdb `-x`/`-ix`, lldb `-o`/`-s`, make `--eval`/`-E`/`-f -` "
         "and variables that recipes run (`make CC=...`, `SHELL=`, values with shell "
         "text), `cmake -E env`/`chdir`/`time`, `-P` and `-C` (an initial-cache script), "
         "`ctest -S`/`-SP`/`--test-command`, `openssl -engine`/`-provider` (other than the "
         "built-in default, base, legacy, fips, null)/`-provider-path`/`-config` and `openssl "
         "engine ID`/`-pre`, pytest `-p PLUGIN` (not `-p no:NAME`)/`-c FILE`/`-o addopts=`/"
         "an ini key of a plugin/`--pdb`/`--pdbcls`, `cargo --config KEY=VALUE|FILE` (runner, "
         "linker, rustc-wrapper, env, sources; display, profile and job keys excepted), gpg "
         "`--agent-program`/`--dirmngr-program`/`--photo-viewer`/`--exec-path`/`--options`/"
         "`--homedir`, gpg-agent `--pinentry-program`/`--scdaemon-program`/`--daemon CMD`) run "
         "a program the key does "
         "not name (RF113 covers the older rows: tar `--to-command`, rsync `-e`, ssh `-o "
         "ProxyCommand`, ...). Like RF113, the sandbox does not hide what it runs from the "
         "profile's deny and ask rules, so under a profile with such rules it is held.",
         bad="git grep -O'id > M; true' hi", good="git grep -n hi"),
    Rule("RF134", "ringfence-control", "ringfence's own command approves, grants or leaves "
         "the sandbox.",
         "Approving is a person's act. `ringfence approve`, `deny`, `grants revoke`, `hook`, "
         "`init`, `ledger prune`, `run --host`, `run --sandbox off`, `run -p` with a profile "
         "that is not a built-in sandbox, `run -w DIR`, any other subcommand that is not "
         "read-only, and any `RINGFENCE_*` setting are never grantable, however ringfence is "
         "reached (`./ringfence`, `.venv/bin/ringfence`, `python -m ringfence`, `uvx "
         "ringfence`): the gate denies them in every context and the hook answers deny. "
         "Read-only commands (`check`, `explain`, `rule`, `rules`, `doctor`, `ledger "
         "list/show/export`, `approvals list`, `grants list`, `profile list/show/lint/"
         "compile`) are keyed like any multiplexer (`ringfence ledger list`).",
         bad="ringfence approve ap_k3j5x7q2mn --scope session", good="ringfence approvals list"),
    Rule("RF135", "moves-ringfence-state", "The command moves where ringfence keeps its "
         "state, config or cache.",
         "ringfence finds its ledger, grants, config and tool caches through `XDG_*` (and "
         "`RINGFENCE_*`, RF134) in the environment of later commands. In Claude Code's "
         "persistent shell an `export XDG_STATE_HOME=...` or `unset RINGFENCE_HOME` (or "
         "`unset HOME`/`PATH`) changes that for every later call: a fresh, empty ledger with "
         "no record of what ran, or a config the agent wrote. So assigning any `XDG_*` "
         "variable (bare, as a prefix, through `export`/`declare`/`readonly`/`local` or "
         "`env`) and unsetting `XDG_*`, `RINGFENCE_*`, `HOME` or `PATH` is one-time, never "
         "allowed silently. Assigning `HOME` or `PATH` is RF122.",
         bad="export XDG_STATE_HOME=/tmp/x", good="export LANG=C",
         known_problems="A change through `source`/`eval` is one-time already (RF117, RF118)."),
)
