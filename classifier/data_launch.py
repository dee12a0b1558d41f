"""The launcher table: programs that run the command in their operands.

Each row says how the program finds the command it runs (which options take
a value, how many operands come before the command, ``--``), so the analysis
peels it like ``nice`` or ``timeout`` and judges and keys the inner command.
``sudo``/``doas``-style rows also carry a fact (``escalation``, ``detach``).

Sources: the program's own manual page or ``--help`` (util-linux 2.38, strace
6.1, valgrind 3.19, coreutils 9.1, systemd 252, GNU screen 4.9, firejail
0.9.72, numactl 2.0, libcgroup 2.0, xvfb-run from xvfb 21.1, dbus 1.14,
fakeroot 1.31, OpenSSH 9.2, as on Debian 12). Installed ones are checked
against the real program by tests/classifier/test_launchers.py.

Row fields (``Wrapper``):
- ``opts``: options that take a value (the next word, or attached);
- ``positionals``: operands before the command (taskset MASK, chroot NEWROOT);
- ``fact``: a one-time fact every use carries (``escalation``, ``detach``);
- ``stop_opts``: options that mean "runs no command" (``taskset -p PID``);
- ``writes``: options whose value is a file it writes (RF129);
- ``fact_opts``: option -> fact it adds (``screen -d``: detach);
- ``shell_opts``: options whose value is a shell string (``flock -c``), or a
  command of the program's own that may run one (``screen -X stuff``) unless
  its first word is in ``shell_safe`` (``screen -X quit``);
- ``shell_words``: a word at the command's place meaning "a shell string
  follows" (``flock FILE -c CMD``, ``sg GROUP -c CMD``);
- ``shell``: the command words are handed to a shell (``sg GROUP CMD``),
  unless one of ``shell_unless`` was given (``runuser -u USER CMD`` execs);
- ``run_opts``: options whose value is a program or library it runs or loads;
- ``env_opts``: options whose value is NAME=VALUE for the command (RF122).
"""

from typing import NamedTuple

from .optspec import Opts, opts


class Wrapper(NamedTuple):
    opts: Opts = Opts()
    positionals: int = 0          # words between the options and the program (timeout D)
    fact: str = ""                # a one-time fact this wrapper carries ('escalation', ...)
    stop_opts: frozenset[str] = frozenset()   # options that mean "not wrapping anything"
    writes: frozenset[str] = frozenset()      # options whose value is a file it writes (RF129)
    longs: frozenset[str] = frozenset()       # every long option: getopt_long takes prefixes
    source: str = ""
    fact_opts: tuple[tuple[str, str], ...] = ()
    shell_opts: frozenset[str] = frozenset()
    shell_words: frozenset[str] = frozenset()
    shell: bool = False
    shell_unless: frozenset[str] = frozenset()
    run_opts: frozenset[str] = frozenset()
    env_opts: frozenset[str] = frozenset()
    shell_safe: frozenset[str] = frozenset()      # values of shell_opts that run nothing
    options_after: bool = False   # options also follow the positionals (setarch ARCH -R)


def _s(text: str) -> frozenset[str]:
    return frozenset(text.split())


_HV = _s("-h --help -V --version")
_ESC = "escalation"

