"""CLI commands: doctor (and `run`, listed for --help; served by ringfence.fast.run).

`ringfence run` never reaches typer: ``ringfence/__main__.py`` routes it to the
fast path first. The entry here only exists so `ringfence --help` lists it.
"""

from __future__ import annotations

import json
import os
import socket
from dataclasses import asdict, dataclass

import typer

from . import options

MIN_BWRAP = (0, 8, 0)   # --disable-userns appeared in bubblewrap 0.8.0


@dataclass(frozen=True)
class Check:
    name: str
    ok: bool
    required: bool
    detail: str
    fix: str = ""


def _version_tuple(text: str | None) -> tuple[int, ...]:
    parts = []
    for piece in (text or "").split("."):
        digits = "".join(ch for ch in piece if ch.isdigit())
        if not digits:
            break
        parts.append(int(digits))
    return tuple(parts)


def _proxy_socket_check() -> Check:
    from ringfence.compiler.proxy import make_runtime_dir
    import shutil

    try:
        rdir = make_runtime_dir("ringfence-doctor-")
    except OSError as exc:
        return Check("proxy prerequisites", False, True, f"no private runtime dir: {exc}",
                     "make $XDG_RUNTIME_DIR or $TMPDIR writable")
    path = os.path.join(rdir, "proxy.sock")
    try:
        with socket.socket(socket.AF_UNIX) as s:
            s.bind(path)
        return Check("proxy prerequisites", True, True,
                     f"Unix socket in a private runtime dir works ({os.path.dirname(rdir)})")
    except OSError as exc:
        return Check("proxy prerequisites", False, True,
                     f"cannot bind a Unix socket at {path}: {exc}",
                     "point XDG_RUNTIME_DIR at a short, writable directory")
    finally:
        shutil.rmtree(rdir, ignore_errors=True)


def _apply_fix(what: str) -> None:
    from ringfence.rfcore.errors import UsageError

    if what != "apparmor":
        err = UsageError(f"doctor --fix knows 'apparmor', not {what!r}",
                         hint="sudo ringfence doctor --fix apparmor")
        err.exit_code = 2
        raise err
    from ringfence.compiler.host import probe

    from . import doctor_apparmor as aa
    from .output import console

    from rich.markup import escape

    ok, said = aa.fix(probe().bwrap)
    console.print(("[green]fixed:[/] " if ok else "[red]not fixed:[/] ") + escape(said),
                  highlight=False, markup=True)
    if not ok:
        raise typer.Exit(1)


def _claude_nesting_check() -> Check:
    """The --wrap hook inside Claude Code's own sandbox cannot start ringfence's."""
    from ringfence.hooks.portable import nesting
    from ringfence.rfcore.workspace import find_workspace

    ws, _ = find_workspace(env=os.environ)
    ok, detail = nesting(ws, os.environ.get("HOME") or os.path.expanduser("~"))
    return Check("Claude Code sandbox nesting", ok, True, detail,
                 "" if ok else "ringfence init claude-code (it removes the enabled sandbox "
                 "block from the files it writes), or set \"sandbox\": {\"enabled\": false} "
                 "in the file named")


