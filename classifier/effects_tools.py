"""Option-effects rows for test runners, build tools and their configuration
(issue 22's follow-up): options that make a tool people approve for one job
write a file, delete a directory or run code it does not name (RF131-RF133).
effects_data.py merges RUNNER_TOOLS into TOOLS; `python -m MODULE` is read with
MODULE_TOOLS (effects_scan.py), so `python -m pytest --junitxml=F` is pytest's.

Sources (as installed here: pytest 9, CPython 3.11 Lib/cProfile.py, profile.py,
trace.py; cmake/ctest 3.25; GnuPG 2.2; cargo 1.95 `cargo help config`; npm 11
npm-config(1); pnpm 9 and yarn 1/4 `config` docs; redis-cli 7 `--help`):
- pytest --help: `--basetemp=dir` "(Warning: this directory is removed if it
  exists.)"; `--junitxml/--junit-xml=path`, `--log-file`, `--debug[=FILE]`
  write; `-p name` early-loads a plugin module (`-p no:name` blocks one); `-c
  FILE`/`--config-file` reads a config whose addopts may load plugins;
  `--rootdir` is where .pytest_cache is written; `-o KEY=VALUE` overrides an ini
  key; `--pdb`/`--trace` start pdb, which reads Python from standard input;
  `--pdbcls=module:class` imports a module.
- python -m cProfile/profile `-o FILE`; python -m trace `-c` (.cover files beside
  each module), `-r`, `-f FILE`, `-C DIR` write. (Their script operand is a
  script, as for `python SCRIPT`.)
- ctest(1): `-S`/`-SP`/`--script` run a CTest script (CMake code:
  execute_process runs programs); `--test-command` runs a program (with
  --build-and-test); `-O`/`--output-log`, `--output-junit` write.
- cargo `--config KEY=VALUE|PATH` (cargo(1), "Configuration"): target.*.runner,
  target.*.linker, build.rustc-wrapper, credential providers, env.*, source
  replacement ... name programs and code; a PATH is a config file. Judged by key.
- gpg(1) `--agent-program`, `--dirmngr-program`, `--photo-viewer`, `--exec-path`
  and a config (`--options`, `--homedir`: gpg.conf, gpg-agent.conf name
  programs, as GNUPGHOME does) run programs; `-o`/`--output`, `--log-file`,
  `--logger-file`, `--status-file`, `--attribute-file` write. gpg-agent(1)
  `--pinentry-program`, `--scdaemon-program`, `--options`, `--homedir`, and
  `--daemon COMMAND` (runs the command as its child); `--log-file` writes.
- redis-cli `--rdb FILE`, `--functions-rdb FILE` write a local file. (EVAL and
  `--eval FILE` run Lua on the server, which can do only what any redis command
  can: the key `redis-cli` already names that.)
- npm config set/delete/edit (`npm set`, `npm c set`, npm's unique prefixes),
  `npm pkg set/delete/fix`, `pnpm config set/delete`, `yarn config
  set/unset/delete`: they write the configuration every later npm/pnpm/yarn
  command obeys (registries, script-shell, node-options, yarnPath) or
  package.json's scripts.
"""

from __future__ import annotations

import re

from .effects_rows import Row, Tool, _r, _s


def _c(options: str, target: str, why: str) -> Row:
    return Row(frozenset(options.split()), "run", target, why)


_PYTEST_VALUES = _s(
    "-k -m -p -c -o -W -r --basetemp --junitxml --junit-xml --junit-prefix --junitprefix "
    "--log-file --log-level --log-format --log-date-format --log-cli-level --log-cli-format "
    "--log-cli-date-format --log-file-level --log-file-format --log-file-date-format "
    "--log-file-mode --rootdir --config-file --confcutdir --override-ini --deselect --ignore "
    "--ignore-glob --tb --color --code-highlight --pastebin --durations --durations-min "
    "--maxfail --import-mode --doctest-glob --doctest-report --assert --pythonwarnings "
    "--max-warnings --pdbcls --capture --show-capture --verbosity --last-failed-no-failures "
    "--lfnf --report-chars")
