#!/usr/bin/env bash
# Run the sandbox tests a second time as an unprivileged user (SPEC §7).
# As root, create the user if needed. As a normal user, the main run already was
# unprivileged, so there is nothing more to do.
set -euo pipefail
cd "$(dirname "$0")/.."
user=${RINGFENCE_TEST_USER:-rftest}
if [[ $(id -u) != 0 ]]; then
  echo "test-unprivileged: already running as $(id -un); the main run covered it." >&2
  exit 0
fi
id "$user" >/dev/null 2>&1 || useradd --create-home --shell /bin/bash "$user"
home=$(getent passwd "$user" | cut -d: -f6)
echo "test-unprivileged: running the sandbox tests as $user" >&2
# The checkout stays root-owned and read-only for the user: no bytecode, no cache.
exec su "$user" -s /bin/bash -c "cd '$PWD' && HOME='$home' PYTHONDONTWRITEBYTECODE=1 \
  RINGFENCE_TEST_UNPRIVILEGED=1 .venv/bin/python -m pytest -m sandbox -p no:cacheprovider $*"
