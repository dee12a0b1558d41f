#!/usr/bin/env bash
# A short demo of check + run. Invoked by `make demo`.
set -uo pipefail
cd "$(dirname "$0")/.."
rf=.venv/bin/ringfence
say() { printf '\n\033[1m$ %s\033[0m\n' "$*"; }
say "ringfence check 'longbridge news FIG.US 2>&1 | head -30'"
$rf check 'longbridge news FIG.US 2>&1 | head -30'
