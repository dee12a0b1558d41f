"""rfcore/credentials.py: the one table, XDG and override aware; what a credential
variable looks like by name and by value (issue 21)."""

from __future__ import annotations

import pytest

from ringfence.rfcore.credentials import (export_paths, is_credential_path, locations,
                                          name_looks_like_credential,
                                          value_looks_like_credential)


def test_table_honours_xdg_and_tool_overrides():
    env = {"XDG_CONFIG_HOME": "/cfg", "XDG_DATA_HOME": "/data", "CODEX_HOME": "/cx",
           "KUBECONFIG": "/k/a:/k/b", "AWS_SHARED_CREDENTIALS_FILE": "/aws/creds",
           "HISTFILE": "/h/hist", "DOCKER_CONFIG": "/dk"}
    paths = dict(locations("/home/u", env))
    for p in ("/cfg/gh", "/cfg/github-copilot", "/data/keyrings", "/cx", "/k/a",
              "/k/b", "/aws/creds", "/h/hist", "/dk", "/cfg/uv/uv.toml", "/home/u/.ssh",
              "/home/u/.claude/.credentials.json", "/home/u/.vault-token", "/home/u/.pgpass",
              "/home/u/.m2/settings.xml", "/home/u/.gradle/gradle.properties",
              "/cfg/composer/auth.json", "/cfg/rclone/rclone.conf", "/home/u/.env",
              "/home/u/.bash_history", "/home/u/.python_history", "/cfg/sops/age/keys.txt"):
        assert p in paths, p
    assert "/home/u/.config/gh" not in paths            # moved by XDG_CONFIG_HOME
    # a variable naming a tool's config dir masks all of it; a toolchain home only
    # the named file (CARGO_HOME holds cargo itself); never the home or / itself
    more = dict(locations("/home/u", {"CARGO_HOME": "/usr/local/cargo", "CLAUDE_CONFIG_DIR":
                                      "/home/u", "CODEX_HOME": "/"}))
    assert "/usr/local/cargo/credentials.toml" in more and "/usr/local/cargo" not in more
    assert "/home/u" not in more and "/" not in more
    assert "~/.config/gh" in export_paths({}) and "~/.codex/auth.json" in export_paths({})
    assert is_credential_path("/home/u/.config", "/home/u", {})      # holds gh, gcloud...
    assert not is_credential_path("/home/u/.config/nvim", "/home/u", {})


@pytest.mark.parametrize("name,expected", [
    ("GITHUB_TOKEN", True), ("GH_HOST", True), ("NPM_TOKEN", True), ("AWS_REGION", True),
    ("AZURE_TENANT_ID", True), ("GCP_PROJECT", True), ("MY_API_KEY", True),
    ("DB_PASSWORD", True), ("CLIENT_SECRET", True), ("SIGNING_KEY", True),
    ("LANG", False), ("TERM", False), ("KEYBOARD_LAYOUT", False), ("SSL_CERT_FILE", False),
    ("PATH", False), ("PIP_CERT", False), ("GIT_SSL_CAINFO", False)])
def test_names(name, expected):
    assert name_looks_like_credential(name) is expected


@pytest.mark.parametrize("value,expected", [
    ("eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U", True),
    ("ghp_" + "a" * 36, True), ("github_pat_" + "A1" * 20, True), ("AKIAIOSFODNN7EXAMPLE", True),
    ("xoxb-123456789012-abcdefghij", True), ("sk-ant-" + "x" * 30, True),
    ("https://user:pw@example.com/x", True), ("-----BEGIN RSA PRIVATE KEY-----", True),
    ("en_US.UTF-8", False), ("xterm-256color", False), ("/usr/bin:/bin", False),
    ("https://example.com/x", False), ("di=01;34:ln=01;36", False)])
def test_values(value, expected):
    assert value_looks_like_credential(value) is expected
