"""Options and operands that turn a reading program into a writer, a deleter or
a launcher (RF131 write, RF132 delete, RF133 run): the one table, as data.

A grant covers only what its key names. `find`, `git log`, `sed`, `curl` or
`less` are approved as tools that read; these options make them write or
delete files they would not otherwise touch, or run another program, so each
one is as one-time as `> FILE` (RF105) or `bash -c` (RF107). Programs whose
key already names the write (`cp`, `mv`, `rm`, `tee`, `tar`, `unzip`, `wget`
saving into the current directory) are not listed: a grant of `rm` is a grant
to delete because its key says so.

Every entry carries its source: the tool's own manual or `--help` (as installed
on Debian 12: GNU findutils 4.9, git 2.39, GNU sed 4.9, less 590, coreutils 9.1,
curl 7.88, wget 1.21, OpenSSH 9.2, GNU tar 1.34, rsync 3.2, ncat 7.93). The
test tests/classifier/test_effects_help.py checks each listed option against
the installed tool's `--help` (skipping, per tool, what is not installed).

Row targets:
- ``value``: the option's value names the file written/deleted or the program run;
- ``self``: the option writes/deletes/runs something of the tool's own choosing;
- ``operands``: the command's operands are the files written (``sed -i``);
- ``operand1``: the second operand is written (``xxd IN OUT``);
- ``prefix:A,B``: an operand ``A=...`` / a socat address ``A:...`` (dd ``of=``).

Scan styles: ``getopt`` (GNU/BSD short clusters and long options with unique
prefixes), ``find`` (single-dash expression words), ``xxd`` (single-dash words
with optional attached values), ``operands`` (``key=value`` or ``TYPE:`` operands).
"""

from __future__ import annotations



from functools import lru_cache

from .data_interp import interp_for
from .effects_rows import Row, Tool, _r, _s  # noqa: E402,F401  (the row types)


# git's diff options (`--output=FILE`) are shared by every command that shows
# a diff or a log; git-diff(1) "--output=<file>: Output to a specific file
# instead of stdout".
_GIT_OUTPUT = _r("--output", "write", "value", "writes its output to the file")
_GIT_DIFF_VALUES = _s("--output -U --unified --format --pretty -n --max-count --skip "
                      "--since --until --author --committer --grep -S -G --stat "
                      "--abbrev --relative --src-prefix --dst-prefix -O --diff-filter "
                      "--word-diff-regex --anchored --color-moved --output-indicator-new "
                      "--output-indicator-old --output-indicator-context -L")
_GIT_DIFF_LONGS = _s("--output --output-indicator-new --output-indicator-old "
                     "--output-indicator-context --oneline --format --pretty --patch "
                     "--stat --name-only --name-status")
_GIT_SHOW = Tool("git-diff(1), git-log(1), git-show(1): --output=<file>", (_GIT_OUTPUT,),
                 _GIT_DIFF_VALUES, _GIT_DIFF_LONGS)