def checks() -> list[Check]:
    from ringfence.staging import mount as staging
    from ringfence.rfcore.paths import state_dir
    from ringfence.compiler.host import probe

    h = probe(full=True)
    out: list[Check] = []
    if h.bwrap:
        out.append(Check("bwrap", True, True, f"{h.bwrap} (version {h.bwrap_version or '?'})"))
        good = _version_tuple(h.bwrap_version) >= MIN_BWRAP
        out.append(Check("bwrap version", good, True,
                         f"{h.bwrap_version or 'unknown'} (need >= 0.8.0 for --disable-userns)",
                         "" if good else "install bubblewrap >= 0.8.0 (e.g. from backports)"))
    else:
        out.append(Check("bwrap", False, True, "not found on PATH",
                         "apt-get install bubblewrap  (or: dnf install bubblewrap)"))
    from . import doctor_apparmor as aa

    restricted = h.apparmor_userns_restricted
    # Restricted but bwrap starts (its own profile: ours or Ubuntu's) is fine.
    aa_ok = restricted is not True or bool(h.userns and h.bwrap)
    out.append(Check(
        "AppArmor userns restriction", aa_ok, True,
        "kernel.apparmor_restrict_unprivileged_userns = "
        + {None: "absent (not Ubuntu's AppArmor)", True: "1", False: "0"}[restricted]
        + ("; bwrap has a profile that allows it" if restricted and aa_ok else ""),
        "" if aa_ok else aa.fix_hint(h.bwrap)))
    if not h.bwrap:
        # Dependent check: the trial sandbox needs bwrap, so it was not tried. Never
        # "ok" next to "bwrap FAIL".
        out.append(Check("user namespaces", False, True,
                         "not tested: the trial sandbox needs bwrap (see the bwrap line)",
                         "install bubblewrap first, then run ringfence doctor again"))
    else:
        out.append(Check(
            "user namespaces", bool(h.userns), True,
            ("a trial sandbox started" if h.userns else
             f"a trial sandbox failed: {h.bwrap_trial_error or h.userns_detail}"),
            "" if h.userns else
            "sysctl -w user.max_user_namespaces=15000 (and kernel.unprivileged_userns_clone=1 "
            "on Debian kernels that have it); see the AppArmor line on Ubuntu"))
    try:
        from ringfence.compiler.seccomp import build_filter
        build_filter(h.arch, deny_unix_sockets=True)
        gen_ok, gen_detail = True, f"filter generated for {h.arch}"
    except (ImportError, ValueError) as exc:
        gen_ok, gen_detail = False, f"no filter for {h.arch}: {exc}"
    out.append(Check("seccomp", bool(h.seccomp) and gen_ok, True,
                     ("kernel supports seccomp filters; " if h.seccomp else
                      "kernel lacks seccomp filters; ") + gen_detail,
                     "" if h.seccomp and gen_ok else
                     "use an x86-64 or aarch64 kernel built with CONFIG_SECCOMP_FILTER"))
    abi = h.landlock_abi or 0
    out.append(Check("Landlock", abi > 0, False,
                     f"ABI {abi}" if abi else "not available (optional; not used yet)",
                     "" if abi else "boot with lsm=...,landlock (optional)"))
    out.append(_proxy_socket_check())
    from .doctor_state import state_checks

    state = state_dir()
    own, usable = state_checks(Check, state)
    if usable:
        try:
            ok, detail = staging.trial(state)
        except OSError as exc:
            ok, detail = False, f"cannot mount a trial overlay in {state}: {exc.strerror}"
        out.append(Check("workspace staging (overlay)", ok, True, detail,
                         "" if ok else "Linux >= 5.11 with overlayfs; put RINGFENCE_HOME (or "
                         "XDG_STATE_HOME) on ext4, xfs, btrfs or tmpfs (RF640)"))
    else:
        out.append(Check("workspace staging (overlay)", False, True,
                         "not tested: the state dir is unusable (see the state dir line)",
                         "fix the state dir first, then run ringfence doctor again"))
    out.append(_credentials_check())
    out.append(_claude_nesting_check())
    return out + own


def _credentials_check() -> Check:
    """The credential locations of ringfence's table found on this host, and how the
    default profile's sandbox hides each (compiler/credreport.py)."""
    from ringfence.compiler.credreport import report
    from ringfence.rfcore.errors import RingfenceError

    try:
        found = report("build")
    except (RingfenceError, OSError) as exc:
        return Check("credentials hidden", False, False, f"could not compile build: {exc}")
    visible = [r for r in found if r["hidden"] == "VISIBLE"]
    detail = ("; ".join(f"{r['path']} ({r['what']}): {r['hidden']}" for r in found)
              or "no credential location of ringfence's table exists on this host")
    return Check("credentials hidden", not visible, False,
                 f"{len(found)} found under profile build: {detail}" if found else detail,
                 "" if not visible else "report it: a table location is visible in the sandbox")


def register(app: typer.Typer) -> None:
    """Add this module's commands to the app."""

    @app.command(context_settings={"allow_extra_args": True, "ignore_unknown_options": True})
    def run(ctx: typer.Context) -> None:
        """Run a command in the sandbox compiled from a profile.

        Example: ringfence run -p strict -- pytest -q   (see: ringfence run --help)
        """
        from ringfence.fast import main as fast_main
        raise typer.Exit(fast_main(["run", *ctx.args]))

    @app.command()
    def doctor(as_json: bool = options.json_flag("Print the checks as JSON."),
               fix: str = typer.Option("", "--fix", metavar="WHAT",
                                       help="Apply a fix: 'apparmor' installs an AppArmor "
                                            "profile for bwrap (root); never a sysctl.")
               ) -> None:
        """Check that this host can run ringfence sandboxes; name the fix for each failure.

        Example: ringfence doctor --json     sudo ringfence doctor --fix apparmor
        """
        if fix:
            _apply_fix(fix)
        results = checks()
        ok = all(c.ok for c in results if c.required)
        if as_json:
            typer.echo(json.dumps({"ok": ok, "checks": [asdict(c) for c in results]},
                                  indent=2))
        else:
            from rich.table import Table

            from .output import console

            table = Table(title="ringfence doctor")
            for col in ("check", "status", "detail", "fix"):
                table.add_column(col)
            for c in results:
                status = ("[green]ok[/]" if c.ok else
                          "[red]FAIL[/]" if c.required else "[yellow]missing[/]")
                table.add_row(c.name, status, c.detail, c.fix)
            console.print(table)
            console.print("[green]all required checks pass[/]" if ok else
                          "[red]some required checks failed: see the fix column[/]")
        raise typer.Exit(0 if ok else 1)
