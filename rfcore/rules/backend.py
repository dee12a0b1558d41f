"""RF6xx: compile and backend diagnostics.

The examples are shell snippets: tests/compiler/test_backend_rules.py runs each
one with bash in a fresh, empty workspace directory (the current directory),
with ``ringfence`` on PATH, and asserts that the bad example reports the code
and the good one does not. Keep them self-contained.
"""

from . import Rule

# A profile with one brokered credential, written beside the test workspace.
PROF = ('printf \'extends = "build"\\n[[credentials]]\\nname = "gh"\\nfrom = "env:RF_T"\\n'
        'domains = ["github.com"]\\n\' > "$HOME/../c.toml"; ')

# A profile file the examples write and use: strict, plus one changed line. It is
# written outside the workspace (the examples run in it): a profile file inside
# the workspace may only tighten its base (RF513).
_P = "printf 'extends = \"strict\"\\n{}\\n' > ../p.toml; "

RULES: tuple[Rule, ...] = (
    Rule(
        code="RF601", name="bwrap-missing",
        summary="bubblewrap is not installed or not on PATH; nothing was run",
        explanation=(
            "Every sandboxed profile runs the command under bubblewrap (bwrap). When "
            "bwrap cannot be found, ringfence refuses to run the command (exit 125) "
            "instead of running it without a sandbox: a boundary that cannot be set "
            "up means refusing to run, never running unprotected. Install the "
            "`bubblewrap` package and check the host with `ringfence doctor`."),
        bad="PATH=/nonexistent $(command -v ringfence) run -p strict -- true",
        good="ringfence run -p strict -- true"),
    Rule(
        code="RF602", name="sandbox-setup-failed",
        summary="bwrap could not set up the sandbox; nothing was run",
        explanation=(
            "bwrap started but failed before the command ran: typically user "
            "namespaces are disabled or restricted (Ubuntu's AppArmor "
            "`kernel.apparmor_restrict_unprivileged_userns`), or a mount failed. "
            "ringfence tells this apart from the command's own failure through "
            "bwrap's JSON status and exits 125; the command never ran. "
            "`ringfence doctor` names the fix."),
        bad=("mkdir bin; printf '#!/bin/sh\\nexit 1\\n' > bin/bwrap; chmod +x bin/bwrap; "
             "PATH=$PWD/bin:$PATH ringfence run -p strict -- true"),
        good="ringfence run -p strict -- sh -c 'exit 1'"),
    Rule(
        code="RF603", name="writable-symlink-escape",
        summary="a writable path resolves through a symlink to outside the workspace",
        explanation=(
            "Writable roots are bound with symlinks resolved. A writable entry "
            "(other than the workspace itself) that is a link to somewhere outside "
            "the workspace would silently widen write access, for example a planted "
            "`out -> ~/.config` link. ringfence refuses to compile such a profile "
            "(exit 125) instead of following the link."),
        bad=(_P.format("[filesystem]\\nwritable = [\\\"{workspace}\\\", \\\"{workspace}/out\\\"]")
             + "ln -s /etc out; ringfence run -p ../p.toml -- true"),
        good=(_P.format("[filesystem]\\nwritable = [\\\"{workspace}\\\", \\\"{workspace}/out\\\"]")
              + "mkdir out; ringfence run -p ../p.toml -- true")),
    Rule(
        code="RF604", name="protected-path-created",
        summary="the sandboxed command created an always-protected path",
        explanation=(
            "Paths the host later executes or obeys (`.git/hooks`, `.git/config`, "
            "`.envrc`, shell rc files, `.vscode/`, agent configuration) are "
            "write-protected. Missing ones get no placeholder on the host; instead "
            "they are journaled before the run, and one the run created is reported "
            "and moved to ringfence's quarantine directory, even after a SIGKILL "
            "of ringfence (the next invocation processes the journal)."),
        bad="ringfence run -p strict -- touch .envrc",
        good="ringfence run -p strict -- touch notes.txt",
        status="retired"),
    Rule(
        code="RF605", name="protected-path-replaced",
        summary="an existing protected path was replaced or removed during the run",
        explanation=(
            "Existing protected paths are re-bound read-only and their parents are "
            "pinned as mount points, so they cannot be renamed or deleted from "
            "inside. If one still changes identity (device, inode) during the run, "
            "for example because it was a symbolic link the sandbox could replace, "
            "the replacement is reported and moved to quarantine."),
        bad=("echo x > real-envrc; ln -s real-envrc .envrc; "
             "ringfence run -p strict -c 'rm .envrc; echo evil > .envrc'"),
        good="echo x > .envrc; ringfence run -p strict -c 'cat .envrc'",
        status="retired"),
    Rule(
        code="RF606", name="seccomp-unavailable",
        summary="no seccomp filter could be built for this host; run is degraded",
        explanation=(
            "The seccomp filter (no AF_UNIX sockets, no io_uring, mount, ptrace, "
            "bpf, keyctl, nested namespaces) is generated for x86-64 and aarch64. On "
            "another architecture the run proceeds with namespaces and mounts only, "
            "and says so on stderr and in the ledger rather than claiming a "
            "protection it does not have."),
        bad="ringfence run -p strict -- true   # on an architecture other than x86-64/aarch64",
        good="ringfence run -p strict -- true   # on x86-64 or aarch64"),
    Rule(
        code="RF607", name="proxy-failed",
        summary="the network proxy could not be started; nothing was run",
        explanation=(
            "Profiles with a network allowlist reach the network only through "
            "ringfence's proxy, which takes over the sandbox's 127.0.0.1 listener. "
            "If it cannot start (for example no private runtime directory can be "
            "made for the launcher, or no socket pair for the hand-off), the "
            "command is not run (exit 125): it would otherwise run with a network "
            "policy other than the one the profile states."),
        bad="XDG_RUNTIME_DIR=/proc ringfence run -p build -- true   # as root: no runtime dir",
        good="ringfence run -p build -- true"),
    Rule(
        code="RF608", name="timeout-killed",
        summary="the wall-clock timeout expired; the whole sandbox was killed",
        explanation=(
            "`--timeout` or the profile's `limits.timeout` bounds the run. When it "
            "expires, bwrap is killed and `--die-with-parent` takes the sandbox's "
            "init and with it every process in its pid namespace. The exit status "
            "is 124, as with timeout(1)."),
        bad="ringfence run -p strict --timeout 0.5 -- sleep 30",
        good="ringfence run -p strict --timeout 30 -- true"),
    Rule(
        code="RF609", name="workspace-missing",
        summary="the workspace is not an existing directory; nothing was run",
        explanation=(
            "The workspace is the writable project root and the working directory "
            "of the command. A workspace that does not exist cannot be bound, so "
            "the run is refused with exit 125."),
        bad="ringfence run -p strict -w ./no-such-dir -- true",
        good="mkdir sub; ringfence run -p strict -w ./sub -- true"),
    Rule(
        code="RF610", name="credential-env-withheld",
        summary="a credential-looking environment variable was not passed",
        explanation=(
            "The sandbox starts from an empty environment plus the profile's "
            "`env.pass` list. A name that looks like a credential (TOKEN, SECRET, "
            "PASSWORD, KEY, AUTH, ...) is passed only when it is also listed in "
            "`env.allow_credentials`, so a broad pattern never carries a secret in "
            "by accident. The variable is reported, never its value."),
        bad=(_P.format("[env]\\npass = [\\\"RF_DEMO_TOKEN\\\"]")
             + "RF_DEMO_TOKEN=t ringfence run -p ../p.toml -- true"),
        good=(_P.format("[env]\\npass = [\\\"RF_DEMO_TOKEN\\\"]\\n"
                        "allow_credentials = [\\\"RF_DEMO_TOKEN\\\"]")
              + "RF_DEMO_TOKEN=t ringfence run -p ../p.toml -- true")),
    Rule(
        code="RF611", name="writable-root-missing",
        summary="a writable path of the profile does not exist and was skipped",
        explanation=(
            "bwrap can only bind what exists, and ringfence never creates "
            "directories on the host on a profile's behalf (except the tooling "
            "cache dir). A writable entry that does not exist is skipped and "
            "reported, so a typo in a profile does not go unnoticed."),
        bad=(_P.format("[filesystem]\\nwritable = [\\\"{workspace}\\\", \\\"{workspace}/out\\\"]")
             + "ringfence run -p ../p.toml -- true"),
        good=(_P.format("[filesystem]\\nwritable = [\\\"{workspace}\\\", \\\"{workspace}/out\\\"]")
              + "mkdir out; ringfence run -p ../p.toml -- true")),
    Rule(
        code="RF612", name="sandbox-off",
        summary="the command ran directly on the host (--sandbox off); recorded",
        explanation=(
            "`--sandbox off` (profile `host`) is explicit full host access for one "
            "command. It is never a fallback: ringfence uses it only when asked, "
            "and every such run says so and is recorded as unsandboxed."),
        bad="ringfence run --sandbox off -- true",
        good="ringfence run -p strict -- true"),
    Rule(
        code="RF613", name="proxy-without-allowlist",
        summary="network mode 'proxy' with an empty allowlist: no network at all",
        explanation=(
            "A proxy that allows nothing is pointless, so no proxy and no relay are "
            "started and the sandbox has no network, as with mode 'none'. The note "
            "points out the probably unintended profile."),
        bad=(_P.format("[network]\\nmode = \\\"proxy\\\"\\nallow = []")
             + "ringfence run -p ../p.toml -- true"),
        good=(_P.format("[network]\\nmode = \\\"none\\\"")
              + "ringfence run -p ../p.toml -- true")),
    Rule(
        code="RF614", name="protected-path-symlink",
        summary="a protected path is a symbolic link; its target is protected",
        explanation=(
            "Mounts follow symbolic links, so a protected path that is a link "
            "protects its target; the link itself lives in a writable directory "
            "and is watched through the journal (a replacement is RF605)."),
        bad="echo x > real-envrc; ln -s real-envrc .envrc; ringfence run -p strict -- true",
        good="echo x > .envrc; ringfence run -p strict -- true",
        status="retired"),
    Rule(
        code="RF615", name="interrupted-run-recovered",
        summary="the journal of an interrupted run was processed",
        explanation=(
            "A ringfence process killed with SIGKILL cannot check its protected "
            "paths or remove its private runtime directory. Its journal stays "
            "behind, and the next ringfence run (or `ringfence doctor`) finishes "
            "the job: reports and quarantines what the sandbox created."),
        bad=("ringfence run -p strict -c 'touch .envrc; sleep 60' & pid=$!; "
             "while [ ! -e .envrc ]; do sleep 0.05; done; kill -9 $pid; wait $pid; "
             "ringfence run -p strict -- true"),
        good="ringfence run -p strict -c 'touch notes; sleep 0.1'; ringfence run -p strict -- true",
        status="retired"),
    Rule(
        code="RF616", name="workspace-too-broad",
        summary="the workspace is / or contains a home directory; nothing was run",
        explanation=(
            "The workspace is bound into the sandbox (writable in most profiles). When it "
            "is the root directory or contains a home ($HOME, or the account's home in "
            "the password database when HOME points elsewhere), that would show every "
            "secret of the home the credential table does not name, even read-only "
            "(Observe), and make shell rc files, ~/.local/bin and autostart entries "
            "writable: far more than the project an agent works on. ringfence refuses in "
            "every sandboxed profile (exit 125; exports exit 2); pick the project "
            "directory as the workspace."),
        bad='ringfence run -p strict -w "$HOME" -- true',
        good="ringfence run -p strict -w . -- true"),
    Rule(
        code="RF660", name="secret-link-outside-workspace",
        summary="a secret-named link points outside the workspace; it is not masked",
        explanation=(
            "Strict masks `.env*`, `*.pem`, `*.key` and `id_*` in the workspace. The "
            "walk that finds them never follows a symbolic link: a secret-named link "
            "is masked at its target only when the target, resolved inside the "
            "workspace, stays there (a mount over a link lands on its target). A "
            "link that points out of the workspace is neither followed nor masked, "
            "so what it points to is as readable as the profile leaves it; the note "
            "names it. Move the secret into the workspace, or add its real path to "
            "`read_deny`."),
        bad="ln -s /etc/hostname .env; ringfence run -p strict -- true",
        good="echo s > real.env; ln -s real.env .env; ringfence run -p strict -- true"),
    Rule(
        code="RF650", name="home-inside-writable-root",
        summary="the home lies inside a writable root, so it is not masked",
        explanation=(
            "Every built-in profile hides the home directory behind an empty tmpfs and "
            "lets only toolchain paths through. A writable root that contains the home "
            "(`writable = [\"~\"]`) must stay visible and writable, so the home cannot be "
            "masked under it; ringfence says so and still masks every location of its "
            "credential table inside it. Make a narrower directory writable instead."),
        bad=('printf \'extends = "build"\\n[filesystem]\\nwritable = ["~"]\\n\' > '
             '"$HOME/../wide.toml"; ringfence run -p "$HOME/../wide.toml" -- true'),
        good=('printf \'extends = "build"\\n\' > "$HOME/../narrow.toml"; '
              'ringfence run -p "$HOME/../narrow.toml" -- true')),
    Rule(
        code="RF651", name="allowed-home-path-links-elsewhere",
        summary="an allowlisted home path links into a home; not made readable",
        explanation=(
            "The masked home lets toolchain paths through (`~/.local/bin`, `~/.rustup`, "
            "...). Such a path that is a symbolic link into another part of any home, the "
            "account's password-database home included (`~/.local/bin -> ~/.ssh`), "
            "would bind that part back in: it is skipped, and "
            "the note names it. A link to another allowed path, or out of the home, is "
            "fine."),
        bad=('mkdir -p "$HOME/.local" "$HOME/private"; ln -s "$HOME/private" '
             '"$HOME/.local/bin"; ringfence run -p build -- true'),
        good='mkdir -p "$HOME/.local/bin"; ringfence run -p build -- true'),
    Rule(
        code="RF652", name="credential-source-unreadable",
        summary="a brokered credential's source gave no value, or lies where a sandbox "
                "writes; nothing was run",
        explanation=(
            "A `[[credentials]]` entry is read on the host when the run starts (`env:NAME` "
            "from ringfence's environment, `file:PATH`, or the output of `command:CMD`, "
            "run without a shell). An unset variable, a missing file, a failing command or "
            "an empty or multi-line value means the task would run without the credential "
            "it was promised: ringfence refuses to run (exit 125) and names the source. "
            "Nothing of a source may come from where a sandbox writes: a command runs "
            "from /, with PYTHONSAFEPATH=1 and a PATH without relative entries or entries "
            "in the workspace or a writable root; a program, an argument naming a path, or "
            "a file: source inside the workspace or a writable root is refused."),
        bad=PROF + 'ringfence run -p "$HOME/../c.toml" -- true',
        good=PROF + 'RF_T=tok-0123 ringfence run -p "$HOME/../c.toml" -- true'),
    Rule(
        code="RF653", name="brokered-credential-written",
        summary="the run wrote a brokered credential into a file; held, never applied",
        explanation=(
            "A brokered credential is handed to git inside the sandbox, never written "
            "anywhere by ringfence. After the run, ringfence looks for its value in every "
            "file the run wrote: one in the workspace is held in the stage for a person "
            "(`ringfence approve RUN_ID` shows it), one in another writable root (the "
            "tooling dir) is removed. It is looked for raw, reversed, hex, base64 (any "
            "alignment, standard and URL-safe) and inside gzip and zlib data (git loose "
            "objects); a file with more data than the scan reads counts as a hit. The "
            "ledger never keeps the value either (output tails are redacted), and the "
            "live output shows it as [brokered credential]."),
        bad=(PROF + "RF_T=tok-0123 ringfence run -p \"$HOME/../c.toml\" -c \"printf "
             "'protocol=https\\nhost=github.com\\n\\n' | "
             "/run/ringfence/git-credential-ringfence get > leak.txt\""),
        good=(PROF + "RF_T=tok-0123 ringfence run -p \"$HOME/../c.toml\" -c \"printf "
              "'protocol=https\\nhost=github.com\\n\\n' | "
              "/run/ringfence/git-credential-ringfence get > /dev/null\"")),
)
