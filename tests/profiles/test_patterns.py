"""The command-rule pattern language: syntax, matching, cache, no lark on the hot path."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from ringfence.profiles import pattern_cache as cache
from ringfence.profiles import patterns
from ringfence.profiles.pattern_cache import compile_table
from ringfence.profiles.patterns import PatternError, argv_views, compile_pattern, match, render

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("source,compiled", [
    ("git push **", (("lit", "git"), ("lit", "push"), ("rest",))),
    ("gh pr view *", (("lit", "gh"), ("lit", "pr"), ("lit", "view"), ("any",))),
    ("longbridge news <ticker>", (("lit", "longbridge"), ("lit", "news"), ("hole", "ticker"))),
    ("npm run {test,build}", (("lit", "npm"), ("lit", "run"), ("alt", ("test", "build")))),
    ("grep 'a b' \"c\\\"d\"", (("lit", "grep"), ("lit", "a b"), ("lit", 'c"d'))),
    ("  ./longbridge   --x=1 ", (("lit", "./longbridge"), ("lit", "--x=1"))),
    ("x {}", (("lit", "x"), ("alt", ()))),
    ("x {'a b',c}", (("lit", "x"), ("alt", ("a b", "c")))),
])
def test_compile(source, compiled):
    assert compile_pattern(source) == compiled


@pytest.mark.parametrize("source,column,fragment", [
    ("git*", 4, "must be whole words"),
    ("git pu*sh", 7, "must be whole words"),
    ("git ** push", 5, "'**' must be the last word"),
    ("a <b", 3, "named hole"),
    ("x {a, b}", 6, "without blanks"),
    ("'open", 1, "unterminated quote"),
    ("a,b", 2, "separates alternatives"),
    ("   ", 1, "empty pattern"),
    ("  git*", 6, "must be whole words"),
])
def test_syntax_errors_carry_the_column(source, column, fragment):
    with pytest.raises(PatternError) as info:
        compile_pattern(source)
    assert info.value.column == column
    assert fragment in info.value.message


@pytest.mark.parametrize("source,argv,expected", [
    ("git push *", ["git", "push", "origin"], {}),
    ("git push *", ["git", "push"], None),                         # * is exactly one word
    ("git push *", ["git", "push", "origin", "main"], None),
    ("git push **", ["git", "push"], {}),                          # ** is zero or more
    ("git push **", ["git", "push", "origin", "main", "--force"], {}),
    ("git push **", ["git", "pull"], None),
    ("longbridge news <ticker>", ["longbridge", "news", "AAPL"], {"ticker": "AAPL"}),
    ("longbridge news <ticker>", ["longbridge", "news"], None),
    ("longbridge **", ["./longbridge", "news"], None),             # program word is exact
    ("./longbridge **", ["./longbridge", "news"], {}),
    ("npm run {test,build}", ["npm", "run", "build"], {}),
    ("npm run {test,build}", ["npm", "run", "deploy"], None),
    ("x {}", ["x", "anything"], None),
    ("grep 'a b'", ["grep", "a b"], {}),
    ("grep 'a b'", ["grep", "a", "b"], None),
    ("* --version", ["node", "--version"], {}),
    ("<prog> **", ["anything", "at", "all"], {"prog": "anything"}),
    ("make", [], None),
])
def test_match(source, argv, expected):
    assert match(compile_pattern(source), argv) == expected


def test_basename_matching_is_opt_in_for_deny_and_ask_rules():
    c = compile_pattern("git push **")
    assert match(c, ["/usr/bin/git", "push"]) is None
    assert match(c, ["/usr/bin/git", "push"], by_basename=True) == {}
    assert match(c, ["./git", "push"], by_basename=True) == {}
    assert match(compile_pattern("{git,hg} push **"), ["/bin/hg", "push"], by_basename=True) == {}
    assert match(compile_pattern("* push"), ["/x/git", "push"], by_basename=True) == {}


def test_argv_views_strip_multiplexer_global_options():
    assert argv_views("git push", ["git", "-C", "dir", "push", "origin"]) == (
        ("git", "-C", "dir", "push", "origin"), ("git", "push", "origin"))
    assert argv_views("git push", ["git", "push"]) == (("git", "push"),)
    assert argv_views("ls", ["ls", "-l"]) == (("ls", "-l"),)


def test_render_round_trips():
    for src in ("git push **", "npm run {test,build}", "lb news <t> *", "grep 'a b'"):
        assert compile_pattern(render(compile_pattern(src))) == compile_pattern(src)


def test_shipped_builtin_table_is_up_to_date():
    expected = cache.generate_builtin_table(cache.builtin_sources())
    assert Path(patterns.BUILTIN_TABLE_PATH).read_text(encoding="utf-8") == expected, \
        "regenerate with: .venv/bin/python -m ringfence.profiles.pattern_cache"


# ----------------------------------------------------------------------------- disk cache

def _env(tmp_path):
    return {"RINGFENCE_HOME": str(tmp_path / "rfhome")}


def test_cache_is_written_keyed_by_digest_and_reused(tmp_path, monkeypatch):
    env = _env(tmp_path)
    monkeypatch.setattr(cache, "_MEMO", {})
    monkeypatch.setattr(cache, "_COMPILED", {})
    table = compile_table(["mytool run <x>"], env=env, digest="d1")
    path = tmp_path / "rfhome/cache/patterns/d1.json"
    data = json.loads(path.read_text())
    assert data["version"] == patterns.grammar_version()
    assert data["patterns"] == {"mytool run <x>": [["lit", "mytool"], ["lit", "run"],
                                                   ["hole", "x"]]}
    assert table["mytool run <x>"] == (("lit", "mytool"), ("lit", "run"), ("hole", "x"))
    # A second process-level lookup must come from the file: make compiling impossible.
    monkeypatch.setattr(cache, "_MEMO", {})
    monkeypatch.setattr(cache, "_COMPILED", {})
    monkeypatch.setattr(cache, "compile_pattern",
                        lambda s: pytest.fail(f"recompiled {s!r} despite the cache"))
    assert compile_table(["mytool run <x>"], env=env, digest="d1") == table


@pytest.mark.parametrize("garbage", [
    "not json", '{"version": "x", "patterns": {}}', "[]",
    None,  # filled in below: right version, malformed tokens
])
def test_corrupt_or_stale_cache_is_ignored_and_rebuilt(tmp_path, monkeypatch, garbage):
    env = _env(tmp_path)
    monkeypatch.setattr(cache, "_MEMO", {})
    monkeypatch.setattr(cache, "_COMPILED", {})
    path = tmp_path / "rfhome/cache/patterns/d2.json"
    path.parent.mkdir(parents=True)
    if garbage is None:
        garbage = json.dumps({"version": patterns.grammar_version(),
                              "patterns": {"mytool **": [["lit"], ["bogus"]]}})
    path.write_text(garbage)
    table = compile_table(["mytool **"], env=env, digest="d2")
    assert table == {"mytool **": (("lit", "mytool"), ("rest",))}
    assert json.loads(path.read_text())["patterns"] == {"mytool **": [["lit", "mytool"],
                                                                      ["rest"]]}


@pytest.mark.parametrize("source,tampered", [
    ("git push **", [["lit", "git"], ["lit", "push"]]),                 # ** dropped
    ("git push **", [["lit", "git"], ["lit", "pull"], ["rest"]]),
    ("npm run {test,build}", [["lit", "npm"], ["lit", "run"], ["alt", ["test,build"]]]),
    ("grep 'a b' *", [["lit", "grep"], ["lit", "a"], ["any"]]),
    ("lb news <t>", [["lit", "lb"], ["lit", "news"], ["any"]]),
])
def test_tampered_cache_entry_is_recompiled(tmp_path, monkeypatch, source, tampered):
    env = _env(tmp_path)
    monkeypatch.setattr(cache, "_MEMO", {})
    monkeypatch.setattr(cache, "_COMPILED", {})
    path = tmp_path / "rfhome/cache/patterns/d4.json"
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps({"version": patterns.grammar_version(),
                                "patterns": {source: tampered}}))
    assert compile_table([source], env=env, digest="d4") == {source: compile_pattern(source)}


@pytest.mark.parametrize("source", ["git push **", "npm run {test,build}", "lb news <t> *",
                                    "grep 'a b' \"c\\\"d\" **", "  a \t b  "])
def test_consistent_accepts_the_real_compiled_form(source):
    assert cache.consistent(source, compile_pattern(source))


def test_unwritable_cache_dir_still_compiles(tmp_path, monkeypatch):
    monkeypatch.setattr(cache, "_MEMO", {})
    monkeypatch.setattr(cache, "_COMPILED", {})
    blocker = tmp_path / "file"
    blocker.write_text("")
    env = {"RINGFENCE_HOME": str(blocker)}   # cache dir would be under a regular file
    assert compile_table(["a *"], env=env, digest="d3") == {"a *": (("lit", "a"), ("any",))}


def test_cache_dir_locations():
    assert cache.cache_dir({"RINGFENCE_HOME": "/r"}) == "/r/cache/patterns"
    assert cache.cache_dir({"XDG_CACHE_HOME": "/c"}) == "/c/ringfence/patterns"
    assert cache.cache_dir({"HOME": "/h"}) == "/h/.cache/ringfence/patterns"


# ----------------------------------------------------------------------------- hot path

_DECIDE = textwrap.dedent("""
    import sys
    sys.modules["lark"] = None          # any `import lark` now raises ImportError
    from ringfence.classifier.verdict import Capability, Verdict
    from ringfence.profiles.load import load_profile
    from ringfence.session.gate import decide
    v = Verdict("git push", "capability",
                (Capability("git push", "git", ("git", "push"), (0, 8)),))
    out = []
    for name in sys.argv[1:]:
        out.append(decide(v, load_profile(name), context="sandbox").decision)
    print(" ".join(out))
