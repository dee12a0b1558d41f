"""Loading profiles: built-ins, extends/merge rules, precise errors, precedence."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from ringfence.profiles import load
from ringfence.profiles._lines import scan
from ringfence.profiles.load import list_builtins, load_profile, looks_like_credential, resolve_active
from ringfence.rfcore.errors import EXIT_UNSAFE, ProfileError

CREDENTIAL_STORES = ("~/.ssh", "~/.aws", "~/.config/gcloud", "~/.azure", "~/.kube",
                     "~/.docker/config.json", "~/.netrc", "~/.npmrc", "~/.pypirc", "~/.gnupg",
                     "~/.git-credentials", "~/.config/gh")
PROTECTED = (".git/hooks", ".git/config", ".gitmodules", ".bashrc", ".bash_profile",
             ".profile", ".zshrc", ".envrc", ".vscode", ".idea", ".claude", ".codex",
             ".mcp.json")
SANDBOXED = ("observe", "build", "strict", "host-assisted")


def write(tmp: Path, name: str, text: str) -> Path:
    p = tmp / name
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(textwrap.dedent(text).lstrip(), encoding="utf-8")
    return p


def error_of(path_or_name: str, **kw) -> ProfileError:
    with pytest.raises(ProfileError) as info:
        load_profile(path_or_name, **kw)
    assert info.value.exit_code == EXIT_UNSAFE
    return info.value


# ----------------------------------------------------------------------------- built-ins

def test_list_builtins_names_and_descriptions():
    names = [n for n, _ in list_builtins()]
    assert names == ["observe", "build", "strict", "host-assisted", "host"]
    assert all(desc for _, desc in list_builtins())


@pytest.mark.parametrize("name", SANDBOXED)
def test_sandboxed_builtins_deny_credentials_and_protect_files(name):
    p = load_profile(name)
    assert p.sandbox is True and p.source == f"builtin:{name}" and p.name == name
    # The home is masked, and the one credential table (rfcore/credentials.py) is
    # hidden wherever it is still visible: the stores are no longer a profile list.
    from ringfence.rfcore.credentials import export_paths
    assert p.filesystem.mask_home is True
    assert set(CREDENTIAL_STORES) - {"~/.config/ringfence"} <= set(export_paths())
    # The host-obeyed registry is built in (no profile can drop it); exporters,
    # which cannot stage and judge writes, deny writing its fixed paths.
    from ringfence.staging.registry import EXPORT_DENY_WRITE
    assert set(PROTECTED) <= set(EXPORT_DENY_WRITE)
    assert p.filesystem.write_protect == ()
    assert p.filesystem.private_tmp is True
    assert p.env.allow_credentials == ()
    assert not [n for n in p.env.pass_ if looks_like_credential(n)]
    assert len(p.digest) == 64


def test_builtin_table_of_spec_section_3():
    observe, build, strict, ha = (load_profile(n) for n in SANDBOXED)
    assert observe.filesystem.writable == ()
    assert observe.network.mode == "none" and observe.host == "ask"
    assert build.filesystem.writable == ("{workspace}", "{tooling}")
    assert build.tooling.enabled is True and observe.tooling.enabled is False
    assert build.network.mode == "proxy"
    assert {"pypi.org", "files.pythonhosted.org", "registry.npmjs.org"} <= set(build.network.allow)
    assert build.host == "ask"
    assert strict.filesystem.writable == ("{workspace}",)
    assert {"{workspace}/**/.env*", "{workspace}/**/*.pem", "{workspace}/**/*.key",
            "{workspace}/**/id_*"} <= set(strict.filesystem.read_deny)
    assert strict.network.mode == "none" and strict.host == "deny"
    assert ha.host == "escalate"
    assert (ha.filesystem, ha.network, ha.tooling) == (build.filesystem, build.network,
                                                       build.tooling)
    assert ha.extends == ("build", "observe", "_base")


def test_irreversible_actions_ask_in_observe_build_ha_and_deny_in_strict():
    def of(name, action):
        return [r.pattern for r in load_profile(name).rules if r.action == action]
    ask = of("observe", "ask")
    assert {"git push **", "npm publish **", "terraform apply **", "terraform destroy **",
            "kubectl delete **", "cargo publish **", "docker push **",
            "gh release create **"} <= set(ask)
    assert of("build", "ask") == ask == of("host-assisted", "ask")
    assert of("strict", "deny") == ask        # the two lists never drift apart
    assert of("strict", "ask") == [] and of("observe", "deny") == []


def test_host_profile_is_sandbox_off_with_no_rules():
    p = load_profile("host")
    assert p.sandbox is False and p.rules == () and p.extends == ()


def test_rule_locations_point_into_the_builtin_file():
    rule = next(r for r in load_profile("strict").rules if r.pattern == "git push **")
    text = (load.BUILTIN_DIR / "strict.toml").read_text().splitlines()
    assert rule.where.file == "builtin/strict.toml"
    assert text[rule.where.line - 1].strip() == '"git push **",'
    assert rule.where.key == "commands.deny[0]"


# ----------------------------------------------------------------------------- merge rules

def test_extends_merge_rules(tmp_path):
    write(tmp_path, "base.toml", """
        name = "base"
        description = "parent"
        host = "ask"
        [filesystem]
        writable = ["{workspace}", "/data"]
        read_deny = ["~/.ssh"]
        [network]
        mode = "proxy"
        allow = ["pypi.org"]
        deny = ["evil.example"]
        [env]
        pass = ["PATH"]
        set = { A = "1", B = "2" }
        [limits]
        timeout = 60
        pids = 100
        [commands]
        deny = ["rm -rf **"]
        allow = ["make test"]
    """)
    child = write(tmp_path, "sub/child.toml", """
        extends = "../base.toml"
        host = "deny"
        [filesystem]
        writable = ["/data", "/out"]
        read_deny = ["~/.aws"]
        [network]
        deny = ["bad.example"]
        [env]
        set = { B = "3", C = "4" }
        [limits]
        timeout = 5
        [commands]
        deny = ["git push **"]
        allow = ["make test", "make lint"]
    """)
    p = load_profile(str(child))
    assert p.name == "child" and p.description == ""       # never inherited
    assert p.host == "deny"                                 # scalar overrides
    assert p.filesystem.writable == ("{workspace}", "/data", "/out")   # parent first, dedup
    assert p.filesystem.read_deny == ("~/.ssh", "~/.aws")
    assert p.network.mode == "proxy" and p.network.allow == ("pypi.org",)
    assert p.network.deny == ("evil.example", "bad.example")          # deny accumulates
    assert p.env.set == (("A", "1"), ("B", "3"), ("C", "4"))          # tables merge
    assert p.limits.timeout == 5 and p.limits.pids == 100
    assert [(r.action, r.pattern) for r in p.rules] == [
        ("deny", "rm -rf **"), ("deny", "git push **"), ("allow", "make test"),
        ("allow", "make lint")]
    inherited = p.rules[0].where
    assert (Path(inherited.file).name, inherited.line, inherited.key) == \
        ("base.toml", 18, "commands.deny[0]")
    own = p.rules[3].where
    assert (Path(own.file).name, own.line, own.key) == ("child.toml", 14, "commands.allow[1]")
    assert p.extends == (str((tmp_path / "sub" / "../base.toml")),)


def test_extends_a_list_and_a_builtin(tmp_path):
    write(tmp_path, "extra.toml", """
        [commands]
        allow = ["pytest **"]
    """)
    p = load_profile(str(write(tmp_path, "p.toml", 'extends = ["strict", "extra.toml"]\n')))
    assert p.host == "deny"
    assert ("allow", "pytest **") in [(r.action, r.pattern) for r in p.rules]
    assert "git push **" in [r.pattern for r in p.rules if r.action == "deny"]


def test_digest_covers_the_whole_chain(tmp_path):
    parent = write(tmp_path, "parent.toml", 'host = "ask"\n')
    child = write(tmp_path, "child.toml", 'extends = "parent.toml"\n')
    d1 = load_profile(str(child)).digest
    assert load_profile(str(child)).digest == d1
    parent.write_text('host = "deny"\n')
    assert load_profile(str(child)).digest != d1
    assert load_profile("build").digest != load_profile("host-assisted").digest


# ----------------------------------------------------------------------------- errors

def test_unknown_key_suggests_nearest(tmp_path):
    p = write(tmp_path, "p.toml", """
        extends = "build"

        [netwrok]
        mode = "none"
    """)
    err = error_of(str(p))
    assert (err.file, err.line, err.key) == (str(p), 3, "netwrok")
    assert err.message == f'{p}:3: unknown key "netwrok": did you mean "network"? [netwrok]'


def test_unknown_nested_key_suggests_nearest(tmp_path):
    p = write(tmp_path, "p.toml", """
        [network]
        mode = "proxy"
        alow = ["pypi.org"]
    """)
    err = error_of(str(p))
    assert (err.line, err.key) == (3, "network.alow")
    assert 'did you mean "allow"?' in err.message


@pytest.mark.parametrize("body,line,key,fragment", [
    ('host = "maybe"\n', 1, "host", 'must be one of "deny" | "ask" | "escalate"'),
    ('[network]\nmode = "open"\n', 2, "network.mode", 'must be one of "none" | "proxy"'),
    ('[limits]\ntimeout = -1\n', 2, "limits.timeout", "more than 0 and at most 604800"),
    ('[limits]\npids = true\n', 2, "limits.pids", "whole number of processes, not a boolean"),
    ('[filesystem]\nwritable = [\n  "/ok",\n  "relative/dir",\n]\n', 4,
     "filesystem.writable[1]", "must be absolute"),
    ('[filesystem]\nread_deny = ["{home}/x"]\n', 2, "filesystem.read_deny[0]",
     "unknown placeholder {home}"),
    ('[env]\npass = ["BAD-NAME"]\n', 2, "env.pass[0]", "not a valid environment variable"),
    ('[env]\nset = { A = 1 }\n', 2, "env.set", "value must be a string"),
    ('network = "none"\n', 1, "network", "must be a table"),
    ('[commands]\nallow = "make"\n', 2, "commands.allow", "must be a list of strings"),
    ('sandbox = "no"\n', 1, "sandbox", "must be true or false"),
])
def test_bad_values_have_line_and_key(tmp_path, body, line, key, fragment):
    p = write(tmp_path, "p.toml", body)
    err = error_of(str(p))
    assert (err.file, err.line, err.key) == (str(p), line, key)
    assert fragment in err.message


def test_unknown_key_inside_a_dotted_key(tmp_path):
    p = write(tmp_path, "p.toml", 'host = "ask"\n\nnetwork.proxy.port = 8080\n')
    err = error_of(str(p))
    assert (err.line, err.key) == (3, "network.proxy")
    assert 'unknown key "proxy"' in err.message


def test_toml_syntax_error_has_line(tmp_path):
    p = write(tmp_path, "p.toml", 'host = "ask"\n[network\nmode = "none"\n')
    err = error_of(str(p))
    assert (err.file, err.line) == (str(p), 2)
    assert "invalid TOML" in err.message and "column" in err.message


def test_not_utf8_is_a_profile_error(tmp_path):
    p = tmp_path / "p.toml"
    p.write_bytes(b'host = "\xff"\n')
    assert "not UTF-8" in error_of(str(p)).message


def test_missing_parent_points_at_extends(tmp_path):
    p = write(tmp_path, "p.toml", '# comment\nextends = "./nope.toml"\n')
    err = error_of(str(p))
    assert (err.file, err.line, err.key) == (str(p), 2, "extends")
    assert "nope.toml does not exist" in err.message


def test_misspelled_builtin_parent_suggests(tmp_path):
    err = error_of(str(write(tmp_path, "p.toml", 'extends = "stict"\n')))
    assert err.line == 1 and err.hint == 'did you mean "strict"?'


def test_unknown_profile_name():
    err = error_of("biuld")
    assert 'unknown profile "biuld"' in err.message and err.hint == 'did you mean "build"?'


def test_extends_cycle(tmp_path):
    write(tmp_path, "a.toml", 'extends = "b.toml"\n')
    write(tmp_path, "b.toml", 'host = "ask"\nextends = "a.toml"\n')
    err = error_of(str(tmp_path / "a.toml"))
    assert (Path(err.file).name, err.line, err.key) == ("b.toml", 2, "extends")
    assert "extends cycle: a.toml -> b.toml -> a.toml" in err.message


def test_bad_pattern_fails_at_load_with_line(tmp_path):
    p = write(tmp_path, "p.toml", '[commands]\nask = ["ok", "git pu*sh"]\n')
    err = error_of(str(p))
    assert (err.file, err.line, err.key) == (str(p), 2, "commands.ask[1]")
    assert "column 7" in err.message


def test_bad_domain_fails_at_load(tmp_path):
    p = write(tmp_path, "p.toml", '[network]\nmode = "proxy"\nallow = ["https://pypi.org"]\n')
    err = error_of(str(p))
    assert (err.line, err.key) == (3, "network.allow[0]")
    assert "scheme" in err.message


# The workspace-overlay rule (RF513) is tested in test_workspace_overlay.py.

def test_workspace_file_may_tighten(tmp_path):
    ws = tmp_path / "ws"
    p = write(ws, ".ringfence.toml", 'extends = "build"\nhost = "deny"\n'
                                     '[commands]\ndeny = ["curl **"]\n')
    prof = load_profile(str(p), workspace=str(ws), env={"HOME": str(tmp_path / "home")})
    assert prof.host == "deny" and ("deny", "curl **") in [(r.action, r.pattern)
                                                          for r in prof.rules]
    assert load_profile("host", workspace=str(ws)).sandbox is False   # built-in: explicit


# ----------------------------------------------------------------------------- precedence

def test_resolve_active_precedence(tmp_path):
    ws = tmp_path / "ws"
    ws.mkdir()
    xdg = tmp_path / "xdg"
    env = {"XDG_CONFIG_HOME": str(xdg), "HOME": str(tmp_path / "home")}
    prof, why = resolve_active(None, env=env, workspace=str(ws))
    assert (prof.name, why) == ("build", "default")

    user = write(xdg, "ringfence/config.toml", 'extends = "observe"\nname = "mine"\n')
    prof, why = resolve_active(None, env=env, workspace=str(ws))
    assert (prof.name, why) == ("mine", f"user config {user}")

    project = write(ws, ".ringfence.toml", 'host = "deny"\n')
    prof, why = resolve_active(None, env=env, workspace=str(ws))
    assert (prof.name, prof.host) == ("ringfence", "deny")
    assert why.startswith(f"project file {project}, an overlay on user config {user}")
    assert prof.network.allow == resolve_active("observe", env=env,
                                                workspace=str(ws))[0].network.allow

    prof, why = resolve_active(None, env={**env, "RINGFENCE_PROFILE": "observe"},
                               workspace=str(ws))
    assert (prof.name, why) == ("observe", "RINGFENCE_PROFILE")

    prof, why = resolve_active("host-assisted", env={**env, "RINGFENCE_PROFILE": "observe"},
                               workspace=str(ws))
    assert (prof.name, why) == ("host-assisted", "--profile")


def test_resolve_active_default_config_home_is_dot_config(tmp_path):
    home = tmp_path / "home"
    user = write(home, ".config/ringfence/config.toml", 'extends = "strict"\n')
    prof, why = resolve_active(None, env={"HOME": str(home)}, workspace=str(tmp_path))
    assert why == f"user config {user}" and prof.host == "deny"


def test_broken_project_file_is_an_error_not_a_fallback(tmp_path):
    write(tmp_path, ".ringfence.toml", "[netwrok]\n")
    with pytest.raises(ProfileError, match="did you mean"):
        resolve_active(None, env={"HOME": str(tmp_path)}, workspace=str(tmp_path))


# ----------------------------------------------------------------------------- helpers

def test_line_scanner_keys_and_array_elements():
    text = textwrap.dedent("""\
        name = "x"   # comment
        extends = ["a",
          "b"]
        [network]
        allow = [
          "pypi.org",   # registry
          # "commented.out",
          'files.pythonhosted.org',
        ]
        [env]
        set = { A = "1", "B" = "2" }
        """)
    lines = scan(text)
    assert lines["name"] == 1 and lines["extends[1]"] == 3
    assert lines["network.allow"] == 5 and lines["network.allow[0]"] == 6
    assert lines["network.allow[1]"] == 8 and "network.allow[2]" not in lines
    assert lines["env.set.A"] == 11 and lines["env.set.B"] == 11


@pytest.mark.parametrize("name,expected", [
    ("GITHUB_TOKEN", True), ("AWS_SECRET_ACCESS_KEY", True), ("OPENAI_API_KEY", True),
    ("PGPASSWORD", True), ("SSH_AUTH_SOCK", True), ("DATABASE_URL", True),
    ("PATH", False), ("HOME", False), ("LANG", False), ("KEYBOARD_LAYOUT", False),
    ("TERM", False),
])
def test_looks_like_credential(name, expected):
    assert looks_like_credential(name) is expected
