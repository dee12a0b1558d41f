"""Profile lint: every RF5xx rule's documented examples, exact diagnostics, the CLI."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from ringfence.profiles.lint import covers, lint
from ringfence.profiles.load import PUBLIC_BUILTINS
from ringfence.profiles.patterns import compile_pattern
from ringfence.rfcore.rules import REGISTRY

ROOT = Path(__file__).resolve().parents[2]
LINT_RULES = [r for r in REGISTRY.values() if r.code.startswith("RF5") and r.status == "active"]


def lint_text(tmp_path: Path, text: str, name: str = "profile.toml"):
    p = tmp_path / name                    # the name the rule examples assume
    p.write_text(text, encoding="utf-8")
    return p, lint(str(p))


def test_the_lint_family_is_registered():
    assert [r.code for r in LINT_RULES] == [f"RF5{n:02d}" for n in range(15)] + ["RF520", "RF540", "RF541", "RF542", "RF550"]


def example_name(rule) -> str:
    return ".ringfence.toml" if rule.code in ("RF513", "RF520") else "profile.toml"


def example_workspace(tmp_path: Path, rule, bad: bool) -> None:
    """What the example's comment describes, set up in the workspace it is linted in."""
    if rule.code != "RF520":
        return
    import subprocess

    git = ["git", "-C", str(tmp_path), "-c", "user.name=t", "-c", "user.email=t@t"]
    subprocess.run([*git, "init", "-q"], check=True)
    (tmp_path / ".env").write_text("TOKEN=x\n")
    (tmp_path / "app.py").write_text("print(1)\n")
    if not bad:
        (tmp_path / ".gitignore").write_text(".env\n")
    subprocess.run([*git, "add", "-A"], check=True)


@pytest.mark.parametrize("rule", LINT_RULES, ids=lambda r: r.code)
def test_rule_bad_example_fires(tmp_path, rule):
    example_workspace(tmp_path, rule, bad=True)
    _, diags = lint_text(tmp_path, rule.bad, example_name(rule))
    assert rule.code in [d.code for d in diags], [d.format() for d in diags]


@pytest.mark.parametrize("rule", LINT_RULES, ids=lambda r: r.code)
def test_rule_good_example_is_clean(tmp_path, rule):
    example_workspace(tmp_path, rule, bad=False)
    _, diags = lint_text(tmp_path, rule.good, example_name(rule))
    # RF510's good example opts a credential in on purpose: the RF540 warning is its cost
    diags = [d for d in diags if not (rule.code == "RF510" and d.code == "RF540")]
    assert diags == [], [d.format() for d in diags]


@pytest.mark.parametrize("name", PUBLIC_BUILTINS + ("_base",))
def test_every_builtin_lints_clean(name):
    assert lint(name) == []


def test_diagnostics_are_exact(tmp_path):
    p, diags = lint_text(tmp_path, textwrap.dedent("""\
        extends = "build"
        [filesystem]
        writable = ["~/.aws/cache"]
        [network]
        allow = ["*.com", "pypi.org/simple"]
        [env]
        pass = ["AWS_*", "NPM_TOKEN", "EDITOR_MODE"]
        allow_credentials = ["AWS_ACCESS_KEY_ID"]
        [commands]
        deny = ["git push **", "npm run {}"]
        ask = ["git push origin main", "sh*"]
        allow = ["*", "python3 **", "cargo test **", "cargo test --lib"]
        """))
    got = [(d.line, d.code, d.key, d.column) for d in diags]
    assert got == [
        (3, "RF506", "filesystem.writable[0]", None),
        (5, "RF508", "network.allow[0]", None),
        (5, "RF509", "network.allow[1]", None),
        (7, "RF510", "env.pass[0]", None),
        (7, "RF510", "env.pass[1]", None),
        (8, "RF540", "env.allow_credentials[0]", None),
        (10, "RF512", "commands.deny[1]", 9),
        (11, "RF505", "commands.ask[1]", 3),
        (11, "RF511", "commands.ask[0]", 1),
        (12, "RF507", "commands.allow[0]", 1),
        (12, "RF507", "commands.allow[1]", 1),
        (12, "RF511", "commands.allow[3]", 1),
    ]
    by_key = {d.key: d for d in diags}
    assert all(d.file == str(p) for d in diags)
    assert by_key["filesystem.writable[0]"].message == \
        "writable path '~/.aws/cache' is inside read-denied '~/.aws'"
    assert "AWS_SECRET_ACCESS_KEY" in by_key["env.pass[0]"].message   # opt-in was for another
    assert by_key["commands.ask[0]"].message == (
        f"ask rule 'git push origin main' never takes effect: deny rule 'git push **' at "
        f"{p}:10 already covers it")
    assert by_key["commands.allow[3]"].format() == (
        f"{p}:12: RF511 allow rule 'cargo test --lib' is redundant: allow rule 'cargo test **' "
        f"at {p}:12 already covers it [commands.allow[3]] (column 1)")


