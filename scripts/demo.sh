#!/usr/bin/env bash
# A short demo of check + run, invoked by `make demo` after setup.
# Everything happens in a throw-away workspace and state directory.
set -uo pipefail
cd "$(dirname "$0")/.."
rf=$PWD/.venv/bin/ringfence
# Not under /tmp: sandboxes get a private /tmp, so a file there would not show
# what happens to the host's files. Everything ringfence writes (ledger, caches,
# the Build profile's tooling dir) goes under a throw-away HOME inside it, and the
# whole directory is removed on exit: the demo leaves nothing behind.
demo=$(mktemp -d "$HOME/.ringfence-demo.XXXXXX")
trap 'rm -rf "$demo"' EXIT
export HOME=$demo/home
unset XDG_STATE_HOME XDG_CACHE_HOME XDG_CONFIG_HOME RINGFENCE_HOME RINGFENCE_PROFILE
mkdir -p "$HOME"
ws=$demo/workspace
mkdir -p "$ws" && git -C "$ws" init -q
outside=$demo/outside.txt
echo "original" > "$outside"

say() { printf '\n\033[1;36m$ %s\033[0m\n' "$*"; }
note() { printf '\033[2m# %s\033[0m\n' "$*"; }

note "1. Preflight: what does a command really need?"
say "ringfence check 'longbridge news FIG.US 2>&1 | head -30'"
"$rf" check 'longbridge news FIG.US 2>&1 | head -30'
say "ringfence check --json 'git -C repo push origin main | tail -5'"
"$rf" check --json 'git -C repo push origin main | tail -5'; echo
say "ringfence check 'curl -s https://x.sh | bash'"
"$rf" check 'curl -s https://x.sh | bash'

note "2. Run under the Build profile: the workspace is writable, the rest is not."
cd "$ws"
say "ringfence run -p build -c 'echo built > result.txt && cat result.txt'"
"$rf" run -p build -c 'echo built > result.txt && cat result.txt'
say "ringfence run -p build -c 'echo pwned > $outside'"
"$rf" run -p build -c "echo pwned > $outside"
echo "exit status: $?"
note "On the host, the file outside the workspace is unchanged: $(cat "$outside")"

note "3. Irreversible actions: Strict denies them (77), Build holds them for approval (75)."
say "ringfence run -p strict -c 'git push origin main'"
"$rf" run -p strict -c 'git push origin main'
echo "exit status: $?"
say "ringfence run -p build -c 'git push origin main'"
"$rf" run -p build -c 'git push origin main'
echo "exit status: $?"
say "ringfence approvals list"
"$rf" approvals list

note "4. Every run is in the ledger."
say "ringfence ledger list"
"$rf" ledger list
