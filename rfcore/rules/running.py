"""RF62x: faults and limits (issue 23): terminal, stage space, resource limits.

Split from ``backend.py`` (same family, same example conventions: the examples are
shell snippets run by tests/compiler/test_backend_rules.py).
"""

from . import Rule

RULES: tuple[Rule, ...] = (
    Rule(
        code="RF620", name="terminal-control-strings-removed",
        summary="control strings (OSC 52 clipboard, title, DCS) were removed from output to a terminal",
        explanation=(
            "A sandboxed command's output is relayed by ringfence. Written to a "
            "terminal, some escape sequences act on the person's machine rather than "
            "format text: OSC 52 writes the clipboard, OSC 0/2 set the window title, "
            "DCS passes sequences through tmux. ringfence removes these control "
            "strings (OSC, DCS, APC, PM, SOS) from what reaches a terminal and says "
            "how many; colours and cursor movement pass unchanged, output to a file or "
            "pipe is never touched, and the recorded output tails keep the raw bytes. "
            "The filter follows the terminal's own (VT500) parser: a C0 byte between "
            "ESC and the opener does not end the escape (`ESC \\x01 ]52;...` is still "
            "an OSC), CAN and SUB do; raw 8-bit C1 bytes (0x9D OSC, 0x90 DCS, 0x9B CSI) "
            "that continue no UTF-8 character are removed too."),
        bad=("script -qec \"ringfence run -p strict -- printf 'a\\033]52;c;cHduZWQ=\\007b'\" "
             "/dev/null >&2"),
        good="script -qec \"ringfence run -p strict -- printf 'a\\033[1mb'\" /dev/null >&2"),
    Rule(
        code="RF621", name="ca-bundle-hidden",
        summary="a CA-bundle variable names a path the sandbox hides; it stays hidden",
        explanation=(
            "The CA-bundle variables (SSL_CERT_FILE, SSL_CERT_DIR, REQUESTS_CA_BUNDLE, "
            "CURL_CA_BUNDLE, NODE_EXTRA_CA_CERTS, PIP_CERT, GIT_SSL_CAINFO) pass into "
            "every sandbox, so TLS works behind an intercepting proxy. When one names a "
            "file under a path the sandbox hides (its private /tmp, a read-denied "
            "dir), ringfence binds that single file back read-only, but only when it "
            "holds nothing but PEM certificates. A directory, or a file with anything "
            "else in it (a private key), stays hidden: a variable must never become a "
            "way around a read-deny. Point the variable at a certificate file."),
        bad='SSL_CERT_DIR="$HOME/.ssh" ringfence run -p strict -- true',
        good="SSL_CERT_DIR=/etc/ssl/certs ringfence run -p strict -- true"),
    Rule(
        code="RF622", name="stage-space-low",
        summary="the stage's filesystem has less free space than a run needs; nothing ran",
        explanation=(
            "A sandboxed run's writes are staged in an overlay whose upper dir lives in "
            "ringfence's state dir (`$RINGFENCE_HOME/stage`), so a run can write at most "
            "what is free there, whatever the workspace's own disk has. Below 16 MiB "
            "(or no free inodes) `run` refuses to start (exit 125) rather than cut the "
            "command's writes; the message names the filesystem. Free space there "
            "(`ringfence doctor` lists stages left behind) or point `RINGFENCE_HOME` at a "
            "filesystem with room."),
        bad=("mount -t tmpfs -o size=1500k tmpfs \"$HOME/st\" && "
             "RINGFENCE_HOME=\"$HOME/st\" ringfence run -p strict -- true   # as root"),
        good="ringfence run -p strict -- true"),
    Rule(
        code="RF623", name="stage-full",
        summary="the stage filled up during the run: a write was cut, nothing was applied",
        explanation=(
            "When the run ends with the stage's filesystem full, some write of the "
            "command failed with ENOSPC (the kernel tells the command, not ringfence), "
            "so a file in the upper dir may be cut short. Applying it would replace a "
            "good workspace file with a truncated one, so none of the run's writes are "
            "applied. The stage is removed to give the space back (a full state dir "
            "could not even take the run's ledger row), the note names the paths "
            "discarded, and the run is recorded as `limit` (outcome `stage_space`), "
            "never `completed`."),
        bad=("mount -t tmpfs -o size=20m tmpfs \"$HOME/st\" && RINGFENCE_HOME=\"$HOME/st\" "
             "ringfence run -p build -c 'head -c 30000000 /dev/zero > big'   # as root"),
        good="ringfence run -p build -c 'head -c 1000 /dev/zero > small'"),
    Rule(
        code="RF624", name="limit-hit",
        summary="the run reached its pids or memory limit; the whole sandbox was killed",
        explanation=(
            "`limits.pids` and `limits.memory_mb` hold for root too: when ringfence can "
            "make a cgroup (root, or a delegated cgroup v2 subtree) each run gets its "
            "own, with `pids.max` and a memory cap, so a fork bomb or a memory hog is "
            "stopped by the kernel before it reaches the host (RLIMIT_NPROC does not "
            "apply to root). Without one, RLIMIT_NPROC caps pids and ringfence counts "
            "the processes in the sandbox's pid namespace; memory is ringfence's own sum "
            "of the sandbox's resident memory and tmpfs use, a few looks a second, and "
            "a process's peak when the run ends. A hit ends the run: the sandbox is "
            "killed and the run is recorded as `limit` with outcome `pids` or `memory`."),
        bad=("printf 'extends = \"strict\"\\n[limits]\\npids = 32\\n' > p.toml; "
             "ringfence run -p ./p.toml -c 'for i in $(seq 100); do sleep 5 & done; wait'"),
        good=("printf 'extends = \"strict\"\\n[limits]\\npids = 32\\n' > p.toml; "
              "ringfence run -p ./p.toml -c 'for i in $(seq 4); do sleep 0.1 & done; wait'")),
    Rule(
        code="RF625", name="terminal-relayed",
        summary="stdin was a terminal: the command read it through a pipe ringfence relayed",
        explanation=(
            "A terminal given to a sandboxed command as its stdin is a file it could "
            "write escape strings to (OSC 52 sets the clipboard, a title, a hyperlink) "
            "around the output filter and the record, and ioctl. So the terminal is "
            "never handed over: the command reads a pipe that ringfence feeds from it, "
            "in the person's own mode (echo, line editing and Ctrl-C work as before; "
            "Ctrl-D is end of input). The command sees a pipe, not a terminal (`test -t "
            "0` is false). The run's record notes it, with the bytes relayed."),
        bad="ringfence run -p strict -c 'read line; echo $line'   # typed at a terminal",
        good="echo hi | ringfence run -p strict -c 'read line; echo $line'",
        known_problems=(
            "Programs that need a terminal on stdin (a password prompt with echo off, a "
            "full-screen editor) see a pipe and behave as they do in a pipeline.")),
    Rule(
        code="RF626", name="no-run-cgroup",
        summary="no cgroup for the run: pids are counted in its namespace, memory is "
                "ringfence's polled count of the sandbox's memory and sized tmpfs mounts",
        explanation=(
            "Where ringfence cannot make a cgroup for the run (an unprivileged user "
            "without a delegated cgroup v2 subtree, or root on a host whose cgroup "
            "filesystem is read-only or lacks the pids/memory controller), the limits "
            "are weaker and the run's record says so: `pids` is RLIMIT_NPROC (which "
            "counts all of the user's processes) plus a count of the sandbox's pid "
            "namespace; `memory_mb` is ringfence's own sum of the sandbox's resident "
            "memory and tmpfs use, looked at every 0.25 s (a fast allocator can overshoot "
            "between two looks) plus each process's peak when the run ends, with "
            "RLIMIT_AS at 4 x `memory_mb` per process as a backstop; every tmpfs the "
            "sandbox can write is sized too (`/tmp` half of `memory_mb`, `/dev/shm` a "
            "quarter, the others share the last quarter). Printed when root gets no "
            "cgroup (unexpected); recorded only for an unprivileged user (every run)."),
        bad="ringfence run -p strict -- true    # as a user without cgroup delegation",
        good="ringfence run -p strict -- true"),
    Rule(
        code="RF627", name="killed-run-writes-held",
        summary="a run ended by a limit or its timeout: none of its writes were applied; "
                "they are held for review",
        explanation=(
            "A run killed mid-way (pids, memory or stage limit, file size, the wall-clock "
            "timeout) may have left a file half-written. So nothing of it is applied to "
            "the workspace: every change is held in the run's stage, like a change to a "
            "file the host obeys, and `ringfence approvals show RUN_ID` shows the diffs; "
            "`ringfence approve RUN_ID` applies them, `ringfence deny RUN_ID` drops them. "
            "The record lists each path under `held` and `not_applied`. A run cut for "
            "stage space (RF623) is discarded instead: its stage filled the disk."),
        bad=("printf 'extends = \"strict\"\\n[limits]\\ntimeout = 1\\n' > ../p.toml; "
             "ringfence run -p ../p.toml -c 'echo x > half; sleep 30'"),
        good="ringfence run -p strict -c 'echo x > whole'"),
    Rule(
        code="RF628", name="file-size-limit-hit",
        summary="a write reached the file-size limit (limits.file_size_mb): the file is cut",
        explanation=(
            "`file_size_mb` is RLIMIT_FSIZE: a write past it fails with EFBIG (or the "
            "writer dies of SIGXFSZ), leaving the file exactly at the limit. A staged "
            "file of exactly that size, or a process killed by SIGXFSZ, ends the run as "
            "`limit` (outcome `file_size`); its writes are held, not applied (RF627)."),
        bad=("printf 'extends = \"strict\"\\n[limits]\\nfile_size_mb = 1\\n' > ../p.toml; "
             "ringfence run -p ../p.toml -c 'head -c 2000000 /dev/zero > big'"),
        good="ringfence run -p strict -c 'head -c 2000 /dev/zero > small'"),
    Rule(
        code="RF629", name="memory-backstop-maybe",
        summary="a command failed with an out-of-memory error under the per-process "
                "address-space backstop, the sandbox under its memory limit",
        explanation=(
            "Without a cgroup (RF626) the memory limit is ringfence's sum of what the "
            "sandbox holds; each process also gets RLIMIT_AS at 4 x `memory_mb` as a "
            "backstop. An allocation the backstop refuses outright (a process asking "
            "for more address space at once than that) fails inside the command "
            "(MemoryError, ENOMEM, bad_alloc) before any of it is in use, so no limit "
            "was passed: the run stays `failed` (its own status) and this note, "
            "printed and recorded, says the backstop may be why. A run whose memory "
            "really passed the limit is `limit`/`memory` (RF624)."),
        bad=("printf 'extends = \"strict\"\\n[limits]\\nmemory_mb = 64\\n' > ../p.toml; "
             "ringfence run -p ../p.toml -- python3 -c 'bytearray(2000 << 20)'"),
        good="ringfence run -p strict -- python3 -c 'bytearray(1 << 20)'"),
)
