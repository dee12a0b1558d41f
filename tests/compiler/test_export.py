"""Exporters: golden files per built-in profile and format, plus the mappings."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import shlex
import sys
from pathlib import Path

import pytest

from ringfence.compiler import export as export_mod
from ringfence.compiler import seccomp
from ringfence.compiler.backends import bwrap as bwrap_backend
from ringfence.compiler.backends.claude_settings import bash_rules
from ringfence.compiler.backends.exportlib import srt_domains
from ringfence.compiler.backends.seatbelt import _glob_regex
from ringfence.compiler.compile import compile_profile
from ringfence.profiles.load import load_profile
from ringfence.profiles.model import CommandRule, Filesystem, Network, Profile
from ringfence.rfcore.errors import UsageError
from tests.compiler.fakehost import HOME, WS, fake_host

GOLDEN = Path(__file__).parent / "golden" / "export"
UPDATE = os.environ.get("RINGFENCE_UPDATE_GOLDEN") == "1"
BUILTINS = ("observe", "build", "strict", "host-assisted")
EXT = {"srt": "json", "seatbelt": "sb", "claude-code": "json"}
GOLDEN_ENV = {"HOME": HOME}   # ringfence's own dirs at their XDG defaults


def golden(name: str, text: str) -> None:
    path = GOLDEN / name
    if UPDATE:
        GOLDEN.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    assert path.is_file(), f"missing golden {path} (RINGFENCE_UPDATE_GOLDEN=1 writes it)"
    assert text == path.read_text(), f"{name} differs from its golden file"


@pytest.mark.parametrize("fmt", ["srt", "seatbelt", "claude-code"])
@pytest.mark.parametrize("name", BUILTINS)
def test_golden(name, fmt):
    result = export_mod.render(load_profile(name), fmt, workspace=WS, env=GOLDEN_ENV)
    golden(f"{name}.{fmt}.{EXT[fmt]}", result.text)
    # whatever could not be expressed is in the output itself, too
    assert result.unsupported
    for item in result.unsupported:
        assert item in result.text


@pytest.mark.parametrize("name", BUILTINS)
def test_json_and_bwrap_delegate_to_the_compiler(name):
    """json/bwrap are the compiler's own output (its golden tests pin the content)."""
    profile = load_profile(name)
    host = fake_host(profile, WS)
    spec = compile_profile(profile, WS, host)
    got = export_mod.render(profile, "json", workspace=WS, host=host)
    assert json.loads(got.text) == spec.to_json()
    assert got.unsupported == [f"{n.code}: {n.message}" for n in spec.notes]
    text = export_mod.render(profile, "bwrap", workspace=WS, host=host).text
    assert f"# spec digest {spec.digest()}" in text
    words = shlex.split(text.split("\nexec bwrap", 1)[1].replace("\\\n", " "))
    words.insert(0, "bwrap")
    expected = bwrap_backend.render(spec, ["$@"], seccomp_fd=9,
                                    proxy_dir="$RINGFENCE_PROXY_DIR" if spec.proxy else None,
                                    env={n: f"${n}" for n in host.env_names}, inline_env=True,
                                    handoff_fd=8 if spec.proxy else None)
    assert words == expected
    assert subprocess.run(["sh", "-n"], input=text, text=True).returncode == 0


def test_srt_schema_shape():
    data = json.loads(export_mod.render(load_profile("build"), "srt", workspace=WS).text)
    assert set(data) == {"network", "filesystem", "_setup", "_unsupported", "_source"}
    assert set(data["network"]) == {"allowedDomains", "deniedDomains", "allowAllUnixSockets"}
    assert set(data["filesystem"]) == {"denyRead", "allowWrite", "denyWrite"}
    # unported ringfence allow entries mean 80/443 only: srt needs explicit ports
    assert "pypi.org:443" in data["network"]["allowedDomains"]
    assert "pypi.org" not in data["network"]["allowedDomains"]
    # unported denials mean every port in both
    assert data["network"]["deniedDomains"] == ["169.254.169.254", "metadata.google.internal"]
    # srt's own TMPDIR (/tmp/claude) is writable, or mktemp fails (issue 14)
    assert data["filesystem"]["allowWrite"] == [WS, "~/.cache/ringfence/tooling",
                                                "/tmp/claude", "/private/tmp/claude"]
    assert "mkdir -p -m 700 /tmp/claude" in data["_setup"][0]
    assert f"{WS}/.git/hooks" in data["filesystem"]["denyWrite"]
    assert "~/.ssh" in data["filesystem"]["denyRead"]


