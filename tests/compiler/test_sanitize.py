"""compiler/sanitize.py: configs served in the masked home keep what tools need and
lose every secret (issue 21)."""

from __future__ import annotations

from ringfence.compiler.sanitize import gitconfig, ini_urls, npmrc, sanitized

TOK = "ghp_" + "Z9y8X7w6V5u4T3s2R1q0P9o8N7m6L5k4J3i2"


def test_gitconfig_keeps_identity_and_drops_credentials():
    text = (f"[user]\n\tname = A\n\temail = a@x\n[credential]\n\thelper = store\n"
            f"[credential \"https://h\"]\n\tusername = u\n[Credential]helper = x\n"
            f"[url \"https://{TOK}@github.com/\"]\n\tinsteadOf = https://github.com/\n"
            f"[http \"https://u:pw@h/\"]\n\tsslVerify = false\n"
            f"[http]\n\textraHeader = Authorization: Bearer zzz\n"
            f"[remote \"o\"]\n\turl = https://me:secretpw@host/r.git\n"
            f"[sendemail]\n\tsmtpPass = hunter2\n[github]\n\ttoken = {TOK}\n"
            f"[alias]\n\tst = status\n[core]\n\tpager = less \\\n\t  -R\n")
    out = gitconfig(text)
    assert "name = A" in out and "email = a@x" in out and "st = status" in out
    assert "pager = less \\\n\t  -R" in out
    assert "url = https://host/r.git" in out
    for gone in ("helper", "credential", "insteadOf", "sslVerify", "extraHeader", "Bearer",
                 "secretpw", "hunter2", "token", TOK, "pw@"):
        assert gone not in out, gone


def test_npmrc_and_pip_conf():
    out = npmrc(f"registry=https://registry.npmjs.org/\n//registry.npmjs.org/:_authToken={TOK}\n"
                "//npm.corp/:_auth=dXNlcjpwYXNz\nemail=a@x\n@corp:registry=https://npm.corp/\n"
                "always-auth=true\n")
    # always-auth goes too (an auth setting, and there is no auth left to send)
    assert out == "registry=https://registry.npmjs.org/\n@corp:registry=https://npm.corp/\n"
    out = ini_urls("[global]\nindex-url = https://__token__:pypi-abc@pypi.corp/simple\n"
                   "extra-index-url =\n    https://u:p@mirror/simple\n    https://pypi.org/simple\n"
                   "password = x\ntimeout = 9\n")
    assert out == ("[global]\nindex-url = https://pypi.corp/simple\nextra-index-url =\n"
                   "    https://mirror/simple\n    https://pypi.org/simple\ntimeout = 9\n")


def test_a_file_holding_a_key_is_not_served_at_all(tmp_path):
    f = tmp_path / "gitconfig"
    f.write_text("[user]\n\tname = A\n-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1r\n")
    assert sanitized("gitconfig", str(f)) == b""
    assert sanitized("gitconfig", str(tmp_path / "missing")) == b""