LAUNCHERS: dict[str, Wrapper] = {
    # taskset(1): taskset [options] mask command | taskset -c list command; -p: a pid
    "taskset": Wrapper(positionals=1, stop_opts=_HV | _s("-p --pid"),
                       source="taskset(1) taskset [options] mask command [argument...]"),
    # chrt(1): chrt [options] priority command; -p: a pid; -m: prints the limits
    "chrt": Wrapper(opts("-T", "-P", "-D", "--sched-runtime", "--sched-period",
                         "--sched-deadline"), positionals=1,
                    stop_opts=_HV | _s("-p --pid -m --max"),
                    source="chrt(1) chrt [options] priority command [argument...]"),
    # prlimit(1): the resource options take only an attached value (--nofile=10)
    "prlimit": Wrapper(opts("-o", "--output"), stop_opts=_HV | _s("-p --pid"),
                       source="prlimit(1) prlimit [options] [--resource=limits] command"),
    # ionice(1): -p/-P/-u act on running processes (their operands are ids)
    "ionice": Wrapper(opts("-c", "-n", "--class", "--classdata"),
                      stop_opts=_HV | _s("-p --pid -P --pgid -u --uid"),
                      source="ionice(1) ionice [options] command"),
    # unshare(1): new namespaces (user namespace root with -r); escalation
    "unshare": Wrapper(opts("-R", "--root", "-w", "--wd", "-S", "--setuid", "-G", "--setgid",
                            "--propagation", "--setgroups", "--map-user", "--map-group",
                            "--map-users", "--map-groups", "--monotonic", "--boottime"),
                       fact=_ESC, stop_opts=_HV,
                       source="unshare(1) unshare [options] [program [arguments]]"),
    # nsenter(1), setpriv(1): other namespaces or credentials; escalation
    "nsenter": Wrapper(opts("-t", "--target", "-S", "--setuid", "-G", "--setgid", "-W",
                            "--wdns"), fact=_ESC, stop_opts=_HV,
                       source="nsenter(1) nsenter [options] [program [arguments]]"),
    "setpriv": Wrapper(opts("--ambient-caps", "--inh-caps", "--bounding-set", "--ruid",
                            "--euid", "--rgid", "--egid", "--reuid", "--regid", "--groups",
                            "--securebits", "--pdeathsig", "--selinux-label",
                            "--apparmor-profile"), fact=_ESC, stop_opts=_HV | _s("-d --dump"),
                       source="setpriv(1) setpriv [options] program [arguments]"),
    # chroot(8): chroot [OPTION] NEWROOT [COMMAND [ARG]...] (no command: $SHELL -i)
    "chroot": Wrapper(opts("--groups", "--userspec"), positionals=1, fact=_ESC,
                      stop_opts=_s("--help --version"),
                      source="chroot(8) chroot [OPTION] NEWROOT [COMMAND [ARG]...]"),
    # sg(1): sg group [[-c] command]: the command is run by /bin/sh -c
    "sg": Wrapper(positionals=1, fact=_ESC, shell=True,
                  source="sg(1) sg [-] [group [-c ] command]: executed by /bin/sh"),
    # runuser(1): -u USER [--] COMMAND execs it; the su form hands -c/arguments to a shell
    "runuser": Wrapper(opts("-u", "--user", "-g", "--group", "-G", "--supp-group", "-s",
                            "--shell", "-w", "--whitelist-environment"), fact=_ESC,
                       shell=True, shell_unless=_s("-u --user"),
                       shell_opts=_s("-c --command --session-command"), stop_opts=_HV,
                       source="runuser(1) runuser [options] -u user [[--] command]"),
    # flock(1): flock [options] file|directory command | file -c command | fd
    "flock": Wrapper(opts("-w", "--timeout", "-E", "--conflict-exit-code"), positionals=1,
                     shell_opts=_s("-c --command"), shell_words=_s("-c --command"),
                     stop_opts=_HV,
                     source="flock(1) flock [options] file|directory command [arguments]"),
    # strace(1): -o FILE writes the trace; -E VAR=VAL sets the environment; -u USER
    "strace": Wrapper(opts("-e", "-o", "--output", "-p", "--attach", "-u", "--user", "-E",
                           "--env", "-b", "--detach-on", "-I", "--interruptible", "-a",
                           "--columns", "-s", "--string-limit", "-X", "--const-print-style",
                           "-O", "-S", "--summary-sort-by", "-U", "--summary-columns", "-P",
                           "--trace-path"),
                      stop_opts=_HV | _s("-p --attach"), writes=_s("-o --output"),
                      fact_opts=(("-u", _ESC), ("--user", _ESC)), env_opts=_s("-E --env"),
                      source="strace(1) strace [-o FILE] [-E VAR=VAL] [-u USERNAME] PROG"),
    # ltrace(1): -o filename writes; -p pid; -u username
    "ltrace": Wrapper(opts("-a", "-A", "-D", "-e", "-l", "-n", "-o", "--output", "-p", "-s",
                           "-u", "-w", "-x", "-F"), stop_opts=_HV | _s("-p"),
                      writes=_s("-o --output"), fact_opts=(("-u", _ESC),),
                      source="ltrace(1) ltrace [-o filename] [-p pid] [--] command [arg ...]"),
    # valgrind(1): valgrind [valgrind-options] [your-program]; --log-file=, --xml-file=
    "valgrind": Wrapper(opts("--log-file", "--xml-file", "--massif-out-file",
                             "--callgrind-out-file", "--cachegrind-out-file",
                             "--dhat-out-file"), stop_opts=_HV,
                        writes=_s("--log-file --xml-file --massif-out-file --callgrind-out-file "
                                  "--cachegrind-out-file --dhat-out-file"),
                        source="valgrind(1) --log-file=<filename>, --xml-file=<filename>"),
    # xvfb-run(1): -e/--error-file and -f/--auth-file are files it writes
    "xvfb-run": Wrapper(opts("-e", "--error-file", "-f", "--auth-file", "-n", "--server-num",
                             "-p", "--xauth-protocol", "-s", "--server-args", "-w", "--wait"),
                        writes=_s("-e --error-file -f --auth-file"), stop_opts=_s("-h --help"),
                        source="xvfb-run(1) xvfb-run [options] command"),
    # numactl(8): numactl [--interleave nodes] [--cpunodebind nodes] ... command
    "numactl": Wrapper(opts("-i", "--interleave", "-p", "--preferred", "-m", "--membind",
                            "-N", "--cpunodebind", "-C", "--physcpubind", "-P",
                            "--preferred-many", "-w", "--weighted-interleave"),
                       stop_opts=_s("-s --show -H --hardware --length --offset --shm "
                                    "--file -V --version -h --help"),
                       source="numactl(8) numactl [options] command {arguments ...}"),
    # cgexec(1): cgexec [-g <controllers>:<path>] [--sticky] command [arguments]
    "cgexec": Wrapper(opts("-g"), stop_opts=_s("-h --help"),
                      source="cgexec(1) cgexec [-g <controllers>:<path>] command"),
    # firejail(1): --output=/--output-stderr= write the log; --env=NAME=VALUE
    "firejail": Wrapper(opts("--output", "--output-stderr", "--env", "--profile", "--join",
                             "--name", "--shell"), writes=_s("--output --output-stderr"),
                        run_opts=_s("--shell"),
                        env_opts=_s("--env"), stop_opts=_s("--help --version --list --tree"),
                        source="firejail(1) firejail [OPTIONS] [program and arguments]"),
    # systemd-run(1): runs the command as a transient unit (by default of the system
    # manager, as root); -E/--setenv NAME=VALUE
    "systemd-run": Wrapper(opts("-u", "--unit", "-p", "--property", "--description",
                                "--slice", "-H", "--host", "-M", "--machine",
                                "--service-type", "--uid", "--gid", "--nice",
                                "--working-directory", "-E", "--setenv", "--path-property",
                                "--socket-property", "--timer-property", "--on-active",
                                "--on-boot", "--on-startup", "--on-unit-active",
                                "--on-unit-inactive", "--on-calendar"),
                           fact=_ESC, env_opts=_s("-E --setenv"), stop_opts=_s("-h --help "
                                                                                "--version"),
                           source="systemd-run(1) systemd-run [OPTIONS...] COMMAND [ARGS...]"),
    "systemd-inhibit": Wrapper(opts("--what", "--who", "--why", "--mode"),
                               stop_opts=_s("-h --help --version --list"),
                               source="systemd-inhibit(1) [OPTIONS...] [COMMAND] [ARGUMENTS...]"),
    # dbus-launch(1): starts a session bus daemon that outlives the command
    "dbus-launch": Wrapper(opts("--autolaunch", "--config-file"), fact="detach",
                           run_opts=_s("--config-file"),
                           stop_opts=_s("--help --version"),
                           source="dbus-launch(1) dbus-launch [options] [PROGRAM] [ARGS...]"),
    # screen(1): screen [-opts] [cmd [args]]; -d -m: detached; -X sends a command to
    # a running session (`stuff`, `exec`); -c file: its screenrc runs commands; -s:
    # the shell it runs
    "screen": Wrapper(opts("-S", "-c", "-e", "-h", "-p", "-s", "-t", "-T", "-Logfile",
                           "-ls", "-list", "-wipe"),
                      stop_opts=_s("-r -R -x -ls -list -wipe -v -Q --help --version"),
                      writes=_s("-Logfile"),
                      fact_opts=(("-d", "detach"), ("-D", "detach"), ("-L", "wrapper-writes")),
                      shell_opts=_s("-X"), run_opts=_s("-c -s"),
                      shell_safe=_s("quit kill detach title sessionname select next prev "
                                    "other windows info version number lockscreen clear "
                                    "redisplay fit remove only focus"),
                      source="screen(1) screen [-opts] [cmd [args]]; -d -m, -X, -c, -s"),
    # ssh-agent(1): ssh-agent [-a bind_address] [-t life] command [arg ...]
    "ssh-agent": Wrapper(opts("-a", "-E", "-P", "-t"), stop_opts=_s("-k"),
                         source="ssh-agent(1) ssh-agent [options] command [arg ...]"),
    # fakeroot(1): -l/--lib loads a library, --faked runs a program, -s writes its state
    "fakeroot": Wrapper(opts("-l", "--lib", "--faked", "-i", "-s", "-b", "--fd-base"),
                        writes=_s("-s"), run_opts=_s("-l --lib --faked"),
                        stop_opts=_s("-h --help -v --version"),
                        source="fakeroot(1) fakeroot [-l library] [--faked binary] [-s "
                               "save-file] [--] [command]"),
    # faketime(1): faketime [switches] <timestamp> <program with arguments>
    "faketime": Wrapper(opts("-p", "--date-prog"), positionals=1, run_opts=_s("--date-prog"),
                        stop_opts=_s("-h --help -v --version"),
                        source="faketime(1) faketime [switches] timestamp program"),
    # moreutils chronic(1), eatmydata(1), expect's unbuffer(1), catchsegv(1):
    # the program and its arguments follow
    "chronic": Wrapper(source="chronic(1) chronic [-ev] COMMAND..."),
    "eatmydata": Wrapper(source="eatmydata(1) eatmydata [--] command [arguments]"),
    "unbuffer": Wrapper(source="unbuffer(1) unbuffer [-p] program [args]"),
    "catchsegv": Wrapper(source="catchsegv(1) catchsegv program [args]"),
    # trickle(1), torsocks(1), proxychains4(1): network shims in front of a program
    "trickle": Wrapper(opts("-d", "-u", "-w", "-t", "-l", "-n"),
                       source="trickle(1) trickle [-hvVs] [-d rate] [-u rate] command"),
    "torsocks": Wrapper(opts("-u", "--user", "-p", "--pass", "-a", "--address", "-P",
                             "--port"), stop_opts=_s("-h --help --version --shell"),
                        source="torsocks(1) torsocks [options] command [args]"),
    "proxychains4": Wrapper(opts("-f"), source="proxychains4 [-q] [-f config] program"),
    # runit chpst(8): -u user (escalation), -e dir (environment from files), -/ root
    "chpst": Wrapper(opts("-u", "-U", "-b", "-e", "-/", "-n", "-l", "-L", "-m", "-d", "-o",
                          "-p", "-f", "-c", "-r", "-t"), fact_opts=(("-u", _ESC), ("-/", _ESC)),
                     env_opts=_s("-e"), source="chpst(8) chpst [-u user] [-e dir] prog"),
    # moreutils ifne(1) [-n] command, zrun(1) command, run-one(1) COMMAND
    "ifne": Wrapper(source="ifne(1) ifne [-n] command"),
    "zrun": Wrapper(source="zrun(1) zrun command file.gz [...]"),
    "run-one": Wrapper(source="run-one(1) run-one COMMAND [ARGS]"),
    "nocache": Wrapper(opts("-n"), source="nocache(1) nocache [-n <n>] command [args...]"),
    # cpulimit(1): cpulimit -l limit [-e exe | -p pid | [--] command]
    "cpulimit": Wrapper(opts("-l", "--limit", "-c", "--cpu", "-i"),
                        stop_opts=_s("-p --pid -e --exe -P --path -h --help"),
                        source="cpulimit(1) cpulimit [OPTIONS...] -- COMMAND"),
    # rlwrap(1): -z filter runs a filter program; -l file logs the session
    "rlwrap": Wrapper(opts("-a", "-b", "-C", "-D", "-e", "-f", "-F", "-g", "-H", "-l", "-M",
                           "-O", "-p", "-P", "-q", "-s", "-S", "-t", "-w", "-z", "--filter",
                           "--logfile", "--history-filename"),
                      writes=_s("-l --logfile"), run_opts=_s("-z --filter"),
                      source="rlwrap(1) rlwrap [-options] command ...; -z filter, -l file"),
    # bwrap(1): bwrap [OPTION...] [--] COMMAND [ARG...]; many options take two values
    "bwrap": Wrapper(opts("--args", "--argv0", "--userns", "--userns2", "--pidns", "--uid",
                          "--gid", "--hostname", "--chdir", "--unsetenv", "--lock-file",
                          "--sync-fd", "--remount-ro", "--exec-label", "--file-label", "--proc",
                          "--dev", "--tmpfs", "--mqueue", "--dir", "--seccomp", "--add-seccomp-fd",
                          "--block-fd", "--userns-block-fd", "--info-fd", "--json-status-fd",
                          "--cap-add", "--cap-drop", "--perms", "--size",
                          value2=("--bind", "--bind-try", "--dev-bind", "--dev-bind-try",
                                  "--ro-bind", "--ro-bind-try", "--file", "--bind-data",
                                  "--ro-bind-data", "--symlink", "--chmod", "--setenv",
                                  "--bind-fd", "--ro-bind-fd")),
                     stop_opts=_s("--help --version"), env_opts=_s("--setenv"),
                     source="bwrap(1) bwrap [OPTION...] [--] COMMAND [ARG...]"),
    # host escapes from a container or a flatpak: the command runs on the host
    "flatpak-spawn": Wrapper(opts("--env", "--forward-fd", "--directory", "--app-path",
                                  "--usr-path"), fact_opts=(("--host", _ESC),),
                             env_opts=_s("--env"),
                             source="flatpak-spawn(1) flatpak-spawn [OPTION...] COMMAND"),
    "distrobox-host-exec": Wrapper(fact=_ESC,
                                   source="distrobox-host-exec(1) distrobox-host-exec command"),
    "host-spawn": Wrapper(fact=_ESC, source="host-spawn [OPTIONS] COMMAND"),
    # task spoolers and daemonizers: the command runs later or detached
    "nq": Wrapper(opts("-c"), fact="detach", source="nq(1) nq [-c] [-q] command"),
    "tsp": Wrapper(opts("-L", "-D", "-N", "-E"), fact="detach",
                   stop_opts=_s("-l -t -c -p -o -i -u -r -k -K -C -S -h -V -T"),
                   source="tsp(1) tsp [options] [command...]"),
    "daemonize": Wrapper(opts("-a", "-c", "-e", "-E", "-o", "-p", "-l", "-u"), fact="detach",
                         writes=_s("-e -o -p -l"), env_opts=_s("-E"),
                         fact_opts=(("-u", _ESC),),
                         source="daemonize(1) daemonize [-a] [-c dir] [-e stderr] [-o stdout] "
                                "[-p pidfile] [-u user] path [arg] ..."),
    # setarch(8) arch [options] [program [argument...]]; linux32/linux64 are it with the
    # arch in the name; choom(1) -n number [--] command
    "setarch": Wrapper(positionals=1, stop_opts=_HV | _s("--list"), options_after=True,
                       source="setarch(8) setarch [arch] [options] [program [argument...]]"),
    "linux32": Wrapper(stop_opts=_HV, source="setarch(8) linux32 [options] [program]"),
    "linux64": Wrapper(stop_opts=_HV, source="setarch(8) linux64 [options] [program]"),
    "choom": Wrapper(opts("-n", "--adjust"), stop_opts=_HV | _s("-p --pid"),
                     source="choom(1) choom [options] -n number [--] command [args...]"),
    # dbus-run-session(1): --dbus-daemon=BINARY runs BINARY; --config-file is its config
    "dbus-run-session": Wrapper(opts("--dbus-daemon", "--config-file"),
                                run_opts=_s("--dbus-daemon --config-file"),
                                stop_opts=_s("--help --version"),
                                source="dbus-run-session [OPTIONS] [--] PROGRAM [ARGUMENTS]"),
    # ld.so(8) run directly: ld.so [OPTIONS] [PROGRAM [ARGUMENTS...]]; --preload and
    # --audit load libraries, --library-path picks them
    "ld.so": Wrapper(opts("--library-path", "--glibc-hwcaps-prepend", "--glibc-hwcaps-mask",
                          "--inhibit-rpath", "--audit", "--preload", "--argv0"),
                     run_opts=_s("--library-path --audit --preload"),
                     stop_opts=_s("--list --verify --list-tunables --list-diagnostics --help "
                                  "--version"),
                     source="ld.so(8) ld.so [OPTIONS] [PROGRAM [ARGUMENTS...]]"),
    # sshpass(1) [-f filename|-d num|-p password|-e] command; gosu(1) user-spec command;
    # tini [-s -p SIGNAL -e CODE -g -w -v] PROGRAM; ccache(1) compiler [args];
    # daemontools softlimit(8) opts child
    "sshpass": Wrapper(opts("-f", "-d", "-p", "-P"), stop_opts=_s("-h -V"),
                       source="sshpass(1) sshpass [-ffilename|-dnum|-ppassword|-e] command"),
    "gosu": Wrapper(positionals=1, fact=_ESC, source="gosu user-spec command [args]"),
    "tini": Wrapper(opts("-p", "-e"), stop_opts=_s("-h -l --version"),
                    source="tini [OPTIONS] PROGRAM -- [ARGS]"),
    "ccache": Wrapper(stop_opts=_s("-s --show-stats -z --zero-stats -C --clear -c --cleanup "
                                   "-M --max-size -F --max-files -p --show-config -o --set-config "
                                   "-x --show-compression -h --help -V --version"),
                      source="ccache(1) ccache [ccache options] compiler [compiler options]"),
    "softlimit": Wrapper(opts("-m", "-d", "-s", "-l", "-a", "-o", "-p", "-f", "-c", "-r",
                              "-t"), source="softlimit(8) softlimit opts child"),
    # run-parts(8) runs every program in a directory; start-stop-daemon(8) -x/--exec
    # starts a program detached, usually as another user: judged as handing the
    # command over (what runs is not in the words)
    "run-parts": Wrapper(opts("-u", "--umask", "-a", "--arg", "--regex"), shell=True,
                         stop_opts=_s("--test --list -h --help -V --version"),
                         source="run-parts(8) run-parts [options] directory"),
    "start-stop-daemon": Wrapper(fact="detach", shell=True, stop_opts=_s("-K --stop -T "
                                                                         "--status -H --help"),
                                 source="start-stop-daemon(8) start-stop-daemon [option...] "
                                        "command"),
    # macOS caffeinate(8): caffeinate [-disu] [-t timeout] [-w pid] [utility args...]
    "caffeinate": Wrapper(opts("-t", "-w"), source="caffeinate(8) [-t timeout] [utility]"),
}
# GNU coreutils installed with a g prefix (Homebrew), and util-linux's aliases
LAUNCHER_ALIASES = {"gtimeout": "timeout", "gnice": "nice", "gnohup": "nohup",
                    "gstdbuf": "stdbuf", "gchroot": "chroot", "proxychains": "proxychains4",
                    "ld-linux-x86-64.so.2": "ld.so", "ld-linux.so.2": "ld.so",
                    "ld-linux-aarch64.so.1": "ld.so", "ld-linux-armhf.so.3": "ld.so",
                    "ld-musl-x86_64.so.1": "ld.so", "ld-musl-aarch64.so.1": "ld.so"}