def test_srt_domain_translation():
    notes: list[str] = []
    got = srt_domains(("**.example.com", "*.svc.test:*", "api.x.com:8443", "[::1]:9000",
                       "intranet", "https://bad"), deny=False, unsupported=notes)
    assert got == ["example.com:80", "example.com:443", "*.example.com:80", "*.example.com:443",
                   "*.svc.test", "api.x.com:8443", "[::1]:9000"]
    assert len(notes) == 2
    assert "'intranet': single-label" in notes[0]
    assert "'https://bad' is invalid" in notes[1]
    assert srt_domains(("**.evil.com",), deny=True, unsupported=[]) == ["evil.com", "*.evil.com"]


def _custom(**kw) -> Profile:
    base = dict(name="custom", filesystem=Filesystem(writable=("{workspace}",),
                                                     write_protect=(".git/hooks",)),
                network=Network(mode="proxy", allow=("**.corp.test", "pypi.org"),
                                deny=("secret.corp.test",)))
    base.update(kw)
    return Profile(**base)


def test_private_address_rule_is_reported():
    result = export_mod.render(_custom(), "srt", workspace=WS)
    assert any("only exact entries may" in u and "**.corp.test" in u for u in result.unsupported)


@pytest.mark.parametrize("pattern,action,rules,note", [
    ("git push **", "ask", ["Bash(git push)", "Bash(git push *)"], None),
    ("npm run {test,build}", "allow", ["Bash(npm run test)", "Bash(npm run build)"], None),
    ("make", "allow", ["Bash(make)"], None),
    ("grep 'a b' **", "allow", ["Bash(grep 'a b')", "Bash(grep 'a b' *)"], None),
    ("gh pr view *", "ask", ["Bash(gh pr view)", "Bash(gh pr view *)"], "exported as a prefix rule (it asks more)"),
    ("kubectl delete <what> **", "deny", ["Bash(kubectl delete)", "Bash(kubectl delete *)"], "it denys more"),
    ("longbridge news <ticker>", "allow", [], "not exported (widening an allow"),
    ("git push *", "allow", [], "not exported (widening an allow"),
    ("git*", "deny", [], "does not parse"),
])
def test_bash_rule_mapping(pattern, action, rules, note):
    notes: list[str] = []
    assert bash_rules(pattern, action, notes) == rules
    if note is None:
        assert notes == []
    else:
        assert len(notes) == 1 and note in notes[0]


def test_claude_code_block():
    profile = _custom(host="deny", rules=(CommandRule("deny", "git push **"),
                                          CommandRule("allow", "npm test"),
                                          CommandRule("ask", "rm *")))
    data = json.loads(export_mod.render(profile, "claude-code", workspace=WS).text)
    sb = data["sandbox"]
    assert (sb["enabled"], sb["autoAllowBashIfSandboxed"], sb["allowUnsandboxedCommands"]) == (
        True, True, False)
    assert sb["filesystem"]["allowWrite"] == ["/" + WS]          # "//abs" = absolute
    assert sb["network"]["allowedDomains"] == ["corp.test:80", "corp.test:443", "*.corp.test:80",
                                               "*.corp.test:443", "pypi.org:80", "pypi.org:443"]
    perms = data["permissions"]
    assert perms["allow"] == ["Bash(npm test)"]
    assert perms["ask"] == ["Bash(rm)", "Bash(rm *)"]       # never the deprecated `:*`
    assert {"Bash(git push)", "Bash(git push *)"} <= set(perms["deny"])
    assert not any(":*)" in r for k in perms for r in perms[k])
    assert "WebFetch(domain:secret.corp.test)" in perms["deny"]
    assert sb["network"]["deniedDomains"] == ["secret.corp.test"]
    assert f"Edit(/{WS}/.git/hooks)" in perms["deny"]
    assert any("`git -C dir push`, `/usr/bin/git push`" in u for u in data["_unsupported"])


def _cc(name):
    return json.loads(export_mod.render(load_profile(name), "claude-code", workspace=WS).text)