_PYTEST_LONGS = _s("--debug --pdb --trace --help --version --basetemp --junitxml --junit-xml "
                   "--log-file --rootdir --config-file --override-ini --pdbcls")

RUNNER_TOOLS: dict[str, Tool] = {
    "pytest": Tool("pytest --help: --basetemp, --junitxml, --log-file, --debug, -p, -c, "
                   "--rootdir, -o, --pdb, --trace, --pdbcls", (
        _r("--basetemp", "delete", "value", "removes the directory if it exists (then "
           "writes the run's temporary files there)"),
        _r("--junitxml --junit-xml --log-file", "write", "value", "writes the file"),
        _r("--debug", "write", "self", "writes its debug log (pytestdebug.log, or the "
           "file named)"),
        _r("--rootdir", "write", "judge:outside", "writes its cache (.pytest_cache) there"),
        _r("-p", "run", "judge:pytest-plugin", "loads the plugin module (code that runs "
           "before any test)"),
        _r("-c --config-file", "run", "value", "reads a config file whose addopts can load "
           "plugins (its directory also gets the cache)"),
        _r("-o --override-ini", "run", "judge:pytest-ini", "overrides an ini option"),
        _r("--pdb --trace", "run", "self", "starts pdb, which runs Python commands read "
           "from standard input"),
        _r("--pdbcls", "run", "value", "imports the debugger's module (code)"),
    ), _PYTEST_VALUES, _PYTEST_LONGS, stop=_s("--help -h --version -V")),
    "ctest": Tool("ctest(1) -S, -SP, --script, --test-command; -O, --output-log, --output-junit", (
        _c("-S -SP --script --script-new-process", "code:file", "runs the CTest script"),
        _c("--test-command", "code:program", "runs the program"),
        _c("-O --output-log --output-junit", "code:path", "writes the file"),
    ), _s("-S -SP --script --script-new-process --test-command -O --output-log --output-junit "
          "-C --build-config -R --tests-regex -E --exclude-regex -L --label-regex -LE "
          "--label-exclude -j --parallel --test-dir -T -M -D -I -A --timeout --repeat "
          "--stop-time --resource-spec-file --build-generator --build-target"), style="code",
        stop=_s("--help -h --version")),
    "cargo": Tool("cargo(1) --config KEY=VALUE|PATH", (
        _c("--config", "code:cargo-config", "sets a configuration value"),
    ), _s("--config -p --package -j --jobs --target --target-dir --features -F --bin "
          "--example --test --bench --manifest-path --color --message-format --profile -Z -C "
          "--exclude --lockfile-path --artifact-dir"), style="code",
        stop=_s("--help -h --version -V")),
    "gpg": Tool("gpg(1) --agent-program, --dirmngr-program, --photo-viewer, --exec-path, "
                "--options, --homedir; -o, --output, --log-file, --status-file", (
        _r("--agent-program --dirmngr-program --photo-viewer --exec-path --options --homedir",
           "run", "value", "runs the program, or reads configuration that names programs "
           "gpg runs"),
        _r("-o --output --log-file --logger-file --status-file --attribute-file", "write",
           "value", "writes the file"),
    ), _s("--agent-program --dirmngr-program --photo-viewer --exec-path --options --homedir "
          "-o --output --log-file --logger-file --status-file --attribute-file -r --recipient "
          "-u --local-user --default-key --keyserver --keyring --secret-keyring "
          "--trustdb-name --passphrase --passphrase-file --passphrase-fd --pinentry-mode "
          "--cipher-algo --digest-algo --compress-algo --trust-model --default-recipient "
          "--hidden-recipient --encrypt-to --set-filename --comment --keyid-format "
          "--list-options --verify-options --export-options --import-options "
          "--keyserver-options --command-fd --status-fd --logger-fd --attribute-fd -z"),
        _s("--agent-program --dirmngr-program --photo-viewer --exec-path --options --homedir "
           "--output --log-file --logger-file --status-file --attribute-file --list-keys "
           "--list-secret-keys --decrypt --encrypt --sign --verify --export --import "
           "--armor --batch --yes")),
    "gpg-agent": Tool("gpg-agent(1) --pinentry-program, --scdaemon-program, --options, "
                      "--homedir, --log-file, --daemon [command line]", (
        _r("--pinentry-program --scdaemon-program --options --homedir", "run", "value",
           "runs the program, or reads configuration that names programs it runs"),
        _r("--daemon", "run", "operands", "runs the command as its child"),
        _r("--log-file", "write", "value", "writes its log to the file"),
    ), _s("--pinentry-program --scdaemon-program --options --homedir --log-file "
          "--debug-level --default-cache-ttl --max-cache-ttl --extra-socket"),
        _s("--pinentry-program --scdaemon-program --options --homedir --log-file --daemon "
           "--server --supervised --use-standard-socket")),
    "redis-cli": Tool("redis-cli --help: --rdb <filename>, --functions-rdb <filename>", (
        _r("--rdb --functions-rdb", "write", "value", "writes the file"),
    ), _s("-h -p -s -a -u -r -i -n -d -D -e --user --pass --eval --rdb --functions-rdb "
          "--pattern --count --cacert --cacertdir --cert --key --tls-ciphers "
          "--tls-ciphersuites --sni --memkeys-samples --intrinsic-latency --lru-test "
          "--pipe-timeout"), options_until=0),
    # npm, pnpm and yarn: `config set` and friends, judged by config_writes below
    "npm": Tool("npm-config(1): npm config set/delete/edit, npm set; npm-pkg(1) set/delete",
                (), style="code"),
    "pnpm": Tool("pnpm config set/delete [--location project|global]", (), style="code"),
    "yarn": Tool("yarn config set/unset/delete (yarn 1: ~/.yarnrc; yarn 4: .yarnrc.yml, "
                 "-H/--home: ~/.yarnrc.yml)", (), style="code"),
}
RUNNER_ALIASES = {"py.test": "pytest", "pytest-3": "pytest", "py.test-3": "pytest"}

