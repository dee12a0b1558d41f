"""``ringfence mcp``: a stdio MCP server on ``ringfence.Session`` (issue 24).

An adapter, no policy: every decision is the Session's (classifier, gate, profile),
and this module only maps tool calls onto it. It is the ONE module that imports the
``mcp`` SDK (2.x), so nothing on the hook/check/run paths ever loads it.

* ``shell``: runs one command. When it needs approval and the client can show a form
  (elicitation, and the profile is not Strict), the person answers inside the call
  (``decision``: once | session | deny; no answer is deny; a form never grants
  ``always``). On the 2026-07-28 protocol the question goes out as an
  ``InputRequiredResult`` and the retry carries the answer; the approval id rides in
  ``request_state`` (sealed by the SDK). Otherwise the call returns
  ``waiting_for_approval`` with the id and ``ringfence approve ID --defer``.
* ``await_approval``: waits up to 50 s for a person's decision, runs the request
  where it was asked for and returns its real output, or says it still waits.
* ``check``: read-only.

The command's stdin is /dev/null (the Session never hands a terminal over) and its
output is captured, never written to fd 1 (the SDK's stdio transport diverts fd 0
and 1 while it serves). A call the client cancels kills the whole sandbox and the
run is recorded ``aborted``. Progress notifications tick once a second.
"""

from __future__ import annotations

import time
from typing import Any

import anyio
from mcp.server.mcpserver import Context, MCPServer
from mcp_types import (CallToolResult, ElicitRequest, ElicitRequestFormParams,
                       InputRequiredResult, TextContent, ToolAnnotations)
from mcp_types.version import is_version_at_least

from ringfence.rfcore.cancel import CancelToken
from ringfence.rfcore.errors import RingfenceError

from . import calls, wire
from . import wording as words

AWAIT_SECONDS = 50.0     # await_approval returns by then, still waiting or not
DRAIN_SECONDS = AWAIT_SECONDS + 10   # the longest a call left at end of input may take
_MODERN = "2026-07-28"


def build(session, *, forms: bool = True) -> MCPServer:
    """The server for one ``ringfence.Session`` (tests may build it in-process).

    ``forms=False`` (``--no-forms``): never ask by elicitation, for a client that may
    answer forms without a person (an auto-approve mode, or a model answering them):
    every approval then goes through ``ringfence approve ID --defer``."""
    server = MCPServer("ringfence", version=_version(),
                       instructions=words.instructions(session.profile.name,
                                                       session.workspace))
    # Strict denies host requests, and gets no approval forms either.
    forms_allowed = forms and session.profile.host != "deny"

    async def shell(command: str, ctx: Context, cwd: str | None = None,
                    timeout: float | None = None) -> CallToolResult | InputRequiredResult:
        """Run one bash command in ringfence's sandbox; returns its exit code, stdout and
        stderr. A command that needs a person's approval returns waiting_for_approval:
        that is not a failure; call await_approval with its approval_id."""
        if ctx.request_state:                       # 2026-07-28: the retry with the answer
            return await _answered(session, ctx)
        token = CancelToken()
        try:
            r = await _in_thread(ctx, token, "running",
                                 lambda: session.run(command, cwd=cwd, timeout=timeout,
                                                     cancel=token))
        except RingfenceError as exc:
            return _error(exc)
        if r.waiting and forms_allowed and _can_elicit(ctx):
            grantable = _grantable(session, r.approval_id)
            if _modern(ctx):
                return InputRequiredResult(
                    input_requests={"decision": ElicitRequest(params=_form(r, grantable))},
                    request_state=r.approval_id)
            try:
                answer = await ctx.session.elicit_form(
                    message=words.form_message(r),
                    requested_schema=words.decision_schema(grantable),
                    related_request_id=ctx.request_id)
            except Exception:
                # The form could not be shown (the client failed the request): nobody
                # answered, so it still waits for a person, by the CLI route.
                return _tool_result(r)
            return await _decide(session, ctx, r, words.parse_answer(
                answer.action, answer.content, grantable))
        return _tool_result(r)

    async def await_approval(approval_id: str, ctx: Context) -> CallToolResult:
        """Wait (at most 50 s) for a person's decision on a waiting command; once
        approved it runs where it was asked for and this returns its real output.
        Still waiting: call it again. Approving is the person's act, never yours."""
        token = CancelToken()
        deadline = time.monotonic() + AWAIT_SECONDS
        try:
            _own(session, approval_id)
            while True:
                r = await _in_thread(ctx, token, "waiting for a person",
                                     lambda: session.resume(approval_id, cancel=token,
                                                            wait=5.0))
                if not r.waiting or time.monotonic() >= deadline:
                    return _tool_result(r)
                await anyio.sleep(min(1.0, max(0.0, deadline - time.monotonic())))
        except RingfenceError as exc:
            return _error(exc)

    async def check(command: str) -> CallToolResult:
        """What a command needs under this profile (verdict, capabilities, findings,
        allow | ask | deny); runs nothing."""
        try:
            c = await calls.call(session.check, command)
        except RingfenceError as exc:
            return _error(exc)
        text = (f"{c['decision']} under profile {c['profile']!r} ({c['verdict']}): "
                + ("; ".join(c["reasons"]) or "no reasons"))
        return CallToolResult(content=[TextContent(type="text", text=text)],
                              structured_content=c)

    server.add_tool(shell, annotations=ToolAnnotations(
        title="Run a shell command (sandboxed)", read_only_hint=False,
        destructive_hint=True, idempotent_hint=False, open_world_hint=True))
    server.add_tool(await_approval, annotations=ToolAnnotations(
        title="Wait for a person's approval", read_only_hint=False, destructive_hint=True,
        idempotent_hint=True, open_world_hint=True))
    server.add_tool(check, annotations=ToolAnnotations(
        title="Check a command (runs nothing)", read_only_hint=True,
        destructive_hint=False, idempotent_hint=True, open_world_hint=False))
    return server


