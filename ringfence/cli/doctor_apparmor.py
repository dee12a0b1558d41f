"""`doctor` and AppArmor's user-namespace restriction (Ubuntu >= 23.10), issue 23.

With ``kernel.apparmor_restrict_unprivileged_userns = 1`` an unconfined program
may not create a user namespace with capabilities, and bwrap needs one. The
safest fix is not to turn that protection off for every program on the machine
(the sysctl), but to give *bwrap alone* a profile that allows it, in the style of
Ubuntu's own ``bwrap-userns-restrict``: bwrap may create the namespace, and what it
runs is confined to a child profile with no capability and no further namespace.

``ringfence doctor --fix apparmor`` (root) writes that profile to
``/etc/apparmor.d/ringfence-bwrap``, loads it with ``apparmor_parser -r``, and
re-runs a trial sandbox. It never changes the sysctl.
"""

from __future__ import annotations

import os
import shutil
import subprocess

PROFILE_NAME = "ringfence-bwrap"
PROFILE_DIR = "/etc/apparmor.d"
SYSCTL = "kernel.apparmor_restrict_unprivileged_userns"


def profile_path(directory: str = PROFILE_DIR) -> str:
    return os.path.join(directory, PROFILE_NAME)


def profile_text(bwrap: str) -> str:
    """The profile for the bwrap at ``bwrap`` (its real path: AppArmor attaches by it)."""
    path = os.path.realpath(bwrap)
    if any(c in path for c in ' \t\n"{}[]*?^,#'):
        raise ValueError(f"bwrap path {path!r} cannot be named in an AppArmor profile")
    child = f"{PROFILE_NAME}-child"
    return f"""\
# Written by `ringfence doctor --fix apparmor`: lets bubblewrap ({path}) create the
# user namespace its sandbox needs while {SYSCTL} = 1,
# without turning that protection off for every program (the style of Ubuntu's
# bwrap-userns-restrict). Remove this file and run `apparmor_parser -R` on it to undo.
abi <abi/4.0>,
include <tunables/global>

profile {PROFILE_NAME} {path} flags=(attach_disconnected,mediate_deleted) {{
  allow capability,
  allow file rwlkm /{{**,}},
  allow network,
  allow unix,
  allow ptrace,
  allow signal,
  allow mqueue,
  allow io_uring,
  allow userns,
  allow mount,
  allow umount,
  allow pivot_root,
  allow dbus,
  # Whatever bwrap runs is confined to the child profile: no capability, no
  # further user namespace (ringfence also passes --disable-userns).
  allow px /** -> {child},

  include if exists <local/{PROFILE_NAME}>
}}

profile {child} flags=(attach_disconnected,mediate_deleted) {{
  allow file rwlkmix /{{**,}},
  allow network,
  allow unix,
  allow ptrace,
  allow signal,
  allow mqueue,
  allow io_uring,
  allow mount,
  allow umount,
  allow pivot_root,
  allow dbus,
  audit deny capability,
  audit deny userns,

  include if exists <local/{child}>
}}
"""


def fix_hint(bwrap: str | None) -> str:
    """The fix doctor names for a restricted host, safest first."""
    who = bwrap or "/usr/bin/bwrap"
    return (f"sudo ringfence doctor --fix apparmor (installs an AppArmor profile that "
            f"lets {who} alone create user namespaces, like Ubuntu's bwrap-userns-restrict; "
            f"the protection stays on for every other program). Last resort, for the "
            f"whole machine: sysctl -w {SYSCTL}=0")


def installed(directory: str = PROFILE_DIR) -> bool:
    return os.path.isfile(profile_path(directory))


def fix(bwrap: str | None, *, directory: str = PROFILE_DIR,
        parser: str | None = None) -> tuple[bool, str]:
    """Write and load the profile, then try a sandbox. (ok, what happened)."""
    from ringfence.compiler.host import trial_sandbox

    if not bwrap:
        return False, "bwrap was not found on PATH: install bubblewrap first"
    if os.geteuid() != 0:
        return False, "loading an AppArmor profile needs root: sudo ringfence doctor --fix apparmor"
    parser = parser or shutil.which("apparmor_parser") or "/sbin/apparmor_parser"
    if not os.access(parser, os.X_OK):
        return False, "apparmor_parser was not found (apt-get install apparmor)"
    try:
        text = profile_text(bwrap)
    except ValueError as exc:
        return False, str(exc)
    path = profile_path(directory)
    tmp = path + ".tmp"
    try:
        with open(tmp, "w", encoding="utf-8") as fh:
            fh.write(text)
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except OSError as exc:
        return False, f"cannot write {path}: {exc.strerror}"
    load = subprocess.run([parser, "-r", path], capture_output=True, text=True, timeout=60,
                          stdin=subprocess.DEVNULL)
    if load.returncode != 0:
        return False, (f"wrote {path} but apparmor_parser could not load it: "
                       f"{(load.stderr or load.stdout).strip()[:300]}")
    ok, err = trial_sandbox(bwrap)
    if not ok:
        return False, f"loaded {path}, but a trial sandbox still fails: {err[:300]}"
    return True, f"loaded {path}; a trial sandbox now starts ({SYSCTL} left as it was)"