MODULE_TOOLS: dict[str, Tool] = {
    "cProfile": Tool("Lib/cProfile.py: -o output_file_path, --outfile", (
        _r("-o --outfile", "write", "value", "writes the profile to the file"),
    ), _s("-o --outfile -s --sort"), _s("--outfile --sort --help"), options_until=0),
    "trace": Tool("Lib/trace.py: -c, --count; -r, --report; -f, --file; -C, --coverdir", (
        _r("-f --file -C --coverdir", "write", "value", "writes counts or .cover files there"),
        _r("-c --count -r --report", "write", "self", "writes a .cover file beside each "
           "module it ran"),
    ), _s("-f --file -C --coverdir --ignore-module --ignore-dir"),
        _s("--count --report --file --coverdir --trace --listfuncs --trackcalls --no-report "
           "--missing --summary --timing --ignore-module --ignore-dir --module --help "
           "--version"), options_until=0),
}
MODULE_TOOLS["profile"] = MODULE_TOOLS["cProfile"]._replace(
    source="Lib/profile.py: -o output_file_path, --outfile")
MODULE_ALIASES = {"pytest": "pytest", "py.test": "pytest"}


def python_module(argv) -> tuple[str, int] | None:
    """`python [options] -m MODULE ARGS`: (MODULE, index of its first argument)."""
    i, n = 1, len(argv)
    while i < n:
        w = argv[i]
        v = w.value
        if not w.static or not v.startswith("-") or v in ("-", "--"):
            return None
        if not v.startswith("--"):
            for k in range(1, len(v)):
                ch = v[k]
                if ch == "c":
                    return None
                if ch == "m":
                    if k + 1 < len(v):
                        return v[k + 1:], i + 1
                    nxt = argv[i + 1] if i + 1 < n else None
                    return (nxt.value, i + 2) if nxt is not None and nxt.static else None
                if ch in "WX":
                    i += 1 if k == len(v) - 1 else 0
                    break
        i += 1
    return None