async def _answered(session, ctx) -> CallToolResult:
    """The 2026-07-28 retry: the approval id from request_state, the form's answer."""
    approval_id = ctx.request_state
    responses = ctx.input_responses or {}
    answer = responses.get("decision")
    try:
        _own(session, approval_id)
        r = await calls.call(session.resume, approval_id)
    except RingfenceError as exc:
        return _error(exc)
    if not r.waiting:
        return _tool_result(r)
    return await _decide(session, ctx, r, words.parse_answer(
        getattr(answer, "action", None), getattr(answer, "content", None),
        _grantable(session, approval_id)))


async def _decide(session, ctx, r, decision: str) -> CallToolResult:
    token = CancelToken()
    try:
        await calls.call(session.decide, r.approval_id, decision)
        done = await _in_thread(ctx, token, "running",
                                lambda: session.resume(r.approval_id, cancel=token))
    except RingfenceError as exc:
        return _error(exc)
    return _tool_result(done, asked=True)


async def _in_thread(ctx, token: CancelToken, what: str, job):
    """Run ``job`` in a worker thread; tick progress; a cancelled call cancels it."""
    return await calls.call(job, token=token, ticking=(ctx, what))


def _own(session, approval_id) -> None:
    """await_approval only for requests made in this server's workspace."""
    from ringfence.ledger import pending as ap

    a = ap.get_or_for_run(session.ledger(), approval_id)
    if a.workspace != session.workspace:
        raise RingfenceError(f"approval {a.id} belongs to another workspace; this server "
                             f"serves {session.workspace}")


def _can_elicit(ctx) -> bool:
    caps = ctx.client_capabilities
    el = getattr(caps, "elicitation", None) if caps is not None else None
    if el is None:
        return False
    return el.form is not None or el.url is None    # `elicitation: {}` means form


def _modern(ctx) -> bool:
    version = ctx.protocol_version
    return bool(version) and is_version_at_least(version, _MODERN)


def _grantable(session, approval_id) -> bool:
    from ringfence.ledger import pending as ap

    return ap.get(session.ledger(), approval_id).grantable


def _form(r, grantable: bool) -> ElicitRequestFormParams:
    return ElicitRequestFormParams(message=words.form_message(r),
                                   requested_schema=words.decision_schema(grantable))


def _tool_result(r, asked: bool = False) -> CallToolResult:
    boundary = words.looks_like_boundary(r)
    r = words.without_control_strings(r)
    data: dict[str, Any] = r.to_json()
    data["boundary"] = boundary
    if r.waiting:
        data["approve_with"] = words.APPROVE_HINT.format(id=r.approval_id)
    return CallToolResult(content=[TextContent(type="text",
                                               text=words.summary(r, boundary, asked=asked))],
                          structured_content=data,
                          # A command's own non-zero exit is a result the model reads,
                          # not a tool error; a refusal or a stopped run is.
                          is_error=r.state in ("denied", "aborted", "sandbox_error",
                                               "timeout", "limit"))


def _error(exc: RingfenceError) -> CallToolResult:
    hint = getattr(exc, "hint", None)
    text = (f"ringfence refused: {exc.message}; nothing was run"
            + (f" (fix: {hint})" if hint else "") + ".")
    return CallToolResult(content=[TextContent(type="text", text=text)], is_error=True,
                          structured_content={"state": "refused", "error": str(exc)})


async def _serve_on_loop(server: MCPServer) -> None:
    from mcp.server.stdio import stdio_server

    low = server._lowlevel_server
    with wire.claimed() as (lines, out):
        async with stdio_server(stdin=lines, stdout=out) as (read, write):
            await low.run(read, write, low.create_initialization_options())


def _version() -> str:
    from ringfence import __version__

    return __version__


def serve(session, *, forms: bool = True) -> int:
    """Serve MCP over stdio until the client closes it: on the event loop when the
    wire is a pipe or socket (``wire.py``), else by the SDK's threaded transport."""
    server = build(session, forms=forms)
    try:
        if wire.usable():
            anyio.run(_serve_on_loop, server)
        else:
            anyio.run(server.run_stdio_async)
        # The wire ended with calls still in their threads (cancelled: their sandboxes
        # are being killed): let them record their runs and remove their stages.
        calls.drain(DRAIN_SECONDS)
    finally:
        session.close()         # its spare sandbox (compiler/spare.py) goes with it
    return 0