@pytest.mark.parametrize("name", BUILTINS)
def test_claude_code_fails_closed_without_bwrap(name):
    assert _cc(name)["sandbox"]["failIfUnavailable"] is True


def test_claude_code_network_deny_list_and_strict_blocking():
    build = _cc("build")["sandbox"]["network"]
    assert build["deniedDomains"] == ["169.254.169.254", "metadata.google.internal"]
    for name in ("build", "strict", "observe"):
        net = _cc(name)["sandbox"]["network"]
        assert net["strictAllowlist"] is True          # refuse, never prompt
    strict = _cc("strict")
    assert strict["sandbox"]["network"]["allowedDomains"] == []
    assert "WebFetch" in strict["permissions"]["deny"]
    assert "WebFetch" not in _cc("build")["permissions"]["deny"]


def test_claude_code_observe_writes_nothing():
    data = _cc("observe")
    assert data["sandbox"]["filesystem"]["allowWrite"] == []
    assert data["sandbox"]["filesystem"]["denyWrite"][0] == "/" + WS     # the cwd too
    assert {"Edit", "Write", "NotebookEdit"} <= set(data["permissions"]["deny"])
    build = _cc("build")
    assert "/" + WS not in build["sandbox"]["filesystem"]["denyWrite"]
    assert "Edit" not in build["permissions"]["deny"]


def test_claude_code_exports_validate_against_schemastore():
    """SchemaStore's claude-code-settings.json, when a copy is provided (never committed)."""
    path = os.environ.get("RINGFENCE_CC_SCHEMA")
    if not path or not Path(path).is_file():
        pytest.skip("set RINGFENCE_CC_SCHEMA to a copy of SchemaStore's "
                    "claude-code-settings.json (not redistributed here)")
    jsonschema = pytest.importorskip("jsonschema", reason="validating needs jsonschema "
                                     "(`pip install jsonschema`)")
    schema = json.loads(Path(path).read_text())
    for name in BUILTINS:
        jsonschema.validate(_cc(name), schema)


def test_export_warns_on_stderr(capsys, tmp_path):
    (tmp_path / "ws").mkdir()
    text = export_mod.export(load_profile("strict"), "srt", workspace=str(tmp_path / "ws"),
                             home=str(tmp_path))
    err = capsys.readouterr().err.splitlines()
    data = json.loads(text)
    assert err == [f"ringfence: warning: srt export cannot express: {u}"
                   for u in data["_unsupported"]]
    assert any("command rule" in line for line in err)


def test_unknown_format():
    with pytest.raises(UsageError, match="unknown export format 'docker'") as exc:
        export_mod.render(load_profile("build"), "docker", workspace=WS)
    assert "bwrap, json, srt, seatbelt, claude-code" in str(exc.value)


@pytest.mark.parametrize("glob,path,hit", [
    ("/w/**/.env*", "/w/.env", True),
    ("/w/**/.env*", "/w/a/b/.env.local", True),
    ("/w/**/.env*", "/w/.env/inner", True),
    ("/w/**/.env*", "/w/env", False),
    ("/w/**/*.pem", "/w/certs/x.pem", True),
    ("/w/**/*.pem", "/w/certs/x.pem.txt", False),
    ("/w/id_?", "/w/id_a", True),
    ("/w/id_?", "/w/id_ab", False),
])
def test_seatbelt_glob_regex(glob, path, hit):
    assert bool(re.match(_glob_regex(glob), path)) is hit


@pytest.mark.sandbox
@pytest.mark.skipif(not shutil.which("bwrap") or seccomp.host_arch() is None,
                    reason="needs bwrap and a supported architecture")
