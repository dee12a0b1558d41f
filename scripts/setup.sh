#!/usr/bin/env bash
# Set up everything ringfence needs on a fresh machine, idempotently:
#   - bubblewrap from Debian/Ubuntu packages (when running as root)
#   - a virtualenv in .venv with ringfence and its test dependencies
set -euo pipefail
cd "$(dirname "$0")/.."
VENV=${VENV:-.venv}

need=()
command -v bwrap >/dev/null 2>&1 || need+=(bubblewrap)
if ((${#need[@]})); then
  if [[ $(id -u) == 0 ]] && command -v apt-get >/dev/null 2>&1; then
    echo "setup: installing ${need[*]} with apt-get" >&2
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq >/dev/null
    apt-get install -y -qq "${need[@]}" >/dev/null
  else
    echo "setup: missing ${need[*]}; install them (e.g. 'sudo apt-get install ${need[*]}')." >&2
    echo "setup: ringfence refuses to run sandboxed commands without bwrap (exit 125)." >&2
  fi
fi

PYTHON=${PYTHON:-python3}
if ! "$PYTHON" -c 'import sys; sys.exit(sys.version_info < (3, 11))' 2>/dev/null; then
  echo "setup: ringfence needs Python >= 3.11 (found: $("$PYTHON" --version 2>&1))" >&2
  exit 1
fi
if [[ ! -x $VENV/bin/python ]]; then
  echo "setup: creating $VENV" >&2
  "$PYTHON" -m venv "$VENV"
fi
stamp=$VENV/.ringfence-installed
if [[ ! -f $stamp || pyproject.toml -nt $stamp ]]; then
  echo "setup: installing ringfence and test dependencies into $VENV" >&2
  log=$VENV/install.log
  # compat mode: a plain path entry, so `ringfence` starts without an import hook.
  # pip's output goes to a log, shown only when the install fails.
  if ! { "$VENV/bin/python" -m pip install --disable-pip-version-check --upgrade pip &&
         "$VENV/bin/python" -m pip install --disable-pip-version-check \
             -e '.[test,mcp]' --config-settings editable_mode=compat; } >"$log" 2>&1; then
    cat "$log" >&2
    echo "setup: installing into $VENV failed (log above, kept in $log)" >&2
    exit 1
  fi
  touch "$stamp"
fi
# Bytecode for ringfence's own packages, written explicitly: the per-command paths
# (hook, run, check --json) must not recompile from source on every call, even
# where PYTHONDONTWRITEBYTECODE is set. Cheap when nothing changed.
"$VENV/bin/python" -m compileall -q -j 0 rfcore classifier profiles compiler ringfence >/dev/null