""")


def _run(args, env):
    proc = subprocess.run([sys.executable, "-c", _DECIDE, *args], cwd=ROOT, env=env,
                          capture_output=True, text=True)
    return proc


def test_decide_path_never_imports_lark_for_builtins(tmp_path):
    env = {**os.environ, "RINGFENCE_HOME": str(tmp_path / "empty-home")}
    proc = _run(["observe", "build", "strict", "host-assisted", "host"], env)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["ask", "ask", "deny", "ask", "allow"]
    assert not (tmp_path / "empty-home").exists()   # built-ins need no cache at all


def test_decide_path_never_imports_lark_for_custom_profile_once_cached(tmp_path):
    prof = tmp_path / "p.toml"
    prof.write_text('extends = "build"\n[commands]\ndeny = ["git {push,fetch} **"]\n')
    env = {**os.environ, "RINGFENCE_HOME": str(tmp_path / "home")}
    cold = _run([str(prof)], env)                  # first call: lark is blocked, so it fails
    assert cold.returncode != 0 and "import of lark halted" in cold.stderr
    warm = subprocess.run([sys.executable, "-c",
                           f"from profiles.load import load_profile; load_profile({str(prof)!r})"],
                          cwd=ROOT, env=env, capture_output=True, text=True)
    assert warm.returncode == 0, warm.stderr       # a normal call fills the cache
    hot = _run([str(prof)], env)
    assert hot.returncode == 0, hot.stderr
    assert hot.stdout.split() == ["deny"]
