"""What the MCP server says to the model (issue 24): the boundary, plainly.

The lesson from agents in the field: a model that reads a wait as a failure retries,
or tries a variant to route around the limit. So a waiting result says it waits for
a PERSON and is not a failure, and names the one next step (``await_approval``); a
denial names the profile rule and says nothing ran; a failure whose stderr looks like
the sandbox's boundary (EPERM, EROFS, a proxy 403) is labelled as the boundary, with
the route to ask for more. No SDK import here: this is plain text.
"""

from __future__ import annotations

INSTRUCTIONS = """\
ringfence runs your shell commands in a sandbox (profile {profile}, workspace {workspace}).
- `shell` runs one bash command; `check` says what a command needs without running it.
- Some commands need a person's approval. Then the result's state is \
waiting_for_approval: the command is WAITING FOR A PERSON, it has not failed and has \
not run. Do not retry it, rephrase it or try a variant to get around it: call \
`await_approval` with the approval_id; it returns the command's real output once a \
person decides (call it again while it says it is still waiting).
- A denied result names the profile rule that refuses it; nothing ran. Tell the user \
what you needed instead of working around it.
- "Operation not permitted", "Read-only file system" or a proxy 403 in a command's \
output is usually the sandbox's boundary, not a bug: say so to the user.
- There is no tool to approve: approving is the person's act, and ringfence's own \
control commands (approve, grant, profile changes) are denied inside `shell`.\
"""

APPROVE_HINT = "ringfence approve {id} --defer"


def instructions(profile: str, workspace: str) -> str:
    return INSTRUCTIONS.format(profile=profile, workspace=workspace)


def summary(r, boundary: bool = False, *, asked: bool = False) -> str:
    """One short paragraph for the model, then the output itself."""
    head = _head(r, boundary, asked)
    parts = [head]
    if r.stdout:
        parts.append("--- stdout ---\n" + r.stdout.rstrip("\n"))
    if r.stderr:
        parts.append("--- stderr ---\n" + r.stderr.rstrip("\n"))
    if r.truncated:
        parts.append("(output was longer than ringfence's cap: the middle was cut)")
    return "\n".join(parts)


def _head(r, boundary: bool, asked: bool) -> str:
    reasons = "; ".join(r.reasons)
    if r.state == "waiting_for_approval":
        where = "on the host" if r.where == "host" else "in the sandbox"
        text = (f"WAITING FOR A PERSON (not failed, nothing ran yet): `{r.command}` needs "
                f"approval to run {where} under profile {r.profile!r}"
                + (f" ({reasons})" if reasons else "") + ". "
                f"Do not retry it or try a variant. Call await_approval with approval_id="
                f"{r.approval_id}; it returns the real output once a person decides. "
                f"A person approves it with: {APPROVE_HINT.format(id=r.approval_id)} "
                f"(or refuses it with: ringfence deny {r.approval_id}).")
        if asked:
            text += " The approval form got no answer here."
        return text
    if r.state == "denied" and r.approval_id:
        return ("DENIED by the person who reviewed it: nothing ran. Do not retry it or a "
                "variant of it; ask the user what to do instead.")
    if r.state == "denied":
        return (f"DENIED by profile {r.profile!r}: {reasons or 'refused'}. Nothing ran. "
                "This is the profile's rule, not an error to work around: tell the user "
                "what you needed.")
    if r.state == "aborted":
        return f"ABORTED (run {r.run_id}): the run was stopped before it finished."
    if r.state in ("timeout", "limit"):
        what = "its time limit" if r.state == "timeout" else "a resource limit"
        return f"STOPPED by {what} ({r.state}, exit {r.exit_code}); the sandbox was killed."
    if r.state == "sandbox_error":
        return ("ringfence could not run it safely (sandbox_error): nothing ran. "
                + ("; ".join(r.notes[-2:]) if r.notes else ""))
    text = f"exit {r.exit_code} ({r.state})"
    if boundary:
        text += (". This failure looks like the SANDBOX'S BOUNDARY (permission denied, "
                 f"read-only file system or a refused network request under profile "
                 f"{r.profile!r}), not a bug in the command. Do not work around it: "
                 "tell the user what it needed; a person can widen the profile or run it "
                 "outside the sandbox.")
    return text


def looks_like_boundary(r) -> bool:
    if r.state != "failed":
        return False
    from ringfence.session.in_sandbox import BOUNDARY_PATTERNS

    return bool(BOUNDARY_PATTERNS.search(r.stderr or ""))


FORM_MESSAGE = ("An agent asks to run this command{where} under ringfence profile "
                "{profile!r}:\n\n  {command}\n\nWhy it needs you: {reasons}\n\n"
                "once = run it this time; session = also allow it for this session; "
                "deny = refuse it.")



def form_message(r) -> str:
    from ringfence.session.request import safe

    # The command is the agent's text: its newlines and control characters are shown
    # escaped, so it cannot draw a fake "this is safe" paragraph into the form.
    where = " on the host" if r.where == "host" else ""
    return FORM_MESSAGE.format(where=where, profile=r.profile, command=safe(r.command),
                               reasons=safe("; ".join(r.reasons) or "a profile rule asks"))


def choices(grantable: bool) -> tuple[str, ...]:
    """A one-time request takes no standing grant: its form offers once | deny."""
    return ("once", "session", "deny") if grantable else ("once", "deny")


def decision_schema(grantable: bool) -> dict:
    options = list(choices(grantable))
    return {"type": "object",
            "properties": {"decision": {"type": "string", "title": "Decision",
                                        "enum": options,
                                        "description": " | ".join(options)}},
            "required": ["decision"]}


def parse_answer(action: str | None, content, grantable: bool = True) -> str:
    """The form's answer; anything but an accepted choice it offered is deny. A form
    never grants ``always``: a standing grant is given in a terminal, on purpose."""
    if action != "accept" or not isinstance(content, dict):
        return "deny"
    value = content.get("decision")
    return value if value in choices(grantable) and value != "deny" else "deny"


def without_control_strings(r):
    """The Result with terminal control strings (OSC 52 clipboard writes, titles,
    DCS) removed from its output: a client may print a tool's output to the person's
    terminal as it is. The Session's own Result (and the ledger) keep the raw bytes."""
    from dataclasses import replace

    from ringfence.compiler.terminal import ControlStrings

    removed, cleaned = 0, {}
    for name in ("stdout", "stderr"):
        f = ControlStrings()
        data = getattr(r, name).encode("utf-8", "surrogateescape")
        out = f.feed(data) + f.flush()
        removed += f.removed
        cleaned[name] = out.decode("utf-8", "replace")
    if not removed:
        return r
    note = (f"RF620 removed {removed} terminal control string(s) (OSC/DCS/APC) from the "
            "output; the ledger keeps the raw bytes")
    return replace(r, notes=(*r.notes, note), **cleaned)
