"""RF3xx: harmless decoration that is stripped."""

from . import Rule

RULES: tuple[Rule, ...] = (
    Rule("RF301", "fd-duplication", "File-descriptor duplication is decoration.",
         "`2>&1`, `>&2` and `3<&0` only rewire descriptors the command already has.",
         bad="make 2>&1", good="make"),
    Rule("RF302", "fd-close", "Closing a file descriptor is decoration.",
         "`2>&-` closes a descriptor; nothing is read or written.",
         bad="make 2>&-", good="make"),
    Rule("RF303", "dev-null-redirect", "Redirection to or from /dev/null is decoration.",
         "Discarding output (`>/dev/null`, `2>/dev/null`, `&>/dev/null`) or reading nothing "
         "(`</dev/null`) touches no file.", bad="make >/dev/null", good="make"),
    Rule("RF304", "std-stream-output", "Output to /dev/stdout or /dev/stderr is decoration.",
         "These name the command's own output streams.", bad="echo x >/dev/stderr",
         good="echo x"),
    Rule("RF305", "filter-stage", "A pure filter as a later pipeline stage is decoration.",
         "head, tail, grep, wc, sort (no -o/--compress-program), uniq, cut, tr, cat, tac, nl, "
         "column, fold, rev, jq, base64 (no -o), sed (no -i, no e/w commands), awk (no "
         "system, pipes, output redirection or getline) and tee to /dev/null|/dev/stdout|"
         "/dev/stderr only just reshape text. They are decoration only as a NON-FIRST stage "
         "reading stdin with no file operands: `cat file | jq` keeps `cat` (it reads a file) "
         "and strips `jq`.", bad="longbridge news FIG.US | head -30",
         good="head -30 news.txt"),
    Rule("RF306", "helper-command", "A fully literal harmless helper is decoration.",
         "Static cd/pushd/popd, literal echo/printf, true/false/:, pwd, exit N, set "
         "-e/-u/-x/-o pipefail, sleep N, test/[/[[ on literals, `(( ))` on literal integers, and plain variable "
         "assignments, export/declare/local and unset (except the variables of RF122) run no "
         "program. A helper must be fully literal: `echo $HOME` is NOT a helper (it is the "
         "capability `echo`), because an expansion can print secrets from the environment "
         "and `cd $dir` goes somewhere decided at run time.",
         bad="cd build && make", good="cd $BUILD && make",
         known_problems="Arithmetic on anything but literal integers (`(( x ))`, "
                        "`[[ $n -eq 1 ]]`) is never a helper: RF140."),
    Rule("RF308", "here-string-input", "A here-string read as data is decoration.",
         "`grep x <<<\"$var\"`, `cat <<<text` and `read v <<<value` feed inline text to a "
         "program that reads it as data, like `< file` (the text is in the command for the "
         "approver to see). Into a shell or interpreter (`bash <<<...`, `python3 <<<...`), "
         "or a program whose name is decided at run time, the text is a program: RF104. A "
         "live `$(...)` inside the text is RF101 either way.",
         bad="grep -c x <<<\"$var\"", good="grep -c x notes.txt"),
    Rule("RF307", "comment", "A comment is decoration.",
         "`#` starts a comment only at the start of a word (`a#b` is one word).",
         bad="make # build it", good="make"),
)