def test_inherited_rules_shadow_child_rules(tmp_path):
    _, diags = lint_text(tmp_path, 'extends = "strict"\n[commands]\nallow = ["git push"]\n')
    assert [(d.code, d.line, d.key) for d in diags] == [("RF511", 3, "commands.allow[0]")]
    assert "builtin/strict.toml:" in diags[0].message


def test_ineffective_network(tmp_path):
    _, diags = lint_text(tmp_path, '[network]\nmode = "proxy"\n')
    assert [(d.code, d.line, d.key) for d in diags] == [("RF514", 2, "network.mode")]
    # inherited allowlists are not the child's doing: build, but offline
    _, diags = lint_text(tmp_path, 'extends = "build"\n[network]\nmode = "none"\n')
    assert diags == []
    _, diags = lint_text(tmp_path, 'extends = "strict"\n[network]\nallow = ["a.example"]\n')
    assert [(d.code, d.line, d.key) for d in diags] == [("RF514", 3, "network.allow[0]")]


def test_glob_program_word_never_matches(tmp_path):
    _, diags = lint_text(tmp_path, "[commands]\ndeny = [\"'rm?' **\"]\n")
    assert [(d.code, d.column) for d in diags] == [("RF512", 1)]


def test_schema_problems_are_all_reported(tmp_path):
    _, diags = lint_text(tmp_path, 'host = "maybe"\n[netwrok]\n[limits]\npids = 0\n')
    assert [(d.line, d.code, d.key) for d in diags] == [
        (1, "RF502", "host"), (2, "RF501", "netwrok"), (4, "RF550", "limits.pids")]
    assert diags[1].message == 'unknown key "netwrok": did you mean "network"?'


@pytest.mark.parametrize("a,b,expected", [
    ("git push **", "git push origin main", True),
    ("git push **", "git push", True),
    ("git push *", "git push **", False),
    ("git **", "git push *", True),
    ("npm run {test,build,lint}", "npm run {test,lint}", True),
    ("npm run {test}", "npm run {test,lint}", False),
    ("npm run *", "npm run <script>", True),
    ("npm run test", "npm run *", False),
    ("**", "anything at all", True),
    ("a b", "a b c", False),
])
def test_covers(a, b, expected):
    assert covers(compile_pattern(a), compile_pattern(b)) is expected


# ----------------------------------------------------------------------------- CLI

def cli(*args: str, cwd: Path | None = None, home: Path | None = None):
    env = {**os.environ, "COLUMNS": "200"}
    env.pop("RINGFENCE_PROFILE", None)
    if home is not None:
        env.update(HOME=str(home), XDG_CONFIG_HOME=str(home / ".config"),
                   RINGFENCE_HOME=str(home / "rf"))
    return subprocess.run([sys.executable, "-m", "ringfence", *args], cwd=cwd or ROOT, env=env,
                          capture_output=True, text=True)


def test_cli_lint_reports_and_exits_1(tmp_path):
    p = tmp_path / "p.toml"
    p.write_text('extends = "build"\n[commands]\nask = ["git pu*sh"]\n')
    proc = cli("profile", "lint", "strict", str(p))
    assert proc.returncode == 1
    lines = proc.stdout.splitlines()
    assert lines[0] == (f"{p}:3: RF505 bad pattern 'git pu*sh': unexpected '*' at column 7: "
                        "'*' and '**' must be whole words (a glob inside a word is not "
                        "supported) [commands.ask[0]]")
    assert lines[1:3] == ["    git pu*sh", "          ^"]
    assert "strict: clean" in proc.stderr and "Traceback" not in proc.stderr


def test_cli_lint_clean_exits_0():
    proc = cli("profile", "lint", *PUBLIC_BUILTINS)
    assert proc.returncode == 0 and proc.stdout == ""
    assert proc.stderr.count(": clean") == len(PUBLIC_BUILTINS)