# --- values judged by what they say -----------------------------------------------

# cargo configuration keys that name no program, code source or file: display,
# build parallelism and profiles (profile.*.rustflags excepted), network retries
_CARGO_HARMLESS = re.compile(
    r"(term\.[\w.-]+|build\.(jobs|incremental)|net\.(retry|offline|git-fetch-with-cli)|"
    r"http\.(timeout|debug|multiplexing|low-speed-limit)|future-incompat-report\.frequency|"
    r"profile\.[\w-]+\.(opt-level|debug|debug-assertions|overflow-checks|lto|panic|"
    r"incremental|codegen-units|split-debuginfo|strip|rpath|debuginfo))")
_CARGO_KEY = re.compile(r"\s*([A-Za-z0-9_.\"'-]+?)\s*=")
# pytest's own ini keys (pytest --help, "[pytest] ini-options"): those that load
# code or move writes, and the ones that do neither; any other key belongs to a
# plugin and is not known here
_PYTEST_INI_RUN = _s("addopts pythonpath required_plugins")
_PYTEST_INI_WRITE = _s("cache_dir log_file junit_logging")
_PYTEST_INI_OK = _s(
    "console_output_style consider_namespace_packages doctest_encoding doctest_optionflags "
    "empty_parameter_set_mark enable_assertion_pass_hook faulthandler_timeout "
    "faulthandler_exit_on_timeout filterwarnings junit_duration_report junit_family "
    "junit_log_passing_tests junit_suite_name log_auto_indent log_cli log_cli_date_format "
    "log_cli_format log_cli_level log_date_format log_file_date_format log_file_format "
    "log_file_level log_file_mode log_format log_level markers minversion norecursedirs "
    "python_classes python_files python_functions testpaths tmp_path_retention_count "
    "tmp_path_retention_policy truncation_limit_chars truncation_limit_lines usefixtures "
    "verbosity_assertions verbosity_test_cases xfail_strict strict_xfail strict_markers "
    "strict_config strict_parametrization_ids strict collect_imported_tests "
    "disable_test_id_escaping_and_forfeit_all_rights_to_community_support")
_OPENSSL_PROVIDERS = _s("default base legacy fips null")


def judge_value(lang: str, text: str) -> list[tuple[str, str]]:
    """(kind, why) for a value that these tools read as a program, code or path."""
    if lang == "program":
        return [("run", "runs the program")]
    if lang == "library":
        return [("run", "loads a library (code)")]
    if lang == "provider":
        return [] if text in _OPENSSL_PROVIDERS else [("run", "loads a provider library "
                                                               "(code)")]
    if lang == "openssl-config":
        return [("run", "reads a config file that can load engines and providers "
                        "(libraries)")]
    if lang == "cargo-config":
        m = _CARGO_KEY.match(text)
        if m is None:
            return [("run", "reads a config file that can name programs cargo runs")]
        key = m.group(1).replace('"', "").replace("'", "")
        if _CARGO_HARMLESS.fullmatch(key):
            return []
        return [("run", f"sets `{key}`, which can name a program cargo runs (runner, "
                        "linker, rustc-wrapper, credential provider) or where code or "
                        "output comes from")]
    if lang == "pytest-plugin":
        return [] if text.startswith("no:") else [("run", "loads the plugin module (code "
                                                          "that runs before any test)")]
    if lang == "pytest-ini":
        key, eq, value = text.partition("=")
        key = key.strip()
        if key in _PYTEST_INI_OK or (key == "addopts" and not value.strip()):
            return []
        if key in _PYTEST_INI_WRITE:
            return [("write", f"sets `{key}`, so it writes `{value}`")]
        if key in _PYTEST_INI_RUN:
            return [("run", f"sets `{key}`, which loads code")]
        return [("run", f"sets `{key}`, an ini option of a plugin this table does not know")]
    if lang == "outside":
        parts = text.split("/")
        return [("write", "writes its cache (.pytest_cache) outside the current "
                          "directory")] if text.startswith(("/", "~")) or ".." in parts else []
    return [("run", "gets a value this table does not know")]