TOOLS: dict[str, Tool] = {
    # findutils find(1) ACTIONS: -delete deletes files; -fprint/-fprint0/-fls
    # FILE and -fprintf FILE FORMAT create or truncate FILE. (-exec/-execdir/
    # -ok/-okdir are launchers: analysis names what they launch.)
    "find": Tool("find(1) EXPRESSION / ACTIONS", (
        _r("-delete", "delete", "self", "deletes the files it finds"),
        _r("-fprint -fprint0 -fls -fprintf", "write", "value", "creates or truncates the file"),
    ), _s("-fprint -fprint0 -fls -fprintf -name -iname -path -ipath -wholename -iwholename "
          "-regex -iregex -lname -ilname -type -xtype -user -group -uid -gid -perm -size "
          "-newer -anewer -cnewer -mtime -atime -ctime -mmin -amin -cmin -used -links "
          "-inum -samefile -maxdepth -mindepth -fstype -context -printf -regextype "
          "-newerXY -files0-from"), style="find"),
    # GNU sed(1): -i[SUFFIX], --in-place[=SUFFIX] edit files in place (also in
    # a cluster: -ni, -Ei, -i.bak). -s/--separate is implied by -i.
    "sed": Tool("sed(1) -i[SUFFIX], --in-place[=SUFFIX]", (
        _r("-i --in-place", "write", "operands", "edits the files in place"),
    ), _s("-e --expression -f --file -l --line-length"),
        _s("--expression --file --in-place --line-length --null-data --zero-terminated "
           "--quiet --silent --regexp-extended --separate --sandbox --debug --posix "
           "--follow-symlinks --unbuffered --binary --help --version")),
    # less(1) OPTIONS: -o/--log-file=FILE and -O/--LOG-FILE=FILE copy the input to FILE.
    "less": Tool("less(1) -o, --log-file; -O, --LOG-FILE", (
        _r("-o -O --log-file --LOG-FILE", "write", "value", "copies its input to the file"),
    ), _s("-o -O --log-file --LOG-FILE -b -h -j -k -p -P -t -T -x -y -z -# --lesskey-file "
          "--tag --tag-file --pattern --prompt --shift --tabs --window --max-back-scroll "
          "--max-forw-scroll --jump-target --buffers"),
        _s("--log-file --LOG-FILE --lesskey-file --tag --tag-file --pattern --prompt")),
    # coreutils shuf(1): -o, --output=FILE
    "shuf": Tool("shuf(1) -o, --output=FILE", (
        _r("-o --output", "write", "value", "writes its output to the file"),
    ), _s("-o --output -n --head-count -i --input-range --random-source"),
        _s("--output --head-count --input-range --random-source --echo --repeat "
           "--zero-terminated --help --version")),
    # glibc iconv(1): -o, --output=FILE
    "iconv": Tool("iconv(1) -o, --output=FILE", (
        _r("-o --output", "write", "value", "writes its output to the file"),
    ), _s("-o --output -f --from-code -t --to-code"),
        _s("--output --from-code --to-code --list --silent --verbose --help --version")),
    # tree(1): -o filename "Output to file instead of stdout."
    "tree": Tool("tree(1) -o filename", (
        _r("-o", "write", "value", "writes its output to the file"),
    ), _s("-o -L -P -I -T -H --filelimit --timefmt --charset --sort --fromfile --infile"),
        style="getopt"),
    # xxd(1): xxd [options] [infile [outfile]], also with -r: the outfile is written.
    "xxd": Tool("xxd(1) xxd [options] [infile [outfile]]", (
        _r("", "write", "operand1", "writes its output to the second operand"),
    ), _s("-c -cols -g -groupsize -l -len -n -name -o -offset -s -seek -R"), style="xxd",
        stop=_s("-h -help -v -version")),
    # ripgrep rg(1): --hostname-bin=COMMAND runs COMMAND to learn the host name.
    # (--pre is RF113.)
    "rg": Tool("rg(1) --hostname-bin=COMMAND", (
        _r("--hostname-bin", "run", "value", "runs the program to find the host name"),
    ), _s("--hostname-bin -e --regexp -f --file -g --glob -t --type -T --type-not -m "
          "--max-count -A -B -C --context --pre --pre-glob -j --threads --max-depth "
          "--color --colors --sort --sortr -r --replace -M --max-columns"),
        _s("--hostname-bin --hyperlink-format")),
    # nc(1) (netcat-traditional, busybox nc): -e PROG runs a program on the
    # connection, -c CMD runs a shell string; ncat(1): -e/--exec, -c/--sh-exec,
    # --lua-exec run programs, -o/--output and -x/--hex-dump write the session.
    "nc": Tool("nc.traditional(1) -e filename, -c string; busybox nc -e PROG", (
        _r("-e -c", "run", "value", "runs a program on the connection"),
    ), _s("-e -c -i -p -q -s -w -x -X -I -O -T -V")),
    "ncat": Tool("ncat(1) -e, --exec; -c, --sh-exec; --lua-exec; -o, --output; -x, --hex-dump", (
        _r("-e --exec -c --sh-exec --lua-exec", "run", "value",
           "runs a program on the connection"),
        _r("-o --output -x --hex-dump", "write", "value", "writes the session to the file"),
    ), _s("-e --exec -c --sh-exec --lua-exec -o --output -x --hex-dump -p --source-port "
          "-s --source -i --idle-timeout -w --wait -d --delay -m --max-conns --proxy "
          "--proxy-type --proxy-auth --allow --allowfile --deny --denyfile"),
        _s("--exec --sh-exec --lua-exec --output --hex-dump --append-output")),
    # socat(1) ADDRESS TYPES: EXEC:/SYSTEM: run a program; CREATE:, OPEN:, GOPEN:
    # open (and write) a file.
    "socat": Tool("socat(1) ADDRESS TYPES: EXEC, SYSTEM, CREATE, OPEN, GOPEN", (
        _r("", "run", "prefix:exec,system", "runs a program as one end of the relay"),
        _r("", "write", "prefix:create,open,gopen,creat", "opens a file for writing"),
    ), style="socat"),
    # curl(1): -o/--output FILE, -O/--remote-name (a file named from the URL),
    # --remote-name-all, -J/--remote-header-name (the server picks the name),
    # -D/--dump-header FILE, -c/--cookie-jar FILE, --trace/--trace-ascii FILE,
    # --libcurl FILE, --etag-save FILE, --hsts FILE, --alt-svc FILE, --stderr
    # FILE; -K/--config FILE may hold any of these (`output = ...`).
    "curl": Tool("curl(1) OPTIONS", (
        _r("-o --output -D --dump-header -c --cookie-jar --trace --trace-ascii --libcurl "
           "--etag-save --hsts --alt-svc --stderr", "write", "value", "writes the file"),
        _r("-O --remote-name --remote-name-all -J --remote-header-name", "write", "self",
           "saves the download under a name taken from the URL or the server"),
        _r("-K --config", "write", "input", "reads options from a file (`-`: standard "
           "input), which may name output files"),
    ), _s("-E -K -C -b -c -d -D -F -P -H -m -o -U -Q -r -e -X -Y -y -t -z -T -u -A -w -x "
          "--abstract-unix-socket --alt-svc --aws-sigv4 --cacert --capath --cert "
          "--cert-type --ciphers --config --connect-timeout --connect-to --continue-at "
          "--cookie --cookie-jar --create-file-mode --crlfile --curves --data --data-ascii "
          "--data-binary --data-raw --data-urlencode --delegation --dns-interface "
          "--dns-servers --doh-url --dump-header --egd-file --engine --etag-compare "
          "--etag-save --expect100-timeout --form --form-string --ftp-account --ftp-method "
          "--ftp-port --header --hostpubmd5 --hostpubsha256 --hsts --interface --json "
          "--keepalive-time --key --key-type --krb --libcurl --limit-rate --local-port "
          "--login-options --mail-auth --mail-from --mail-rcpt --max-filesize --max-redirs "
          "--max-time --netrc-file --noproxy --oauth2-bearer --output --output-dir "
          "--parallel-max --pass --pinnedpubkey --preproxy --proto --proto-default "
          "--proto-redir --proxy --proxy-cacert --proxy-header --proxy-user --pubkey "
          "--quote --random-file --range --rate --referer --request --request-target "
          "--resolve --retry --retry-delay --retry-max-time --socks4 --socks4a --socks5 "
          "--socks5-hostname --speed-limit --speed-time --stderr --telnet-option "
          "--time-cond --tls-max --trace --trace-ascii --unix-socket --upload-file --url "
          "--url-query --user --user-agent --write-out"),
        _s("--output --output-dir --remote-name --remote-name-all --remote-header-name "
           "--dump-header --cookie-jar --cookie --trace --trace-ascii --trace-time "
           "--libcurl --etag-save --etag-compare --hsts --alt-svc --stderr --config "
           "--create-dirs --create-file-mode")),
    # wget(1): saving a download into the current directory without clobbering
    # is what its key names. -O/--output-document FILE, -o/--output-file and
    # -a/--append-output (logs), -P/--directory-prefix DIR, --save-cookies,
    # --warc-file, -N/--timestamping (overwrites existing files),
    # --content-disposition/--trust-server-names (the server picks the name),
    # and -e/--execute COMMAND (any wgetrc setting, e.g. output_document)
    # write where the key does not say; --use-askpass=COMMAND runs a program.
    "wget": Tool("wget(1) Logging, Download and Directory Options", (
        _r("-O --output-document -o --output-file -a --append-output -P --directory-prefix "
           "--save-cookies --warc-file --config", "write", "value",
           "writes the file or into the directory"),
        _r("-N --timestamping --content-disposition --trust-server-names", "write", "self",
           "overwrites or lets the server name the files it saves"),
        _r("-e --execute", "write", "value", "runs a wgetrc command, which can set where "
           "it writes"),
        _r("--use-askpass", "run", "value", "runs the program to ask for a password"),
    ), _s("-e --execute -o --output-file -a --append-output -i --input-file -B --base "
          "--config -O --output-document -t --tries -T --timeout -w --wait -P "
          "--directory-prefix -Q --quota -l --level -A --accept -R --reject -D --domains "
          "-I -X -U --user-agent -n --save-cookies --load-cookies --post-data --post-file "
          "--warc-file --use-askpass --header --user --password --bind-address"),
        _s("--execute --output-file --append-output --input-file --output-document "
           "--directory-prefix --save-cookies --warc-file --warc-cdx --warc-dedup "
           "--warc-tempdir --timestamping --content-disposition --trust-server-names "
           "--use-askpass --config --continue --convert-links")),
    # ssh(1): -F configfile (ProxyCommand/LocalCommand/Match exec inside), -I
    # pkcs11 (loads a shared library), -E log_file (appends debug logs).
    # (-o ProxyCommand=... is RF113.)
    "ssh": Tool("ssh(1) -F configfile, -I pkcs11, -E log_file", (
        _r("-F -I", "run", "value", "loads a config file or library that can run programs"),
        _r("-E", "write", "value", "appends its debug log to the file"),
    ), _s("-B -b -c -D -E -e -F -I -i -J -L -l -m -O -o -p -Q -R -S -W -w"), options_until=1),
    # scp(1)/sftp(1): -F ssh_config; -D sftp_server_path runs a local program;
    # sftp -b batchfile can run `!command` lines locally. (-S program is RF113.)
    "scp": Tool("scp(1) -F ssh_config, -D sftp_server_path", (
        _r("-F -D", "run", "value", "runs a local program or loads an ssh config that can"),
    ), _s("-c -D -F -i -J -l -o -P -S -X"), options_until=0),
    "sftp": Tool("sftp(1) -F ssh_config, -D sftp_server_command, -b batchfile", (
        _r("-F -D -b", "run", "value", "runs a local program or commands that can"),
    ), _s("-B -b -c -D -F -i -J -l -o -P -R -S -s -X"), options_until=0),
    # rsync(1): copying is what its key names; --remove-source-files and
    # --delete* delete files, --log-file/--write-batch/--only-write-batch write
    # a file outside the destination. (-e/--rsh/--rsync-path are RF113.)
    "rsync": Tool("rsync(1) --remove-source-files, --delete*, --log-file, --write-batch", (
        _r("--remove-source-files --delete --del --delete-before --delete-during "
           "--delete-delay --delete-after --delete-excluded --delete-missing-args",
           "delete", "self", "deletes files"),
        _r("--log-file --write-batch --only-write-batch", "write", "value", "writes the file"),
    ), _s("-e --rsh --rsync-path --log-file --write-batch --only-write-batch --read-batch "
          "-f --filter --exclude --include --exclude-from --include-from --files-from "
          "-T --temp-dir --compare-dest --copy-dest --link-dest -B --block-size "
          "--max-size --min-size --partial-dir --chmod --chown --out-format --password-file "
          "--port --timeout --bwlimit"),
        _s("--remove-source-files --delete --del --delete-before --delete-during "
           "--delete-delay --delete-after --delete-excluded --delete-missing-args "
           "--log-file --log-file-format --write-batch --only-write-batch --read-batch")),
    # GNU tar(1): writing archives and extracting is what its key names;
    # --remove-files deletes the files it archived; --index-file, -g/
    # --listed-incremental and --volno-file write other files; --rsh-command
    # and --rmt-command run programs. (--to-command, -I ... are RF113.)
    "tar": Tool("tar(1) --remove-files, --index-file, -g, --volno-file, --rsh-command", (
        _r("--remove-files", "delete", "self", "deletes the files after archiving them"),
        _r("--index-file -g --listed-incremental --volno-file", "write", "value",
           "writes the file"),
        _r("--rsh-command --rmt-command", "run", "value", "runs the given program"),
    ), _s("-f --file -C --directory -b -g --listed-incremental -I --use-compress-program "
          "-F --info-script -K -L -N -T -X -V --index-file --volno-file --rsh-command "
          "--rmt-command --to-command --checkpoint-action --exclude --transform"),
        _s("--remove-files --index-file --listed-incremental --volno-file --rsh-command "
           "--rmt-command --recursion --record-size --remove")),
    # zip(1): -m moves files into the archive (deletes the originals).
    "zip": Tool("zip(1) -m, --move", (
        _r("-m --move", "delete", "self", "deletes the original files (moves them into "
           "the archive)"),
    ), _s("-b -n -t -tt -x -i -O -TT -P -Z -s --unzip-command --out --exclude --include"),
        _s("--move --must-match")),
    # man(1): -C/--config-file FILE (its DEFINE lines name the programs man
    # runs). (-P/--pager and -H/--html are RF113.)
    "man": Tool("man(1) -C, --config-file=FILE", (
        _r("-C --config-file", "run", "value", "reads a config file that names the "
           "programs man runs"),
    ), _s("-C --config-file -P --pager -M --manpath -S -s --sections -m --systems "
          "-L --locale -p --preprocessor -E --encoding -R --recode -T --troff-device "
          "-e --extension -r --prompt"),
        _s("--config-file --pager --html")),
    # coreutils dd(1): of=FILE writes FILE.
    "dd": Tool("dd(1) OPERANDS: of=FILE", (
        _r("", "write", "prefix:of", "writes the file"),
    ), style="operands"),
    # yq(1): -i, --inplace (mikefarah yq) / -i, --in-place (kislyuk yq, the
    # Debian package) update the files in place.
    "yq": Tool("yq(1) -i, --inplace / --in-place", (
        _r("-i --inplace --in-place", "write", "operands", "edits the files in place"),
    ), _s("-o --output-format -p --input-format -I --indent --from-file --arg --argjson"),
        _s("--inplace --in-place --indentless-lists")),
    # git grep: -O[<pager>], --open-files-in-pager[=<pager>] runs the pager
    # (any command) on the matching files (git-grep(1)).
    "git grep": Tool("git-grep(1) -O[<pager>], --open-files-in-pager[=<pager>]", (
        _r("-O --open-files-in-pager", "run", "self", "runs a pager program on the "
           "matching files"),
    ), _s("-e -f -A -B -C -m --max-count --max-depth --threads --context --after-context "
          "--before-context"),
        _s("--open-files-in-pager --or --only-matching")),
    "git log": _GIT_SHOW, "git show": _GIT_SHOW, "git diff": _GIT_SHOW,
    "git whatchanged": _GIT_SHOW, "git diff-tree": _GIT_SHOW, "git diff-index": _GIT_SHOW,
    "git diff-files": _GIT_SHOW, "git range-diff": _GIT_SHOW,
    # git-format-patch(1): -o <dir>, --output-directory; git-archive(1): -o, --output.
    "git format-patch": Tool("git-format-patch(1) -o, --output-directory; --output", (
        _GIT_OUTPUT,
        _r("-o --output-directory", "write", "value", "writes the patch files into the "
           "directory"),
    ), _GIT_DIFF_VALUES | _s("-o --output-directory"), _GIT_DIFF_LONGS |
        _s("--output-directory")),
    "git archive": Tool("git-archive(1) -o <file>, --output=<file>", (
        _r("-o --output", "write", "value", "writes the archive to the file"),
    ), _s("-o --output --format --prefix --remote --exec --add-file"),
        _s("--output --format --prefix --remote --exec --add-file")),
    # git-send-email(1): --smtp-server=/path runs it as sendmail; --to-cmd,
    # --cc-cmd, --header-cmd, --sendmail-cmd run commands.
    "git send-email": Tool("git-send-email(1) --smtp-server, --to-cmd, --cc-cmd, --header-cmd", (
        _r("--to-cmd --cc-cmd --header-cmd --sendmail-cmd", "run", "value",
           "runs the command"),
    ), _s("--to-cmd --cc-cmd --header-cmd --sendmail-cmd --smtp-server --to --cc --from"),
        _s("--to-cmd --cc-cmd --header-cmd --sendmail-cmd --smtp-server")),
}
from .effects_git import GIT_TOOLS  # noqa: E402  (git's destructive forms, RF132)
from .effects_code import CODE_TOOLS  # noqa: E402  (values that are code, RF131/RF133)
from .effects_tools import (RUNNER_ALIASES, RUNNER_TOOLS,  # noqa: E402  (test runners,
                            MODULE_TOOLS, python_module)   # build tools, their config)
