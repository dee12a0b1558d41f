# ringfence bash oracle: driver prelude (test-only; see tests/differential/oracle.py).
#
# This file is the *start* of a generated script. oracle.py appends one line
#   __rf_run INDEX $'COMMAND'
# per command, then bash runs the whole batch in one process inside the sandbox.
# Nothing real may run: every builtin either is disabled (`enable -n`, so its
# name falls through to command_not_found_handle) or is shadowed by a recording
# function; PATH names a directory that does not exist, so every program name
# falls through to the handler too. The handler records the argv bash would have
# executed (after expansion and quote removal) in a file per record, listed in
# execution order on fd 99.
#
# Limits (pids, memory, file size, wall time) are set by the harness BEFORE this
# shell starts: a recording handler is invoked in a forked child, so a command
# that loops or recurses spawns processes; without limits that is a fork bomb.

# An *empty* PATH would make bash look in the current directory and exec files
# from there; a directory that does not exist makes every lookup fail instead.
PATH=/rf/no-such-dir
__rf_status=${__rf_status:-0}   # set by the harness: 0 or 1 (two passes)
__rf_cap=${__rf_cap:-200}       # records per command before it is killed (loops)
__rf_timeout=${__rf_timeout:-5} # seconds per command before it is abandoned
__rf_work=${__rf_work:-/rf/work}    # set by the harness: the workspace as seen inside
__rf_phase=setup
__rf_i=-1
__rf_n=0
exec 99>>"$__rf_work/records"
builtin cd "$__rf_work/cwd" || exit 125
# The driver reaps leftovers with kill(-1), which outside a pid namespace would
# signal every process of this user on the host. Refuse unless pid 1 is
# bwrap's init, i.e. this shell lives in the sandbox's own pid namespace.
builtin read -r __rf_init </proc/1/comm
[[ $__rf_init == bwrap ]] || exit 125
# An empty environment: nothing a sandbox passed through reaches a command.
builtin unset $(builtin compgen -e)
PATH=/rf/no-such-dir
# Quote removal of $'\u00e9' depends on the locale; agents run in UTF-8 ones.
# Assigning LC_ALL switches bash's own locale; it is not exported.
LC_ALL=C.UTF-8

# One record: the argv, NUL-separated, in a file of its own, plus a short
# `R index file` entry in the ordered stream on fd 99. Argument text never goes
# through the shared stream: printf may split a write at a newline, and a
# concurrent pipeline stage could then interleave inside the record.
__rf_rec() {
  if [[ $__rf_phase == parse ]]; then
    # A record while merely *defining* the command as a function body means the
    # command closed the body early (a stray `}`): the harness discards it.
    builtin printf '%s\0' X "$__rf_i" >&99
    builtin return 1
  fi
  __rf_f=$__rf_i.$BASHPID.$((__rf_n += 1))
  builtin printf '%s\0' "$@" >"$__rf_work/rec/$__rf_f"
  builtin printf '%s\0' R "$__rf_i" "$__rf_f" >&99
  # The record files also count records across processes (handler children
  # cannot update the parent's variables). A command over the cap is a loop:
  # kill every process in the sandbox but this one (the loop may live in any
  # pipeline stage), then this one. The batch shell dies too; the harness
  # re-runs the commands after this one in a fresh batch.
  __rf_t=("$__rf_work/rec/$__rf_i".*)
  if (( ${#__rf_t[@]} > __rf_cap )); then
    builtin printf '%s\0' C "$__rf_i" >&99
    builtin kill -9 -1
    builtin kill -9 "$BASHPID"
  fi
  builtin return "$__rf_status"
}

command_not_found_handle() { __rf_rec "$@"; }

# The builtins the driver itself needs stay enabled but are shadowed by
# recording functions (functions win over builtins in lookup), so a command's
# own `printf`, `eval`, `kill` or `return` is recorded, not run. The driver
# reaches the real ones with `builtin NAME`; `builtin` itself stays real, which
# is the one way a command can reach a builtin unrecorded (documented limit).
printf() { __rf_rec printf "$@"; }
eval()   { __rf_rec eval "$@"; }
kill()   { __rf_rec kill "$@"; }
read()   { __rf_rec read "$@"; }
return() { __rf_rec return "$@"; }

__rf_run() {
  __rf_i=$1
  __rf_n=0
  builtin printf '%s\0' A "$1" >&99     # attempted: blame it if the shell dies
  # Parse check without executing: define the command as a function body. A
  # syntax error in one command is reported for that command only. The `:`
  # keeps the body non-empty for a blank or comment-only command.
  __rf_phase=parse
  if ! builtin eval $'__rf_p() {\n:\n'"$2"$'\n}' 2>/dev/null; then
    builtin printf '%s\0' P "$1" >&99
    builtin return 0
  fi
  __rf_phase=run
  # Own subshell per command: assignments, traps and `cd` never leak into the
  # next one. stdin is /dev/null so nothing can read the batch script. No
  # recorded command prints anything, so whatever reaches stdout or stderr is
  # a bash diagnostic (a failed `< file`, even under `2>&1`). The
  # subshell is a process substitution feeding `read -t`: read sees EOF when the
  # command is done, or gives up after __rf_timeout seconds (a fork bomb stuck
  # at the pids limit); the kill below then ends whatever is left.
  if builtin read -r -t "$__rf_timeout" __rf_x < <(
      builtin eval "$2" </dev/null >"$__rf_work/err/$1" 2>&1
    ) || (( $? <= 128 )); then
    builtin printf '%s\0' E "$1" 0 >&99
  else
    builtin printf '%s\0' T "$1" >&99
  fi
  # Reap what the command left behind (background jobs, a fork bomb at the pids
  # limit): kill(-1) signals every process of ours in this pid namespace except
  # this shell and bwrap's init. Twice, for children forked during the first.
  builtin kill -9 -1 2>/dev/null
  builtin kill -9 -1 2>/dev/null
}

# Everything else goes: each name now reaches command_not_found_handle.
builtin enable -n $(builtin compgen -b | while builtin read -r __rf_b; do
  case $__rf_b in builtin|printf|eval|kill|read|return|enable|compgen) ;; *) builtin printf '%s ' "$__rf_b" ;; esac
done) compgen
builtin enable -n enable
__rf_phase=run
builtin printf '%s\0' S -1 >&99        # the sandbox and the prelude are up