@pytest.mark.parametrize("content", [None, b"\xff\xfe\x00binary", b"[x"])
def test_cli_lint_never_tracebacks(tmp_path, content):
    p = tmp_path / "p.toml"
    if content is not None:
        p.write_bytes(content)
    proc = cli("profile", "lint", str(p))
    assert proc.returncode == 1
    assert "Traceback" not in proc.stderr + proc.stdout
    assert " RF50" in proc.stdout


def test_cli_show_says_why(tmp_path):
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / ".ringfence.toml").write_text('extends = "strict"\n')
    proc = cli("profile", "show", cwd=ws, home=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert f"active because: project file {ws / '.ringfence.toml'}" in proc.stdout
    assert 'host = "deny"' in proc.stdout


def test_cli_show_json_and_list(tmp_path):
    import json

    proc = cli("profile", "show", "host-assisted", "--json", home=tmp_path)
    data = json.loads(proc.stdout)
    assert (data["name"], data["host"], data["network"]["mode"]) == \
        ("host-assisted", "escalate", "proxy")
    proc = cli("profile", "list", cwd=tmp_path, home=tmp_path)
    assert proc.returncode == 0
    assert "● active: build (default)" in proc.stdout
    for name in PUBLIC_BUILTINS:
        assert f"builtin:{name}" in proc.stdout


def test_cli_errors_are_messages(tmp_path):
    proc = cli("profile", "show", "biuld", home=tmp_path)
    assert proc.returncode == 125
    assert 'unknown profile "biuld"' in proc.stderr and 'did you mean "build"?' in proc.stderr
    assert "Traceback" not in proc.stderr
    proc = cli("profile", "compile", "build", "--format", "pdf", home=tmp_path)
    assert proc.returncode == 2 and "unknown format 'pdf'" in proc.stderr


def test_cli_help_has_examples():
    for sub in ("list", "show", "lint", "compile"):
        proc = cli("profile", sub, "--help")
        assert proc.returncode == 0 and "Example: ringfence profile" in proc.stdout, sub


def test_cli_compile_delegates_to_the_exporter(tmp_path):
    import json

    pytest.importorskip("ringfence.compiler.export")
    ws = tmp_path / "project"   # the home itself is refused (RF616), as `run` refuses it
    ws.mkdir()
    proc = cli("profile", "compile", "strict", "--format", "json", "--workspace", str(ws),
               home=tmp_path)
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    assert data["profile"] == "strict" and data["workspace"] == str(ws)


@pytest.mark.parametrize("version", [2, 3, 4])
def test_git_index_is_read_without_git(tmp_path, version):
    import subprocess

    from ringfence.staging.git.index import tracked_paths

    git = ["git", "-C", str(tmp_path)]
    subprocess.run([*git, "init", "-q"], check=True)
    names = ["a.txt", "deep/dir/.env.local", "deep/dir/x.pem", "z/" + "long" * 30 + ".key"]
    for n in names:
        (tmp_path / n).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / n).write_text("x\n")
    subprocess.run([*git, "add", "-A"], check=True)
    if version == 3:   # the extended flags word: an intent-to-add entry
        (tmp_path / "ita.txt").write_text("x\n")
        subprocess.run([*git, "add", "-N", "ita.txt"], check=True)
        names.append("ita.txt")
    subprocess.run([*git, "update-index", "--index-version", str(version)], check=True)
    assert tracked_paths(str(tmp_path)) == sorted(names)


def test_rf520_names_the_masked_pattern_and_the_tracked_file(tmp_path):
    example_workspace(tmp_path, REGISTRY["RF520"], bad=True)
    (tmp_path / "certs").mkdir()
    (tmp_path / "certs" / "server.pem").write_text("x\n")
    import subprocess
    subprocess.run(["git", "-C", str(tmp_path), "add", "-A"], check=True)
    p, diags = lint_text(tmp_path, 'extends = "strict"\n', ".ringfence.toml")
    got = sorted((d.code, d.source) for d in diags)
    assert got == [("RF520", "{workspace}/**/*.pem"), ("RF520", "{workspace}/**/.env*")]
    env = next(d for d in diags if d.source == "{workspace}/**/.env*")
    assert "git tracks '.env'" in env.message and "git show :.env" in env.message
    assert env.file.endswith("strict.toml") and env.line is not None
