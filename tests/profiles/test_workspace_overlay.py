"""A profile file inside the workspace is an overlay on its base and may only tighten (RF513).

The base is the profile that would be active without the workspace file: the
user config if there is one, else built-in ``build``. Every loosening is refused
at load time (exit 125) with file, line and key, and lint reports the same.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from ringfence.profiles.lint import lint
from ringfence.profiles.load import load_profile, resolve_active
from ringfence.profiles.model import Network, Profile
from ringfence.profiles.overlay import loosenings
from ringfence.rfcore.errors import EXIT_UNSAFE, ProfileError

ROOT = Path(__file__).resolve().parents[2]


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text).lstrip(), encoding="utf-8")
    return path


@pytest.fixture
def home(tmp_path, monkeypatch):
    """An isolated home (no user config yet); lint reads the process environment."""
    h = tmp_path / "home"
    h.mkdir()
    monkeypatch.setenv("HOME", str(h))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(h / ".config"))
    monkeypatch.delenv("RINGFENCE_PROFILE", raising=False)
    return h


def env_of(home: Path) -> dict[str, str]:
    return {"HOME": str(home), "XDG_CONFIG_HOME": str(home / ".config")}


def user_config(home: Path, text: str) -> Path:
    return write(home / ".config/ringfence/config.toml", text)


def refused(ref: str, ws: Path, home: Path) -> ProfileError:
    with pytest.raises(ProfileError) as info:
        load_profile(ref, workspace=str(ws), env=env_of(home))
    assert info.value.exit_code == EXIT_UNSAFE
    assert info.value.message.split(": ", 1)[1].startswith("RF513 a profile file inside")
    return info.value


def rf513(path: Path) -> list[tuple[int | None, str | None, str]]:
    return [(d.line, d.key, d.message) for d in lint(str(path)) if d.code == "RF513"]


# (user config or None = built-in build, project file, line, key, message fragment)
LOOSENINGS = [
    (None, "sandbox = false\n", 1, "sandbox", "turn the sandbox off"),
    (None, 'extends = "host"\n', 1, "extends", 'turn the sandbox off (through extends = "host")'),
    (None, 'host = "escalate"\n', 1, "host", 'loosen host requests from "ask" to "escalate"'),
    (None, '[network]\nallow = ["evil.example"]\n', 2, "network.allow[0]",
     "allow the domain 'evil.example'"),
    (None, "[network]\nallow_unix_sockets = true\n", 2, "network.allow_unix_sockets",
     "allow AF_UNIX sockets"),
    (None, '[filesystem]\nwritable = ["{workspace}", "~"]\n', 2, "filesystem.writable[1]",
     "make '~' writable"),
    (None, '[filesystem]\nwritable = ["{workspace}/link"]\n', 2, "filesystem.writable[0]",
     "make '{workspace}/link' writable"),
    (None, "[filesystem]\nprivate_tmp = false\n", 2, "filesystem.private_tmp",
     "turn the private /tmp off"),
    (None, '[tooling]\ndir = "~"\n', 2, "tooling.dir", "move the writable tooling dir to '~'"),
    (None, '[env]\npass = ["PATH", "FOO"]\n', 2, "env.pass[1]",
     "pass the variable 'FOO' into the sandbox"),
    (None, '[env]\nallow_credentials = ["GH_TOKEN"]\n', 2, "env.allow_credentials[0]",
     "opt the credential 'GH_TOKEN' into the sandbox"),
    # issue 10 §1: a value that changes what runs (the classifier's RF122 table).
    (None, '[env]\nset = { LD_PRELOAD = "/w/evil.so" }\n', 2, "env.set.LD_PRELOAD",
     "set the variable 'LD_PRELOAD', which changes what runs"),
    (None, '[env.set]\nCI = "1"\nBASH_ENV = "/w/rc"\n', 3, "env.set.BASH_ENV",
     "set the variable 'BASH_ENV', which changes what runs"),
    (None, '[env]\nset = { PYTHONPATH = "/w" }\n', 2, "env.set.PYTHONPATH",
     "set the variable 'PYTHONPATH', which changes what runs"),
    (None, '[env]\nset = { NODE_OPTIONS = "-r /w/x.js" }\n', 2, "env.set.NODE_OPTIONS",
     "set the variable 'NODE_OPTIONS', which changes what runs"),
    (None, '[env]\nset = { PATH = "/w/bin:/usr/bin" }\n', 2, "env.set.PATH",
     "set the variable 'PATH', which changes what runs"),
    (None, "[limits]\ntimeout = 7200\n", 2, "limits.timeout",
     "raise limits.timeout from 3600 to 7200"),
    (None, '[commands]\nallow = [\n  "make test",\n]\n', 3, "commands.allow[0]",
     "add the allow rule 'make test'"),
    ('extends = "strict"\n', 'extends = "build"\n', 1, "extends",
     'loosen host requests from "deny" to "ask" (through extends = "build")'),
    ('extends = "strict"\n', 'host = "ask"\n', 1, "host", 'from "deny" to "ask"'),
    ('extends = "strict"\n', '[network]\nmode = "proxy"\n', 2, "network.mode",
     'open the network (mode "none" -> "proxy")'),
    ('extends = "strict"\n', "[tooling]\nenabled = true\n", 2, "tooling.enabled",
     "enable the writable tooling dir"),
    ('extends = "strict"\n[limits]\nmemory_mb = 512\n', "[limits]\nmemory_mb = 1024\n", 2,
     "limits.memory_mb", "raise limits.memory_mb from 512 to 1024"),
    ('extends = "strict"\n', 'extends = "observe"\n', 1, "extends",
     'from "deny" to "ask" (through extends = "observe")'),
]


@pytest.mark.parametrize("user,body,line,key,fragment", LOOSENINGS)
def test_every_loosening_is_refused_and_linted(tmp_path, home, user, body, line, key, fragment):
    if user is not None:
        user_config(home, user)
    ws = tmp_path / "ws"
    p = write(ws / ".ringfence.toml", body)
    err = refused(str(p), ws, home)
    assert (err.file, err.line, err.key) == (str(p), line, key)
    assert "may only tighten its base" in err.message and fragment in err.message
    assert "user config" in (err.hint or "")
    # lint: the same finding at the same place
    assert any((ln, k) == (line, key) and fragment in msg for ln, k, msg in rf513(p)), rf513(p)
    load_profile(str(p), env=env_of(home))              # outside a workspace: explicit, fine


def test_base_is_named_in_the_message(tmp_path, home):
    ws = tmp_path / "ws"
    p = write(ws / ".ringfence.toml", "host = \"escalate\"\n")
    assert "(built-in build (no user config))" in refused(str(p), ws, home).message
    user = user_config(home, 'extends = "build"\n')
    assert f"(user config {user})" in refused(str(p), ws, home).message


def test_review_reproduction_user_strict_project_build(tmp_path, home):
    user_config(home, 'extends = "strict"\n')
    ws = tmp_path / "ws"
    write(ws / ".ringfence.toml", 'extends = "build"\n')
    with pytest.raises(ProfileError) as info:
        resolve_active(None, env=env_of(home), workspace=str(ws))
    assert (info.value.exit_code, info.value.line, info.value.key) == (EXIT_UNSAFE, 1, "extends")
    found = {k for _, k, _ in rf513(ws / ".ringfence.toml")}
    assert found == {"extends"}          # every loosening it brings is reported at extends
    msgs = [m for _, _, m in rf513(ws / ".ringfence.toml")]
    assert any('open the network (mode "none" -> "proxy")' in m for m in msgs)
    assert not any("drop" in m for m in msgs)    # list extension never drops git push


REPRO_2 = """\
    extends = "strict"
    host = "ask"
    [network]
    mode = "proxy"
    allow = ["evil.example"]
    [limits]
    timeout = 600000
    """


def test_review_reproduction_loosening_over_strict_user_config(tmp_path, home):
    user_config(home, 'extends = "strict"\n')
    ws = tmp_path / "ws"
    p = write(ws / ".ringfence.toml", REPRO_2)
    with pytest.raises(ProfileError) as info:
        resolve_active(None, env=env_of(home), workspace=str(ws))
    assert (info.value.line, info.value.key) == (2, "host")
    assert [(ln, k) for ln, k, _ in rf513(p)] == [
        (2, "host"), (4, "network.mode"), (5, "network.allow[0]"), (7, "limits.timeout")]


def test_review_reproduction_over_builtin_build(tmp_path, home):
    ws = tmp_path / "ws"
    p = write(ws / ".ringfence.toml", REPRO_2)
    err = refused(str(p), ws, home)
    assert (err.line, err.key) == (5, "network.allow[0]")
    # host "ask" and mode "proxy" equal build's: not looser; the rest is
    assert [(ln, k) for ln, k, _ in rf513(p)] == [(5, "network.allow[0]"), (7, "limits.timeout")]


def rules_of(profile: Profile, action: str) -> list[str]:
    return [r.pattern for r in profile.rules if r.action == action]


def test_tightening_is_accepted_and_effective(tmp_path, home):
    user = user_config(home, 'extends = "strict"\n')
    ws = tmp_path / "ws"
    project = write(ws / ".ringfence.toml", """\
        description = "team rules"
        [commands]
        deny = ["npm run deploy **"]
        ask = ["make release"]
        [filesystem]
        read_deny = ["{workspace}/secrets"]
        write_protect = ["Makefile"]
        [network]
        deny = ["*.evil.example"]
        [limits]
        timeout = 60
        [env.set]
        CI = "1"
        """)
    strict, _ = resolve_active(None, env=env_of(home), workspace=str(tmp_path / "empty"))
    assert strict.source == str(user)
    prof, why = resolve_active(None, env=env_of(home), workspace=str(ws))
    assert why.startswith(f"project file {project}, an overlay on user config {user}")
    assert "may only tighten" in why
    assert (prof.host, prof.network.mode, prof.sandbox) == ("deny", "none", True)
    assert rules_of(prof, "deny") == rules_of(strict, "deny") + ["npm run deploy **"]
    assert "git push **" in rules_of(prof, "deny")
    assert rules_of(prof, "ask") == rules_of(strict, "ask") + ["make release"]
    assert prof.filesystem.read_deny == strict.filesystem.read_deny + ("{workspace}/secrets",)
    assert prof.filesystem.write_protect == strict.filesystem.write_protect + ("Makefile",)
    assert prof.filesystem.writable == strict.filesystem.writable
    assert prof.network.deny == strict.network.deny + ("*.evil.example",)
    assert prof.limits.timeout == 60 and prof.limits.pids == strict.limits.pids
    assert dict(prof.env.set)["CI"] == "1" and prof.env.pass_ == strict.env.pass_
    assert prof.description == "team rules" and prof.source == str(project)
    assert str(user) in prof.extends             # the chain shows the base
    assert rf513(project) == []


def test_extends_naming_the_base_or_a_stricter_profile_is_accepted(tmp_path, home):
    ws = tmp_path / "ws"
    p = write(ws / ".ringfence.toml", 'extends = "build"\n[commands]\ndeny = ["curl **"]\n')
    prof = load_profile(str(p), workspace=str(ws), env=env_of(home))
    assert prof.host == "ask" and rules_of(prof, "deny")[-1] == "curl **"
    write(ws / ".ringfence.toml", 'extends = "strict"\n')       # stricter than build
    prof = load_profile(str(p), workspace=str(ws), env=env_of(home))
    assert (prof.host, prof.network.mode) == ("deny", "none")
    # a user config that extends build: the project's extends = "build" is not re-applied
    # over the user's own overrides
    user_config(home, 'extends = "build"\nhost = "deny"\n')
    write(ws / ".ringfence.toml", 'extends = "build"\n')
    assert load_profile(str(p), workspace=str(ws), env=env_of(home)).host == "deny"


def test_profile_flag_naming_a_workspace_file_is_an_overlay_too(tmp_path, home):
    user = user_config(home, 'extends = "strict"\n')
    ws = tmp_path / "ws"
    team = write(ws / "ci/team.toml", '[network]\nmode = "proxy"\n')
    with pytest.raises(ProfileError) as info:
        resolve_active(str(team), env=env_of(home), workspace=str(ws))
    assert (info.value.file, info.value.line, info.value.key) == (str(team), 2, "network.mode")
    write(ws / "ci/team.toml", '[commands]\ndeny = ["make deploy"]\n')
    prof, why = resolve_active(str(team), env=env_of(home), workspace=str(ws))
    assert why == (f"--profile, an overlay on user config {user}: a profile file inside the "
                   "workspace is applied on top of the profile that would be active without "
                   "it and may only tighten it")
    assert prof.host == "deny" and rules_of(prof, "deny")[-1] == "make deploy"
    # a path outside the workspace is the user's own explicit choice: not an overlay
    outside = write(tmp_path / "mine.toml", '[network]\nmode = "proxy"\nallow = ["pypi.org"]\n')
    prof, why = resolve_active(str(outside), env=env_of(home), workspace=str(ws))
    assert (why, prof.network.mode) == ("--profile", "proxy")


def test_workspace_file_extending_a_loose_file_outside_by_path(tmp_path, home):
    outside = write(tmp_path / "loose.toml", 'sandbox = false\n')
    ws = tmp_path / "ws"
    p = write(ws / "team.toml", f'extends = "{outside}"\n')
    err = refused(str(p), ws, home)
    assert (err.line, err.key) == (1, "extends") and "turn the sandbox off" in err.message


def test_a_user_config_that_extends_a_workspace_file_is_no_base(tmp_path, home):
    ws = tmp_path / "ws"
    project = write(ws / ".ringfence.toml", "host = \"escalate\"\n")
    user_config(home, f'extends = "{project}"\n')
    err = refused(str(project), ws, home)
    assert "(built-in build (no user config))" in err.message


def test_user_config_is_trusted_even_when_the_workspace_is_home(home):
    user = user_config(home, 'extends = "build"\n[commands]\nallow = ["make test"]\n')
    prof, why = resolve_active(None, env=env_of(home), workspace=str(home))
    assert why == f"user config {user}" and "make test" in rules_of(prof, "allow")
    write(home / ".ringfence.toml", '[commands]\nallow = ["make test", "make deploy"]\n')
    with pytest.raises(ProfileError, match="cannot add the allow rule 'make deploy'"):
        resolve_active(None, env=env_of(home), workspace=str(home))


def test_dropped_entries_are_loosenings_even_though_merging_cannot_drop():
    base = Profile(name="b", network=Network(mode="proxy", allow=("a.example",),
                                             deny=("*.evil.example",)))
    result = Profile(name="r", network=Network(mode="proxy", allow=("a.example",)))
    assert loosenings(base, result) == [
        ("network.deny", "drop the network deny entry '*.evil.example'", None)]
    assert loosenings(base, base) == []
    assert loosenings(result, base) == []          # adding a deny is tightening


def test_limit_removed_is_a_loosening():
    from ringfence.profiles.model import Limits

    base = Profile(name="b", limits=Limits(timeout=60))
    assert loosenings(base, Profile(name="r")) == [
        ("limits.timeout", "remove limits.timeout (was 60)", None)]
    assert loosenings(base, Profile(name="r", limits=Limits(timeout=30))) == []


def run_cli(*args: str, cwd: Path, home: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "HOME": str(home), "XDG_CONFIG_HOME": str(home / ".config"),
           "RINGFENCE_HOME": str(home / "rf"), "PYTHONPATH": str(ROOT), "COLUMNS": "200"}
    env.pop("RINGFENCE_PROFILE", None)
    return subprocess.run([sys.executable, "-m", "ringfence", *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=120)


def test_run_in_a_workspace_with_a_loosening_project_file_runs_nothing(tmp_path, home):
    user_config(home, 'extends = "strict"\n')
    ws = tmp_path / "ws"
    project = write(ws / ".ringfence.toml", REPRO_2)
    marker = ws / "marker"
    proc = run_cli("run", "-w", str(ws), "--", "touch", str(marker), cwd=ws, home=home)
    assert proc.returncode == EXIT_UNSAFE, proc.stderr
    assert f"{project}:2: RF513 a profile file inside the workspace may only tighten" \
        in proc.stderr
    assert "Traceback" not in proc.stderr
    assert not marker.exists()


def test_profile_show_says_overlay_and_lint_cli_reports(tmp_path, home):
    ws = tmp_path / "ws"
    project = write(ws / ".ringfence.toml", '[commands]\ndeny = ["curl **"]\n')
    proc = run_cli("profile", "show", cwd=ws, home=home)
    assert proc.returncode == 0, proc.stderr
    assert (f"active because: project file {project}, an overlay on built-in build "
            "(no user config)") in proc.stdout
    write(ws / ".ringfence.toml", REPRO_2)
    proc = run_cli("profile", "lint", str(project), cwd=ws, home=home)
    assert proc.returncode == 1 and "Traceback" not in proc.stderr
    assert f"{project}:5: RF513 " in proc.stdout and "[network.allow[0]]" in proc.stdout


def doc_examples(doc: str) -> tuple[str, str]:
    """(project example, user-config example) TOML blocks of a document."""
    import re

    text = (ROOT / doc).read_text(encoding="utf-8")
    blocks = re.findall(r"```toml\n(.*?)```", text, re.S)
    project = [b for b in blocks if b.startswith("# .ringfence.toml in your project")]
    user = [b for b in blocks if 'description = "build + our internal registry"' in b]
    assert len(project) == 1 and len(user) == 1, doc
    return project[0], user[0]


@pytest.mark.parametrize("doc", ["README.md", "docs/profiles.md"])
@pytest.mark.parametrize("user_text", ["doc", None, 'extends = "strict"\n'])
def test_documented_examples_are_a_valid_overlay(tmp_path, home, doc, user_text):
    project_text, doc_user = doc_examples(doc)
    if user_text is not None:
        user = user_config(home, doc_user if user_text == "doc" else user_text)
        from ringfence.profiles.lint import WARNINGS
        # the documented user config opts NPM_TOKEN in on purpose: a warning, no error
        assert [d for d in lint(str(user)) if d.code not in WARNINGS] == []
    ws = tmp_path / "ws"
    project = write(ws / ".ringfence.toml", project_text)
    assert lint(str(project)) == [], [d.format() for d in lint(str(project))]
    prof, why = resolve_active(None, env=env_of(home), workspace=str(ws))
    assert why.startswith(f"project file {project}, an overlay on ")
    assert prof.limits.timeout == 900 and "npm run deploy **" in rules_of(prof, "deny")
    assert prof.network.deny[-1] == "uploads.corp.example.com"
    if user_text == "doc":
        assert "npm.corp.example.com" in prof.network.allow
