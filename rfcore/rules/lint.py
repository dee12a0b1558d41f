"""RF5xx: profile lint diagnostics (``ringfence profile lint``).

Each ``bad``/``good`` example is a complete profile file. The tests write it to
a file named ``profile.toml`` (RF513, which is about project files:
``.ringfence.toml``) in an empty directory and lint it: ``bad`` must produce
this code, ``good`` must lint clean.
"""

from . import Rule

RULES: tuple[Rule, ...] = (
    Rule(
        code="RF500", name="invalid-profile-file",
        summary="the profile file is not valid UTF-8 TOML",
        explanation=(
            "A profile that cannot be parsed cannot be enforced, and ringfence refuses to "
            "run under it (exit 125) rather than fall back to a weaker policy. The message "
            "carries the line and column that TOML reported."),
        bad='[network\nmode = "none"\n',
        good='[network]\nmode = "none"\n',
    ),
    Rule(
        code="RF501", name="unknown-key",
        summary="a key the profile schema does not know",
        explanation=(
            "A misspelled key would otherwise be ignored, so the setting the author meant "
            "silently would not apply (`netwrok` leaves the network section at its "
            "default). Lint names the nearest known key."),
        bad='extends = "build"\n[netwrok]\nmode = "none"\n',
        good='extends = "build"\n[network]\nmode = "none"\n',
    ),
    Rule(
        code="RF502", name="bad-value",
        summary="a value of the wrong type or outside its allowed set",
        explanation=(
            "Every key has one type (string, boolean, positive number, list of strings, "
            "table) and some an allowed set (`host` is deny, ask or escalate; "
            "`network.mode` is none or proxy). Paths must be absolute, start with `~/` or "
            "a `{workspace}`/`{tooling}` placeholder, so they never depend on the current "
            "directory."),
        bad='host = "maybe"\n',
        good='host = "ask"\n',
    ),
    Rule(
        code="RF503", name="extends-missing",
        summary="`extends` names a profile that does not exist",
        explanation=(
            "A profile is only as strict as its whole chain. A missing parent is an error, "
            "never an empty parent, and lint suggests the nearest built-in name."),
        bad='extends = "biuld"\n',
        good='extends = "build"\n',
    ),
    Rule(
        code="RF504", name="extends-cycle",
        summary="profiles that extend each other in a cycle",
        explanation=(
            "A cycle has no first parent, so there is no well-defined merge order; the "
            "message lists the files of the cycle."),
        bad='extends = "profile.toml"\n',
        good='extends = "strict"\n',
    ),
    Rule(
        code="RF505", name="pattern-syntax",
        summary="a command-rule pattern that does not parse",
        explanation=(
            "Command rules use a small pattern language: literal words, `*` (one word), "
            "`**` (the rest, last only), `<name>` holes and `{a,b}` alternatives, separated "
            "by blanks. A glob inside a word (`git*`) is not part of it. The diagnostic "
            "gives the column inside the pattern."),
        bad='[commands]\nask = ["git*"]\n',
        good='[commands]\nask = ["git *"]\n',
    ),
    Rule(
        code="RF506", name="writable-inside-denied",
        summary="a writable path inside (or equal to) a read-denied one",
        explanation=(
            "Binding a writable root inside a masked credential store re-exposes part of "
            "it: the command could read or plant files there. Make the path read-denied "
            "only, or write somewhere else."),
        bad='extends = "build"\n[filesystem]\nwritable = ["~/.ssh/tmp"]\n',
        good='extends = "build"\n[filesystem]\nwritable = ["~/scratch"]\n',
    ),
    Rule(
        code="RF507", name="catch-all-allow",
        summary="an allow rule that covers every program, or any code at all",
        explanation=(
            "`allow = [\"*\"]`, `**`, `<x> **`, or an allow rule for a shell, interpreter "
            "or launcher with arbitrary arguments (`bash **`, `python3 **`, `env **`) "
            "approves every command in advance, which defeats approvals. Allow the "
            "specific programs and subcommands instead."),
        bad='[commands]\nallow = ["**"]\n',
        good='[commands]\nallow = ["cargo test **"]\n',
    ),
    Rule(
        code="RF508", name="tld-wildcard-domain",
        summary="a domain pattern that covers a whole top-level domain",
        explanation=(
            "`*.com` or `**.io` opens most of the internet, including every host an "
            "attacker can register, so the allowlist no longer limits exfiltration."),
        bad='[network]\nmode = "proxy"\nallow = ["*.com"]\n',
        good='[network]\nmode = "proxy"\nallow = ["*.example.com"]\n',
    ),
    Rule(
        code="RF509", name="bad-domain-pattern",
        summary="a domain pattern with a scheme, a path, or bad syntax",
        explanation=(
            "The proxy filters by host name and port only; `https://x.com` or `x.com/api` "
            "can never match, so the author's intent is lost. Write `x.com`, "
            "`*.x.com`, `**.x.com` or `x.com:8443`."),
        bad='[network]\nmode = "proxy"\nallow = ["https://pypi.org/simple"]\n',
        good='[network]\nmode = "proxy"\nallow = ["pypi.org"]\n',
    ),
    Rule(
        code="RF510", name="credential-passed",
        summary="a credential-looking variable passed into the sandbox without opt-in",
        explanation=(
            "Names with TOKEN, SECRET, KEY, PASSWORD, CREDENTIAL, AUTH and the like (and "
            "globs that match them, such as `*` or `AWS_*`) carry secrets a prompt-injected "
            "command could exfiltrate. They are only passed when also listed in "
            "`env.allow_credentials`, an explicit, reviewable opt-in."),
        bad='[env]\npass = ["GITHUB_TOKEN"]\n',
        good='[env]\npass = ["GITHUB_TOKEN"]\nallow_credentials = ["GITHUB_TOKEN"]\n',
    ),
    Rule(
        code="RF511", name="shadowed-rule",
        summary="a command rule that never takes effect because an earlier rule covers it",
        explanation=(
            "Rules are evaluated deny, then ask, then allow. A rule whose pattern is covered "
            "by an earlier rule of the same or a stronger action (including inherited "
            "ones) can never decide anything; usually the author expected it to."),
        bad='[commands]\ndeny = ["git push **"]\nallow = ["git push origin main"]\n',
        good='[commands]\ndeny = ["git push **"]\nallow = ["git status"]\n',
    ),
    Rule(
        code="RF512", name="never-matches",
        summary="a command-rule pattern that can never match any command",
        explanation=(
            "Empty alternatives `{}` match no word, and a program word with `$`, a "
            "backtick, braces, `*`, `?` or `[` never equals a capability's program: the "
            "classifier refuses such command names. The rule is dead and probably a typo."),
        bad='[commands]\ndeny = ["npm run {}"]\n',
        good='[commands]\ndeny = ["npm run {deploy,release}"]\n',
    ),
    Rule(
        code="RF513", name="workspace-profile-loosens",
        summary="a profile file inside the workspace tries to loosen the boundary",
        explanation=(
            "Files in the workspace can be edited by the agent (its own edit tool never "
            "passes through the sandbox) and arrive with every cloned repository, so a "
            "profile file there (`.ringfence.toml`, or one passed with --profile) is never a "
            "profile of its own: it is an overlay on the base, the profile that would be "
            "active without it (the user config, else `build`), merged with the normal rules "
            "as if it extended the base, and the result must be no looser than the base. It "
            "may not turn the sandbox off, loosen `host` (deny < ask < escalate), open the "
            "network or add `network.allow` domains, allow AF_UNIX sockets, add writable "
            "paths, turn the private /tmp off, enable or move the tooling dir, pass more "
            "environment variables or opt credentials in, set a variable that changes what "
            "runs (`LD_PRELOAD`, `BASH_ENV`, `PATH`, `PYTHONPATH`, `NODE_OPTIONS`, ...: the "
            "classifier's RF122 table), raise or remove a limit, or add "
            "`commands.allow` rules; an `extends` that brings any of these in is refused "
            "the same way. It may add read_deny, write_protect, network.deny and deny/ask "
            "rules, lower limits and set other env values. ringfence refuses to load a loosening "
            "overlay (exit 125); put such settings in your user config."),
        bad='extends = "build"\n[commands]\nallow = ["npm run {test,build}"]\n',
        good='extends = "build"\n[commands]\ndeny = ["npm run deploy **"]\n',
        known_problems=(
            "Lint applies it only to files named `.ringfence.toml` (or with an explicit "
            "workspace), with this process's user config as the base; loading applies it to "
            "every profile file inside the workspace."),
    ),
    Rule(
        code="RF514", name="ineffective-network",
        summary="network settings that cannot take effect under the profile's network mode",
        explanation=(
            "Domains listed in `network.allow` are only reachable through the proxy, so with "
            "`mode = \"none\"` they are silently unreachable; and `mode = \"proxy\"` with an "
            "empty allowlist starts no proxy at all, so there is no network. Either way the "
            "author expected something the profile does not do. Only entries written in the "
            "linted file itself are reported, not inherited ones."),
        bad='extends = "observe"\n[network]\nallow = ["pypi.org"]\n',
        good='extends = "observe"\n[network]\nmode = "proxy"\nallow = ["pypi.org"]\n',
    ),
    Rule(
        code="RF550", name="limit-out-of-range",
        summary="a numeric limit outside its documented range",
        explanation=(
            "Every numeric profile field has a range (docs/profiles.md): `limits.timeout` "
            "more than 0 and at most a week, `memory_mb` 16 to 4194304, `pids` 8 to "
            "4194304, `file_size_mb` 1 to 8388608. A value outside it (`inf`, `nan`, "
            "`1e400`, a 20-digit integer, a negative) would overflow a system call "
            "(`time_t`, `rlim_t`) after the sandbox started, or mean no limit at all; "
            "lint reports it and `run` refuses the profile (exit 125)."),
        bad='extends = "build"\n[limits]\ntimeout = inf\n',
        good='extends = "build"\n[limits]\ntimeout = 900\n',
    ),
    Rule(
        code="RF520", name="masked-secret-tracked-by-git",
        summary="a read-denied workspace file is also in git, which reads it past the mask",
        explanation=(
            "`read_deny` hides files by path: an empty tmpfs or /dev/null is mounted over "
            "`.env`, `*.pem`, ... inside the sandbox. A copy git keeps is not at that path: "
            "the staged or committed blob sits compressed in `.git/objects`, so `git show "
            ":.env`, `git show HEAD:.env` or reading the object database directly prints it. "
            "Strict does not hide the object database (every `git status`, `diff` and `log` "
            "needs it). Lint reads the workspace's git index (without running git) and "
            "reports each masked pattern that matches a tracked file."),
        bad='extends = "strict"\n   # in a workspace whose git index tracks .env',
        good='extends = "strict"\n   # .env listed in .gitignore and never committed',
        known_problems=(
            "Only the index is read: a secret that was committed and later removed from "
            "the index is still in history and is not reported. Lint applies it to "
            "`.ringfence.toml` files (their directory is the workspace) or with an "
            "explicit workspace."),
    ),
    Rule(
        code="RF540", name="credential-env-opted-in",
        summary="env.allow_credentials passes a credential variable into the sandbox",
        explanation=(
            "A variable named or shaped like a credential (`*_TOKEN`, `*_KEY`, `*_SECRET`, "
            "`*PASSWORD*`, `AWS_*`, `GH_*`, a JWT or `ghp_...` value) never passes through "
            "`env.pass`, not even through a glob; `env.allow_credentials` lets one through "
            "on purpose, and then every command in the sandbox, and anything it downloads "
            "and runs, can read it and send it to any allowed domain. Prefer a brokered "
            "`[[credentials]]` entry: git gets the token only for its domains and only while "
            "the run lives, and it is never in the environment."),
        bad='extends = "build"\n[env]\npass = ["NPM_TOKEN"]\nallow_credentials = ["NPM_TOKEN"]\n',
        good='extends = "build"\n[env]\npass = ["NPM_CONFIG_REGISTRY"]\n',
        known_problems="A warning, not an error: passing a token can be what the task needs.",
    ),
    Rule(
        code="RF541", name="credential-path-allowed",
        summary="filesystem.read_allow names a known credential location",
        explanation=(
            "Every built-in profile masks the home directory and lets through only paths "
            "that toolchains need and that hold no secrets. `read_allow` adds paths; one "
            "that is, contains or lies inside a location of ringfence's credential table "
            "(`~/.aws`, `~/.config/gh`, `~/.claude/.credentials.json`, shell histories, ...) "
            "would hand the sandbox a long-lived host credential. ringfence still masks the "
            "table's locations inside an allowed path; lint says so, because the author "
            "evidently expected the file to be readable."),
        bad='extends = "build"\n[filesystem]\nread_allow = ["~/.config"]\n',
        good='extends = "build"\n[filesystem]\nread_allow = ["~/.config/nvim"]\n',
    ),
    Rule(
        code="RF542", name="credential-domain-unreachable",
        summary="a brokered credential for a domain the network policy never reaches",
        explanation=(
            "A `[[credentials]]` entry is handed to git only for a request to one of its "
            "`domains`, and the proxy allows only the profile's `network.allow`: a domain "
            "missing there (or `network.mode = \"none\"`) means the credential can never be "
            "used, which is almost always a mistake in the profile."),
        bad=('extends = "strict"\n[[credentials]]\nname = "gh"\nfrom = "env:GH_TOKEN"\n'
             'domains = ["github.com"]\n'),
        good=('extends = "build"\n[network]\nallow = ["github.com"]\n[[credentials]]\n'
              'name = "gh"\nfrom = "env:GH_TOKEN"\ndomains = ["github.com"]\n'),
    ),
)
