"""RF2xx: how invocations map to capability keys (informational findings)."""

from . import Rule

RULES: tuple[Rule, ...] = (
    Rule("RF201", "wrapper-unwrapped",
         "A transparent wrapper was removed; the capability is the wrapped program.",
         "time, timeout D, nice [-n N], nohup, stdbuf, ionice, env VAR=x, command, builtin and "
         "exec prog only change how a program runs, not which one; so do the rows of the "
         "launcher table (classifier/data_launch.py: taskset, chrt, prlimit, unshare, "
         "strace, ltrace, valgrind, flock, xvfb-run, setsid, numactl, cgexec, firejail, "
         "systemd-run, chroot, runuser -u, screen, dbus-launch, fakeroot, ...). The key is "
         "the wrapped "
         "program's, so `timeout 5 longbridge ...` needs the `longbridge` grant. (sudo and "
         "friends are unwrapped too, but also force one-time.)",
         bad="timeout 30 longbridge quote FIG.US", good="longbridge quote FIG.US"),
    Rule("RF202", "launcher",
         "A launcher names what it launches; the capability is the launched program.",
         "`xargs prog`, `find ... -exec prog {} ;` and `watch -x prog` run another program; "
         "that program is the capability (find keeps its own key too, since it walks the "
         "tree). `uv run`, `poetry run` and `npm exec` keep their own key, and what they "
         "launch is still checked for one-time constructs.",
         bad="find . -name '*.tmp' -exec rm {} +", good="find . -name '*.tmp'"),
    Rule("RF203", "multiplexer-subcommand",
         "The key includes the subcommand of a multiplexer tool.",
         "For git, docker, podman, kubectl, helm, npm, pnpm, yarn, npx, cargo, go, gh, aws, "
         "gcloud, az, terraform, pip, uv, poetry, systemctl, brew, tmux and busybox (each "
         "applet is a program: `busybox rm`) the subcommand decides "
         "what happens (`git push` vs `git status`). Global options are skipped (`git -C dir "
         "push` is `git push`). Grouped tools take a second level: `gh pr view`, `docker "
         "compose up`, `kubectl config use-context`, `go mod tidy`; aws takes two words "
         "(`aws s3 cp`), az and gcloud up to three (`gcloud compute instances delete`).",
         bad="git -C repo push origin main", good="make test"),
    Rule("RF204", "input-redirect-read",
         "`< file` is a read, recorded as the effect read:FILE on the capability.",
         "Input redirection from a file is neither decoration nor one-time: the program reads "
         "that file. The capability carries the effect `read:<file>` so a person or a "
         "profile can see what is read.",
         bad="sort < names.txt", good="sort names.txt"),
    Rule("RF205", "path-qualified-program",
         "A path-qualified program keeps its path in the key.",
         "`./sed` or `/tmp/git` is a different file from `sed` or `git` on PATH; a grant for "
         "the bare name never covers it.",
         bad="./sed -n 1p f.txt", good="sed -n 1p f.txt"),
    Rule("RF206", "prints-environment",
         "Printing the shell's variables is a capability of its own.",
         "Bare `set`, `export`/`export -p`, `declare`/`typeset` without names or with "
         "`-p`/`-x`, `readonly -p` and `local -p` print every variable, secrets included, as "
         "`env` and `printenv` do; `declare -f`/`-F` print the function definitions. So "
         "they are not harmless helpers: each is keyed (`set`, `declare -p`, `export -p`, "
         "`declare -f`) and needs its own grant, and a grant of `env` does not cover them.",
         bad="set", good="set -euo pipefail"),
)
