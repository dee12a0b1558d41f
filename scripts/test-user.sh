#!/usr/bin/env bash
# Make sure the unprivileged test user exists before any test needs it (SPEC §7).
# The root half of the suite (the bash oracle runs as this user) and
# scripts/test-unprivileged.sh both use it. As a normal user there is nothing to do.
set -euo pipefail
user=${RINGFENCE_TEST_USER:-rftest}
[[ $(id -u) == 0 ]] || exit 0
if ! id "$user" >/dev/null 2>&1; then
  echo "test-user: creating the unprivileged test user $user" >&2
  useradd --create-home --shell /bin/bash "$user"
fi
