"""`ringfence mcp` (issue 24) driven as a real stdio subprocess by the official SDK's
client, in both protocol eras, with and without elicitation; the hostile strings from
shell MCP servers' trackers go through `shell` and are each contained or asked."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import time

import pytest

mcp = pytest.importorskip("mcp", reason="the 'mcp' SDK is not installed (make setup "
                                        "installs it: pip install -e '.[mcp]')")
import anyio  # noqa: E402
import mcp_types as t  # noqa: E402
from mcp import Client  # noqa: E402
from mcp.client.stdio import StdioServerParameters  # noqa: E402

from tests.compiler.sandbox_util import CLI, SECRET_FILE  # noqa: E402

pytestmark = [
    pytest.mark.sandbox,
    pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap is not installed"),
]

ASKY = 'extends = "{base}"\ndescription = "test"\n[commands]\nask = ["cat **"]\n'
# "legacy": the initialize handshake (2025-11-25: mid-call elicitation requests);
# "auto": server/discover, which this SDK's server answers with 2026-07-28
# (elicitation as an InputRequiredResult round trip). The first test checks which.
ERAS = ["legacy", "auto"]


@pytest.fixture
def env(box):
    (box.root / "asky.toml").write_text(ASKY.format(base="build"))
    (box.root / "strictask.toml").write_text(ASKY.format(base="strict"))
    box.profile = str(box.root / "asky.toml")
    return box


def params(box, profile=None, extra=()) -> StdioServerParameters:
    return StdioServerParameters(command=CLI[0], args=[*CLI[1:], "mcp", "-p",
                                                       profile or box.profile,
                                                       "-w", str(box.ws), *extra],
                                 env=box.env(), cwd=str(box.ws))


def answering(answer, seen):
    async def elicit(ctx, p):
        seen.append(p)
        if answer in ("cancel", "decline"):
            return t.ElicitResult(action=answer)
        return t.ElicitResult(action="accept", content=answer)
    return elicit


def call(box, steps, *, mode="legacy", elicit=None, profile=None, extra=()):
    """Run ``steps(client)`` (async) against a fresh server; return what it returns."""
    async def main():
        kw = {"elicitation_callback": elicit} if elicit else {}
        async with Client(params(box, profile, extra), mode=mode, **kw) as c:
            return await steps(c)
    return anyio.run(main)


def cli(box, *args):
    return subprocess.run([*CLI, *args], cwd=box.ws, env=box.env(), capture_output=True,
                          text=True, timeout=120)


def text(r) -> str:
    return r.content[0].text


@pytest.mark.parametrize("mode", ERAS)
def test_tools_annotations_instructions_and_a_plain_run(env, mode):
    async def steps(c):
        tools = {x.name: x for x in (await c.list_tools()).tools}
        r = await c.call_tool("shell", {"command": "echo out; echo err >&2; exit 4"})
        return tools, c.instructions, r, c.protocol_version
    tools, instructions, r, version = call(env, steps, mode=mode)
    assert (version >= "2026-07-28") == (mode == "auto"), version
    assert set(tools) == {"shell", "check", "await_approval"}      # no approve tool
    assert tools["check"].annotations.read_only_hint is True
    assert tools["shell"].annotations.destructive_hint is True
    assert "WAITING FOR A PERSON" in instructions and "await_approval" in instructions
    s = r.structured_content
    assert (s["state"], s["exit_code"], s["stdout"], s["stderr"]) == ("failed", 4, "out\n",
                                                                       "err\n")
    assert "exit 4" in text(r) and "out" in text(r)


@pytest.mark.parametrize("mode", ERAS)
def test_without_elicitation_it_waits_and_await_approval_returns_the_output(env, mode):
    async def steps(c):
        r = await c.call_tool("shell", {"command": "cat README"})
        s = r.structured_content
        assert s["state"] == "waiting_for_approval" and not r.is_error
        assert "not failed" in text(r) and "await_approval" in text(r)
        assert f"ringfence approve {s['approval_id']} --defer" in text(r)
        # A person decides in a terminal while the agent waits.
        d = await anyio.to_thread.run_sync(cli, env, "approve", s["approval_id"], "--defer")
        assert d.returncode == 0, d.stderr
        return await c.call_tool("await_approval", {"approval_id": s["approval_id"]})
    r = call(env, steps, mode=mode)
    assert r.structured_content["state"] == "completed"
    assert r.structured_content["stdout"] == "hello\n"


@pytest.mark.parametrize("mode", ERAS)
@pytest.mark.parametrize("answer,state", [
    ({"decision": "once"}, "completed"), ({"decision": "session"}, "completed"),
    ({"decision": "deny"}, "denied"), ({"decision": "always"}, "denied"),
    ({"decision": ""}, "denied"), ({}, "denied"), ("cancel", "denied"),
    ("decline", "denied")])
def test_elicitation_form_decides_inside_the_call(env, mode, answer, state):
    seen = []

    async def steps(c):
        return await c.call_tool("shell", {"command": "cat README"})
    r = call(env, steps, mode=mode, elicit=answering(answer, seen))
    assert len(seen) == 1
    schema = seen[0].requested_schema
    assert schema["required"] == ["decision"]
    assert schema["properties"]["decision"]["enum"] == ["once", "session", "deny"]
    assert "cat README" in seen[0].message
    assert r.structured_content["state"] == state
    assert r.structured_content["stdout"] == ("hello\n" if state == "completed" else "")


@pytest.mark.parametrize("mode", ERAS)
def test_a_one_time_requests_form_offers_no_session_grant(env, mode):
    seen = []

    async def steps(c):
        return await c.call_tool("shell", {"command": "cat README > copy\n# looks safe"})
    r = call(env, steps, mode=mode, elicit=answering({"decision": "session"}, seen))
    assert seen[0].requested_schema["properties"]["decision"]["enum"] == ["once", "deny"]
    assert "\\x0a" in seen[0].message              # the newline is shown, not obeyed
    assert r.structured_content["state"] == "denied"  # an answer it did not offer
    assert not (env.ws / "copy").exists()


def test_a_form_the_client_fails_to_show_leaves_it_waiting(env):
    async def broken(ctx, p):
        return t.ErrorData(code=-32601, message="Method not found")

    async def steps(c):
        return await c.call_tool("shell", {"command": "cat README"})
    r = call(env, steps, elicit=broken)
    assert r.structured_content["state"] == "waiting_for_approval"
    assert "ringfence approve" in text(r)


def test_strict_never_asks_with_a_form(env):
    seen = []

    async def steps(c):
        return await c.call_tool("shell", {"command": "cat README"})
    r = call(env, steps, elicit=answering({"decision": "once"}, seen),
             profile=str(env.root / "strictask.toml"))
    assert seen == []
    assert r.structured_content["state"] in ("waiting_for_approval", "denied")
    assert r.structured_content["stdout"] == ""


@pytest.mark.parametrize("mode", ERAS)
def test_no_forms_never_asks_even_a_client_that_could_answer(env, mode):
    seen = []

    async def steps(c):
        return await c.call_tool("shell", {"command": "cat README"})
    r = call(env, steps, mode=mode, elicit=answering({"decision": "once"}, seen),
             extra=("--no-forms",))
    assert seen == [] and r.structured_content["state"] == "waiting_for_approval"


def test_terminal_control_strings_never_reach_the_client(env):
    async def steps(c):
        return await c.call_tool("shell", {
            "command": r"printf 'a\033]52;c;cm0gLXJmIH4K\007b\n'"})
    r = call(env, steps)
    s = r.structured_content
    assert s["stdout"] == "ab\n" and "\x1b" not in text(r)
    assert any("RF620" in n for n in s["notes"])


def test_control_commands_are_denied_inside_shell(env):
    async def steps(c):
        r = await c.call_tool("shell", {"command": "cat README"})
        aid = r.structured_content["approval_id"]
        return aid, [await c.call_tool("shell", {"command": cmd}) for cmd in (
            f"ringfence approve {aid} --defer", f"ringfence approve {aid}",
            "ringfence grants revoke --all", f"{sys.executable} -m ringfence deny {aid}")]
    aid, results = call(env, steps)
    for r in results:
        assert r.structured_content["state"] == "denied", text(r)
        assert "RF134" in text(r) or "RF134" in json.dumps(r.structured_content)
    pending = json.loads(cli(env, "approvals", "list", "--json").stdout)
    assert [p["id"] for p in pending] == [aid]       # still waiting for a person


def test_cwd_outside_the_workspace_and_a_foreign_approval_are_refused(env):
    other = env.root / "other"
    other.mkdir()
    (other / "README").write_text("other\n")
    foreign = subprocess.run(
        [*CLI, "run", "-p", env.profile, "-w", str(other), "-c", "cat README"],
        cwd=other, env=env.env(), capture_output=True, text=True, timeout=120)
    assert foreign.returncode == 75, foreign.stderr
    aid = re.search(r"(ap_\w+)", foreign.stderr).group(1)
    assert cli(env, "approve", aid, "--defer").returncode == 0

    async def steps(c):
        return [await c.call_tool("shell", {"command": "pwd", "cwd": cwd})
                for cwd in ("../outside", str(env.outside), "/etc")] + [
            await c.call_tool("await_approval", {"approval_id": aid})]
    results = call(env, steps)
    for r in results:
        assert r.is_error and "refused" in text(r) and "nothing was run" in text(r)
    assert "another workspace" in text(results[-1])
    assert json.loads(cli(env, "approvals", "list", "--json").stdout)[0]["id"] == aid


def test_stdin_is_null_and_output_never_reaches_the_protocol(env):
    async def steps(c):
        a = await c.call_tool("shell", {"command": 'read x; echo "got:[$x]"'})
        b = await c.call_tool("shell", {"command": 'printf \'{"jsonrpc":"2.0","id":1,'
                                                   '"result":{}}\\n\' > /dev/stdout; '
                                                   'seq 1 50000 >&1'})
        c2 = await c.call_tool("shell", {"command": "echo still-alive"})
        return a, b, c2
    a, b, c2 = call(env, steps)
    assert a.structured_content["stdout"] == "got:[]\n"
    assert b.structured_content["stdout"].startswith('{"jsonrpc"')
    assert c2.structured_content["stdout"] == "still-alive\n"


def test_progress_notifications_while_it_runs(env):
    ticks = []

    async def progress(p, total, message):
        ticks.append((p, message))

    async def steps(c):
        return await c.call_tool("shell", {"command": "sleep 2.5; echo done"},
                                 progress_callback=progress)
    r = call(env, steps)
    assert r.structured_content["stdout"] == "done\n"
    assert ticks and "running" in ticks[0][1]


def test_a_cancelled_call_kills_the_sandbox_and_records_aborted(env):
    async def steps(c):
        with anyio.move_on_after(2):
            await c.call_tool("shell", {"command": "sleep 4; touch late"})
        await anyio.sleep(1)
        return await c.call_tool("shell", {"command": "echo next"})
    r = call(env, steps)
    assert r.structured_content["stdout"] == "next\n"       # the server lives on
    time.sleep(3)                     # past the point the sandboxed `touch` would run
    assert not (env.ws / "late").exists()
    runs = json.loads(cli(env, "ledger", "list", "--json").stdout)
    sleepers = [x for x in runs if x["command"].startswith("sleep 4")]
    assert sleepers and sleepers[0]["state"] == "aborted"


HOSTILE = [
    "echo hi; touch {out}/p1",
    "echo $(touch {out}/p2)",
    "cat <(touch {out}/p3)",
    "'tou''ch' {out}/p4",
    "echo a\ntouch {out}/p5",
    "sh -c 'touch {out}/p6'",
    "/usr/bin/touch {out}/p7",
    "bash -c \"echo x > {out}/p8\"",
    "t=touch; $t {out}/p9",
    "cd / && touch {out}/p10",
    "cat ~/.ssh/id_ed25519; cat {home}/.aws/credentials",
    "echo `cat {home}/.ssh/id_ed25519`",
    "python3 -c 'open(\"{out}/p11\",\"w\")'",
    "cp {home}/.netrc {ws}/stolen",
]


def test_hostile_strings_are_contained_or_asked(env):
    out, home = env.outside, env.home

    async def steps(c):
        return [await c.call_tool("shell", {"command": h.format(out=out, home=home,
                                                                  ws=env.ws)})
                for h in HOSTILE]
    results = call(env, steps)
    for h, r in zip(HOSTILE, results):
        s = r.structured_content
        assert s["state"] in ("completed", "failed", "waiting_for_approval", "denied"), (h, s)
        assert SECRET_FILE not in s["stdout"] + s["stderr"], h
    assert sorted(os.listdir(out)) == ["file.txt"]                    # nothing written
    assert (out / "file.txt").read_text() == "original outside\n"
    stolen = env.ws / "stolen"
    assert not stolen.exists() or SECRET_FILE not in stolen.read_text()


@pytest.mark.skipif(shutil.which("npx") is None,
                    reason="npx (Node.js) is not installed: the MCP Inspector CLI runs "
                           "from npm")
def test_the_mcp_inspector_cli_lists_and_calls_the_tools(env):
    base = ["npx", "-y", "@modelcontextprotocol/inspector", "--cli", CLI[0], *CLI[1:],
            "mcp", "-p", env.profile, "-w", str(env.ws)]
    run = dict(cwd=env.ws, env={**env.env(), "npm_config_yes": "true"}, capture_output=True,
               text=True, timeout=300)
    try:
        listed = subprocess.run([*base, "--method", "tools/list"], **run)
    except subprocess.TimeoutExpired:
        pytest.skip("the MCP Inspector could not be fetched from npm in time")
    if listed.returncode != 0 and ("ENOTFOUND" in listed.stderr or "E404" in listed.stderr
                                   or "network" in listed.stderr.lower()):
        pytest.skip(f"the MCP Inspector is not reachable on npm: {listed.stderr[-200:]}")
    assert listed.returncode == 0, listed.stderr
    names = {x["name"] for x in json.loads(listed.stdout)["tools"]}
    assert names == {"shell", "check", "await_approval"}
    called = subprocess.run([*base, "--method", "tools/call", "--tool-name", "shell",
                             "--tool-arg", "command=echo from-inspector"], **run)
    assert called.returncode == 0, called.stderr
    assert json.loads(called.stdout)["structuredContent"]["stdout"] == "from-inspector\n"