# tmux(1) 3.3: every command (name -> alias), since tmux also accepts a unique
# prefix of a name; TMUX_RUNS: the ones that run a shell command now or later
# (new-session, new-window, split-window, respawn-*, run-shell, if-shell,
# pipe-pane, display-popup/-menu; send-keys types into a shell; source-file
# runs a file of commands; set-hook, bind-key, choose-*, command-prompt,
# confirm-before attach commands to events) or write a file (save-buffer).
# A `#(command)` in a format or option value runs a shell command too.
TMUX_COMMANDS = dict(pair.split("=") for pair in (
    "attach-session=attach bind-key=bind break-pane=breakp capture-pane=capturep "
    "choose-buffer= choose-client= choose-tree= clear-history=clearhist "
    "clear-prompt-history=clearphist clock-mode= command-prompt= confirm-before=confirm "
    "copy-mode= customize-mode= delete-buffer=deleteb detach-client=detach "
    "display-menu=menu display-message=display display-popup=popup display-panes=displayp "
    "find-window=findw has-session=has if-shell=if join-pane=joinp kill-pane=killp "
    "kill-server= kill-session= kill-window=killw last-pane=lastp last-window=last "
    "link-window=linkw list-buffers=lsb list-clients=lsc list-commands=lscm list-keys=lsk "
    "list-panes=lsp list-sessions=ls list-windows=lsw load-buffer=loadb lock-client=lockc "
    "lock-server=lock lock-session=locks move-pane=movep move-window=movew "
    "new-session=new new-window=neww next-layout=nextl next-window=next "
    "paste-buffer=pasteb pipe-pane=pipep previous-layout=prevl previous-window=prev "
    "refresh-client=refresh rename-session=rename rename-window=renamew "
    "resize-pane=resizep resize-window=resizew respawn-pane=respawnp "
    "respawn-window=respawnw rotate-window=rotatew run-shell=run save-buffer=saveb "
    "select-layout=selectl select-pane=selectp select-window=selectw send-keys=send "
    "send-prefix= server-access= set-buffer=setb set-environment=setenv set-hook= "
    "set-option=set set-window-option=setw show-buffer=showb show-environment=showenv "
    "show-hooks= show-messages=showmsgs show-options=show show-prompt-history=showphist "
    "show-window-options=showw source-file=source split-window=splitw start-server=start "
    "suspend-client=suspendc swap-pane=swapp swap-window=swapw switch-client=switchc "
    "unbind-key=unbind unlink-window=unlinkw wait-for=wait").split())