# --- configuration writes and subcommands judged as a whole --------------------------

_NPM_VALUES = _s("--location -L --userconfig --globalconfig --prefix -w --workspace -C "
                 "--cache --registry --loglevel")
_NPM_CONFIG = _s("c con conf confi config")
_CONFIG_READS = _s("get list ls")
_CONFIG_WRITES = {"npm": _s("set delete rm edit fix"), "pnpm": _s("set delete"),
                  "yarn": _s("set unset delete")}


def _config_file(name: str, opts) -> str:
    given = {o: (v.value if v is not None else "") for o, v in opts}
    where = given.get("--location") or given.get("-L") or ""
    if name == "npm":
        if "--userconfig" in given:
            return given["--userconfig"]
        if where == "global" or "-g" in given or "--global" in given:
            return "$PREFIX/etc/npmrc"
        return ".npmrc" if where == "project" else "~/.npmrc"
    if name == "pnpm":
        return ".npmrc" if where == "project" else "~/.config/pnpm/rc"
    return "~/.yarnrc.yml" if ("-H" in given or "--home" in given) else ".yarnrc.yml"


def config_writes(inv, scan) -> list[tuple[str, object, str, str]]:
    """(kind, span, why, file) for `npm config set`, `npm set`, `npm pkg set`, `pnpm
    config set`, `yarn config set` and the other writes of their configuration.
    ``scan`` is optscan.scan_args (this module stays a leaf)."""
    from .optspec import Opts

    name = inv.name
    opts, operands = scan(inv.argv[1:], Opts(_NPM_VALUES))
    if not operands:
        return []
    sub = operands[0]
    if not sub.static:
        return []                          # RF127: the subcommand is decided at run time
    action = operands[1] if len(operands) > 1 else None
    span = (sub.span[0], (action or sub).span[1])
    if name == "npm" and sub.value == "set":
        action, span = sub, sub.span
    elif name == "npm" and sub.value == "pkg":
        if action is not None and (not action.static or action.value in ("set", "delete",
                                                                         "fix")):
            return [("write", span, f"`npm pkg {action.raw}` writes package.json (its "
                                    "scripts run on npm run and install)", "package.json")]
        return []
    elif sub.value != "config" and not (name == "npm" and sub.value in _NPM_CONFIG):
        return []
    if action is None or (action.static and action.value not in _CONFIG_WRITES[name]
                          and action is not sub):
        return []
    target = _config_file(name, opts)
    return [("write", span, f"`{name} {' '.join(w.raw for w in operands[:2])}` writes "
                            f"{name}'s configuration `{target}`, which every later {name} "
                            "command obeys (registries, the scripts' shell, node options)",
             target)]


_ENGINE_VALUES = _s("-pre -post")


def openssl_engine(inv) -> list[tuple[str, object, str, str]]:
    """`openssl engine ID`, `openssl engine -pre SO_PATH:/x.so`: loads an engine, a
    shared library (openssl-engine(1)). Without one it lists the built-in ones."""
    argv = inv.argv
    if len(argv) < 3 or not argv[1].static or argv[1].value != "engine":
        return []
    i = 2
    while i < len(argv):
        w = argv[i]
        if not w.static or not w.value.startswith("-") or w.value in _ENGINE_VALUES:
            return [("run", (w.span[0], argv[-1].span[1]), "loads an engine (a shared "
                     "library: code)", w.value if w.static else w.raw)]
        i += 1
    return []
