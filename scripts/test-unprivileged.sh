#!/usr/bin/env bash
# Run the sandbox tests a second time as an unprivileged user (SPEC §7).
# As root, create the user if needed. As a normal user, the main run already was
# unprivileged, so there is nothing more to do.
#
# The checkout may sit where that user cannot go (a clone under a 0700 /root, or in
# a `mktemp -d`). Then the tests run from a copy the user can read, made in a fresh
# directory under ${TMPDIR:-/tmp} and removed afterwards (issue 23); it says so.
set -euo pipefail
cd "$(dirname "$0")/.."
user=${RINGFENCE_TEST_USER:-rftest}
if [[ $(id -u) != 0 ]]; then
  echo "test-unprivileged: already running as $(id -un); the main run covered it." >&2
  exit 0
fi
scripts/test-user.sh
home=$(getent passwd "$user" | cut -d: -f6)
as_user() { su "$user" -s /bin/bash -c "$1"; }

src=$PWD
args=("$@")
copy=""
cleanup() { if [[ -n $copy ]]; then rm -rf "$copy"; fi; }
trap cleanup EXIT
if ! as_user "cd '$src' && test -r pyproject.toml && test -r tests/conftest.py" >/dev/null 2>&1; then
  copy=$(mktemp -d "${TMPDIR:-/tmp}/ringfence-unpriv.XXXXXX")
  chmod 755 "$copy"
  dest=$copy/ringfence
  mkdir "$dest"
  echo "test-unprivileged: $user cannot read $src; running the sandbox tests from a copy" \
       "in $dest (removed afterwards)" >&2
  # The sources and tests, without the venvs, git objects or caches. The venv is
  # copied on its own below (its interpreter may still be reachable).
  tar -C "$src" --exclude=./.venv --exclude=./.venv-user --exclude=./.git \
      --exclude=__pycache__ --exclude=.pytest_cache --exclude=.hypothesis -cf - . \
    | tar -C "$dest" -xf -
  if [[ -d $src/.venv ]]; then
    cp -a "$src/.venv" "$dest/.venv"
    # The editable install names the original checkout: point it at the copy.
    for pth in "$dest"/.venv/lib/python3*/site-packages/__editable__.*.pth; do
      [[ -f $pth ]] && printf '%s\n' "$dest" >"$pth"
    done
  fi
  # ../shared (the corpus) sits beside the checkout: beside the copy too, if readable.
  if [[ -d $src/../shared ]]; then
    ln -s "$(cd "$src/../shared" && pwd)" "$copy/shared"
  fi
  chmod -R a+rX "$copy"
  # Paths given inside the original checkout name the same files in the copy.
  for i in "${!args[@]}"; do
    [[ ${args[$i]} == "$src"/* ]] && args[$i]=$dest/${args[$i]#"$src"/}
  done
  cd "$dest"
fi

# The main venv's interpreter may live where the user cannot reach it (pyenv under
# a 0700 /root, say). Then build a second venv from an interpreter every user can
# execute; it installs the same checkout in editable mode.
venv=.venv
if ! as_user "cd '$PWD' && $venv/bin/python -c 'import ringfence'" >/dev/null 2>&1; then
  venv=.venv-user
  py=""
  for cand in /usr/bin/python3 /usr/local/bin/python3 /usr/bin/python3.12 /usr/bin/python3.13; do
    if [[ -x $cand ]] && as_user "$cand -c 'import sys, venv; sys.exit(sys.version_info < (3, 11))'" 2>/dev/null; then
      py=$cand; break
    fi
  done
  if [[ -z $py ]]; then
    echo "test-unprivileged: no Python >= 3.11 that $user can execute; install python3 (Debian: apt-get install python3 python3-venv)." >&2
    exit 1
  fi
  if ! as_user "cd '$PWD' && $venv/bin/python -c 'import ringfence'" >/dev/null 2>&1; then
    echo "test-unprivileged: building $venv from $py for $user" >&2
    rm -rf "$venv"
    "$py" -m venv "$venv"
    if ! "$venv/bin/python" -m pip install --disable-pip-version-check \
        -e '.[test,mcp]' --config-settings editable_mode=compat >"$venv/install.log" 2>&1; then
      cat "$venv/install.log" >&2
      echo "test-unprivileged: installing into $venv failed" >&2
      exit 1
    fi
    # The editable install must not leave root-owned build junk the user would trip on.
    chmod -R a+rX "$venv"
  fi
fi
echo "test-unprivileged: running the sandbox tests as $user ($PWD/$venv)" >&2
# The checkout stays root-owned and read-only for the user: no bytecode, no cache.
quoted=""
((${#args[@]})) && quoted=$(printf '%q ' "${args[@]}")   # each survives su -c as one word
rc=0
su "$user" -s /bin/bash -c "cd '$PWD' && HOME='$home' PYTHONDONTWRITEBYTECODE=1 \
  RINGFENCE_TEST_UNPRIVILEGED=1 $venv/bin/python -m pytest -m sandbox -p no:cacheprovider $quoted" \
  || rc=$?
exit "$rc"