TOOLS.update(GIT_TOOLS)
TOOLS.update(CODE_TOOLS)
TOOLS.update(RUNNER_TOOLS)

# gawk(1) -i inplace / --include=inplace edits its operand files in place.
INPLACE_AWK = frozenset({"awk", "gawk"})
ALIASES = {"mariadb": "mysql", "gdb-multiarch": "gdb", "gmake": "make", "netcat": "nc", "nc.traditional": "nc", "nc.openbsd": "nc", "gsed": "sed",
           "ssh-keyscan": "", "slogin": "ssh", **RUNNER_ALIASES}
KIND_CODES = {"write": "RF131", "delete": "RF132", "run": "RF133"}


def tool_for(name: str, sub: str = "") -> Tool | None:
    """The row set for a program basename (and a git subcommand)."""
    if sub:
        row = TOOLS.get(f"{name} {sub}")
        if row is not None:
            return row
    return TOOLS.get(ALIASES.get(name, name))


PROGRAMS = frozenset(k.split()[0] for k in TOOLS) | frozenset(a for a in ALIASES if ALIASES[a]) \
    | INPLACE_AWK


@lru_cache(maxsize=4096)
def effect_program(name: str) -> bool:
    """Can this program's options have effects this table lists? (`python -m
    pytest` and `python -m cProfile` are read with MODULE_TOOLS.)"""
    if name in PROGRAMS:
        return True
    found = interp_for(name)
    return found is not None and found[0] == "python"
