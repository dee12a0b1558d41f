"""Every long option of the launchers and wrappers whose options are read
getopt_long's way: getopt_long takes any unique prefix of a long option
(`flock --time 1` is `flock --timeout 1`), so the analysis resolves prefixes
against the full list, and a long option that is neither one of these nor a
unique prefix of one is read conservatively (one time, never as the program).

From each program's `--help` (util-linux 2.38, coreutils 9.1, findutils 4.9,
strace 6.1, bubblewrap 0.8, as on Debian 12); checked against the installed
programs by tests/classifier/test_launcher_longs.py.
"""


def _s(text: str) -> frozenset[str]:
    return frozenset(text.split())


LONGS: dict[str, frozenset[str]] = {
    "flock": _s("--close --command --conflict-exit-code --exclusive --help --no-fork "
                "--nonblock --shared --timeout --unlock --verbose --version"),
    "env": _s("--block-signal --chdir --debug --default-signal --help --ignore-environment "
              "--ignore-signal --list-signal-handling --null --split-string --unset "
              "--version"),
    "xargs": _s("--arg-file --delimiter --eof --exit --help --interactive --max-args "
                "--max-chars --max-lines --max-procs --no-run-if-empty --null --open-tty "
                "--process-slot-var --replace --show-limits --verbose --version"),
    "strace": _s("--abbrev --absolute-timestamps --attach --columns --const-print-style "
                 "--daemonize --debug --decode-fds --decode-pids --detach-on --env "
                 "--failed-only --fault --follow-forks --help --inject --instruction-pointer "
                 "--interruptible --kvm --no-abbrev --output-append-mode --output-separately "
                 "--output --quiet --raw --read --relative-timestamps --seccomp-bpf --signal "
                 "--stack-traces --status --string-limit --strings-in-hex --successful-only "
                 "--summary --summary-columns --summary-only --summary-sort-by "
                 "--summary-syscall-overhead --summary-wall-clock --syscall-number "
                 "--syscall-times --tips --trace-path --trace --user --verbose --version "
                 "--write"),
    "taskset": _s("--all-tasks --cpu-list --help --pid --version"),
    "chrt": _s("--all-tasks --batch --deadline --fifo --help --idle --max --other --pid "
               "--reset-on-fork --rr --sched-deadline --sched-period --sched-runtime "
               "--verbose --version"),
    "prlimit": _s("--as --core --cpu --data --fsize --help --locks --memlock --msgqueue "
                  "--nice --nofile --noheadings --nproc --output --pid --raw --rss --rtprio "
                  "--rttime --sigpending --stack --verbose --version"),
    "ionice": _s("--class --classdata --help --ignore --pgid --pid --uid --version"),
    "unshare": _s("--boottime --cgroup --fork --help --ipc --keep-caps --kill-child "
                  "--map-auto --map-current-user --map-group --map-groups --map-root-user "
                  "--map-user --map-users --monotonic --mount --mount-proc --net --pid "
                  "--propagation --root --setgid --setgroups --setuid --time --user --uts "
                  "--version --wd"),
    "nsenter": _s("--all --cgroup --follow-context --help --ipc --mount --net --no-fork "
                  "--pid --preserve-credentials --root --setgid --setuid --target --time "
                  "--user --uts --version --wd --wdns"),
    "setpriv": _s("--ambient-caps --apparmor-profile --bounding-set --clear-groups --dump "
                  "--egid --euid --groups --help --inh-caps --init-groups --keep-groups "
                  "--nnp --no-new-privs --pdeathsig --regid --reset-env --reuid --rgid "
                  "--ruid --securebits --selinux-label --version"),
    "chroot": _s("--groups --help --skip-chdir --userspec --version"),
    "runuser": _s("--command --fast --group --help --login --preserve-environment --pty "
                  "--session-command --shell --supp-group --user --version "
                  "--whitelist-environment"),
    "setsid": _s("--ctty --fork --help --version --wait"),
    "timeout": _s("--foreground --help --kill-after --preserve-status --signal --verbose "
                  "--version"),
    "nice": _s("--adjustment --help --version"),
    "stdbuf": _s("--error --help --input --output --version"),
}
# bwrap(1) reads its options with strcmp (no prefixes); an unknown one is an error
BWRAP_LONGS = _s(
    "--add-seccomp-fd --args --argv0 --as-pid-1 --assert-userns-disabled --bind --bind-data "
    "--bind-fd --bind-try --block-fd --cap-add --cap-drop --chdir --chmod --clearenv --dev "
    "--dev-bind --dev-bind-try --die-with-parent --dir --disable-userns --exec-label --file "
    "--file-label --gid --help --hostname --info-fd --json-status-fd --lock-file --mqueue "
    "--new-session --perms --pidns --proc --remount-ro --ro-bind --ro-bind-data --ro-bind-fd "
    "--ro-bind-try --seccomp --setenv --share-net --size --symlink --sync-fd --tmpfs --uid "
    "--unsetenv --unshare-all --unshare-cgroup --unshare-cgroup-try --unshare-ipc "
    "--unshare-net --unshare-pid --unshare-user --unshare-user-try --unshare-uts --userns "
    "--userns-block-fd --userns2 --version")
# bwrap options whose second value is a path in the new root: over a program's path
# (/usr, /bin, /etc, ...) the command it runs is not the one named
BWRAP_PLACES = _s("--bind --bind-try --dev-bind --dev-bind-try --ro-bind --ro-bind-try "
                  "--file --bind-data --ro-bind-data --symlink --bind-fd --ro-bind-fd")