def test_bwrap_export_runs(tmp_path):
    """The exported strict command line really runs, with the filter on fd 9."""
    ws = tmp_path / "ws"
    ws.mkdir()
    text = export_mod.render(load_profile("strict"), "bwrap", workspace=str(ws)).text
    script = tmp_path / "strict.sh"
    script.write_text(text)
    bpf = tmp_path / "filter.bpf"
    bpf.write_bytes(seccomp.build_filter(seccomp.host_arch(), deny_unix_sockets=True))
    probe = ("import socket\ntry:\n socket.socket(socket.AF_UNIX); print('unix ok')\n"
             "except PermissionError: print('unix EPERM')\n"
             "open('written', 'w').write('x')\n")
    r = subprocess.run(["sh", "-c", f'exec 9<"{bpf}"; exec sh "{script}" "$@"', "sh",
                        "/usr/bin/python3", "-I", "-c", probe],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    assert r.stdout == "unix EPERM\n"
    assert (ws / "written").read_text() == "x"


# --- issue 14: export fidelity ----------------------------------------------------

@pytest.mark.parametrize("fmt", ["srt", "seatbelt"])
def test_exports_hide_ringfences_own_dirs_where_the_env_puts_them(fmt):
    """The ledger (earlier commands and their output) and the user's profile are
    hidden by `run`; the exports must hide the same directories, honoring XDG."""
    env = {"HOME": HOME, "XDG_CONFIG_HOME": "/cfg", "XDG_STATE_HOME": f"{HOME}/st",
           "XDG_CACHE_HOME": "/cache"}
    text = export_mod.render(load_profile("build"), fmt, workspace=WS, env=env).text
    for wanted in ("/cfg/ringfence", "~/st/ringfence" if fmt == "srt" else "/st/ringfence",
                   "/cache/ringfence/patterns"):
        assert wanted in text, wanted
    if fmt == "srt":
        deny = json.loads(text)["filesystem"]["denyRead"]
        assert {"/cfg/ringfence", "~/st/ringfence", "/cache/ringfence/patterns"} <= set(deny)
    env = {"HOME": HOME, "RINGFENCE_HOME": "/srv/rf"}
    text = export_mod.render(load_profile("strict"), fmt, workspace=WS, env=env).text
    assert "/srv/rf" in text


def _sbpl_balanced(text: str) -> bool:
    depth = 0
    for line in text.splitlines():
        code = re.sub(r'"(\\.|[^"\\])*"', '""', line).split(";", 1)[0]
        for ch in code:
            depth += {"(": 1, ")": -1}.get(ch, 0)
            if depth < 0:
                return False
    return depth == 0


@pytest.mark.parametrize("name", BUILTINS)
def test_seatbelt_is_narrow_and_works_on_a_real_mac_layout(name):
    text = export_mod.render(load_profile(name), "seatbelt", workspace="/tmp/ws",
                             env=GOLDEN_ENV).text
    assert _sbpl_balanced(text)
    rules = [line.split(";", 1)[0].strip() for line in text.splitlines()]
    # never unrestricted (srt and Codex name services and sysctls)
    assert "(allow mach-lookup)" not in rules and "(allow sysctl-read)" not in rules
    assert '(global-name "com.apple.system.opendirectoryd.libinfo")' in text
    assert "com.apple.SecurityServer" not in text and "securityd" not in text
    for needed in ("(allow ipc-posix-sem)", "(allow process-info* (target same-sandbox))",
                   "(allow user-preference-read)", "(allow mach-host*)", "(allow pseudo-tty)"):
        assert needed in rules, needed
    assert '(literal "/dev/tty")' in text and "^/dev/ttys[0-9]+$" in text
    # symlinked paths in both forms: /tmp is /private/tmp, TMPDIR is /private/var/...
    if "{workspace}" in load_profile(name).filesystem.writable:
        assert '(subpath "/tmp/ws")' in text and '(subpath "/private/tmp/ws")' in text
    assert '(string-append "/private" (param "TMPDIR"))' in text
    # macOS credential stores beside the Linux ones
    for mac in ("/Library/Keychains", "/Library/Cookies", "/Library/Application Support/Google/Chrome",
                "/Library/Application Support/Firefox"):
        assert mac in text, mac
    # every rule block says which reference system does the same
    assert text.count("(srt, Codex)") >= 5


def test_seatbelt_says_there_is_no_proxy_on_macos():
    result = export_mod.render(load_profile("build"), "seatbelt", workspace=WS, env=GOLDEN_ENV)
    assert any("ringfence has no proxy on macOS" in u for u in result.unsupported)
    assert "ringfence has\n;; NO proxy on macOS" in result.text


def _srt() -> str | None:
    found = shutil.which("srt")
    if found:
        return found
    for base in (Path(__file__).resolve().parents[2] / "bench" / ".cache" / "npm",
                 Path(__file__).resolve().parents[2] / "bench"):
        cand = base / "node_modules" / ".bin" / "srt"
        if cand.exists():
            return str(cand)
    return None


@pytest.mark.sandbox
@pytest.mark.skipif(_srt() is None, reason="srt (npm @anthropic-ai/sandbox-runtime) is not "
                    "installed; `make bench` installs it into bench/.cache/npm")
def test_srt_runs_the_export_mktemp_works_and_the_ledger_is_hidden(tmp_path):
    home = tmp_path / "home"
    (home / "proj").mkdir(parents=True)
    state = home / ".local" / "state" / "ringfence"
    state.mkdir(parents=True)
    (state / "ledger.db").write_text("EARLIER-COMMAND-OUTPUT")
    env = {**os.environ, "HOME": str(home)}
    for k in ("RINGFENCE_HOME", "XDG_STATE_HOME", "XDG_CONFIG_HOME", "XDG_CACHE_HOME"):
        env.pop(k, None)
    settings = tmp_path / "srt.json"
    settings.write_text(export_mod.render(load_profile("build"), "srt", workspace=str(home / "proj"),
                                          env=env).text)
    os.makedirs("/tmp/claude", mode=0o700, exist_ok=True)   # the export's _setup step
    if os.stat("/tmp/claude").st_uid != os.getuid():
        # srt's TMPDIR is one fixed path per machine: another user's (root's
        # phase of `make test`) is not ours to write. The export's notes say so.
        pytest.skip("/tmp/claude belongs to another user; srt's fixed TMPDIR cannot be "
                    "shared between users")
    proc = subprocess.run([_srt(), "-s", str(settings), "-c",
                           f"f=$(mktemp) && echo MKTEMP-OK; cat {state}/ledger.db; "
                           "echo w > written && echo WS-OK"],
                          cwd=home / "proj", env=env, capture_output=True, text=True, timeout=120)
    assert "MKTEMP-OK" in proc.stdout and "WS-OK" in proc.stdout, proc.stderr
    assert "EARLIER-COMMAND-OUTPUT" not in proc.stdout + proc.stderr
    assert (state / "ledger.db").read_text() == "EARLIER-COMMAND-OUTPUT"


@pytest.mark.sandbox
@pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap is not installed")
def test_the_printed_bwrap_script_runs_as_printed(tmp_path):
    """Issue 14: the export used to leave fd 9 to a comment ("Can't read seccomp data:
    Bad file descriptor"). As printed, it now writes the filter, opens fd 9 and starts
    a real sandbox: writes stay in the workspace, the seccomp filter is on."""
    ws = tmp_path / "ws"
    ws.mkdir()
    outside = tmp_path / "outside"
    outside.write_text("host file")
    script = tmp_path / "strict.sh"
    env = {**os.environ, "HOME": str(tmp_path), "XDG_CONFIG_HOME": str(tmp_path / ".config"),
           "RINGFENCE_HOME": str(tmp_path / "rf")}
    proc = subprocess.run([sys.executable, "-m", "ringfence", "profile", "compile", "strict",
                           "--format", "bwrap", "-w", str(ws)], env=env, capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    script.write_text(proc.stdout)
    probe = ("echo in-sandbox > made; echo changed > %s 2>/dev/null; "
             "python3 -I -c 'import socket; socket.socket(socket.AF_UNIX)' 2>/dev/null "
             "&& echo UNIX-OK || echo UNIX-DENIED" % outside)
    run = subprocess.run(["sh", str(script), "sh", "-c", probe], cwd=ws, env=env,
                         capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    assert "Bad file descriptor" not in run.stderr
    assert run.stdout.strip() == "UNIX-DENIED"          # the seccomp filter is applied
    assert (ws / "made").read_text() == "in-sandbox\n"  # the workspace is writable
    assert outside.read_text() == "host file"            # the rest of the host is not
    build = subprocess.run([sys.executable, "-m", "ringfence", "profile", "compile", "build",
                            "--format", "bwrap", "-w", str(ws)], env=env, capture_output=True,
                           text=True, timeout=120)
    refused = subprocess.run(["sh", "-c", build.stdout, "sh", "true"], cwd=ws,
                             env={k: v for k, v in env.items() if k != "RINGFENCE_PROXY_DIR"},
                             capture_output=True, text=True, timeout=60)
    assert refused.returncode == 125 and "RINGFENCE_PROXY_DIR" in refused.stderr