TMUX_RUNS = _s("new-session new-window split-window respawn-pane respawn-window run-shell "
               "if-shell pipe-pane display-popup display-menu send-keys send-prefix "
               "source-file set-hook bind-key command-prompt confirm-before choose-tree "
               "choose-buffer choose-client save-buffer set-buffer paste-buffer")
# set-option values that are commands: default-command/-shell, lock-command and
# the hooks (tmux 3 hooks are options: after-*, pane-*, session-*, ...)
TMUX_COMMAND_OPTION = ("default-command", "default-shell", "lock-command", "after-",
                       "alert-", "client-", "pane-", "session-", "window-", "command-")
# Programs whose operands are shell command lines (each one run by a shell):
# hyperfine(1) 'cmd', moreutils pee(1)/mispipe(1), concurrently, GNU sem,
# entr(1) -s, watchexec -- cmd, nodemon --exec/-x, xe -s
SHELL_OPERANDS = _s("hyperfine pee mispipe concurrently sem entr watchexec nodemon xe "
                    "pueue")
# a shell operand then an option (`foo sh -c CMD`, `foo /bin/bash -lc CMD`): the
# program runs it; programs that only print their operands are exempt
PRINTS_OPERANDS = _s("echo printf")

# Programs that install commands which run later, outside the session (RF144),
# -> the options that only list, print or remove jobs. at(1)/batch: commands
# from stdin or -f FILE run at a time (-l/atq list, -r/-d/atrm remove, -c
# print a job); crontab(1) FILE or stdin replaces the crontab (-l lists it).
SCHEDULERS: dict[str, frozenset[str]] = {
    "at": _s("-l -r -d -c -V --help"), "batch": _s("-V --help"),
    "crontab": _s("-l -V --help"),
}
