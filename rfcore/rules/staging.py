"""RF64x: staging diagnostics (the overlay, settling, what the host obeys, where
ringfence keeps its own state).

Split from backend.py by responsibility; same conventions: the examples are shell
snippets that tests/compiler/test_backend_rules.py runs in a fresh workspace.
"""

from . import Rule

RULES: tuple[Rule, ...] = (
    Rule(
        code="RF640", name="stage-unavailable",
        summary="the workspace's writes could not be staged in an overlay; nothing was run",
        explanation=(
            "A sandboxed run never writes straight into the workspace: its writes land "
            "in an overlay whose lower layer is the workspace and whose upper dir lives "
            "in ringfence's private state dir, and ringfence applies them when the run "
            "ends, holding what the host would obey. When the overlay cannot be set up "
            "(a kernel older than 5.11 without unprivileged overlayfs, a workspace or "
            "state dir on a filesystem overlayfs refuses, a state dir that cannot be "
            "written), ringfence refuses to run (exit 125) rather than let the sandbox "
            "write into the workspace unrecorded. `ringfence doctor` checks it; put "
            "`RINGFENCE_HOME` on ext4, xfs, btrfs or tmpfs."),
        bad=("mkdir -p ../st; touch ../st/stage; "
             "RINGFENCE_HOME=$PWD/../st ringfence run -p strict -- true"),
        good="ringfence run -p strict -- true"),
    Rule(
        code="RF641", name="obeyed-change-held",
        summary="a change to a file the host obeys was held for a person, not applied",
        explanation=(
            "Files that tools on the host obey without being asked (the git config "
            "chain and hooks, nested repositories, `.envrc`, editor and agent configs, "
            "package-manager rc files, pre-commit, husky, `.ringfence.toml`, the "
            "profile's `write_protect`) are judged by content when a sandboxed run "
            "changes them: a git config whose new keys cannot run programs is applied; "
            "anything else stays in the run's stage. The rest of the run is applied. "
            "`ringfence approvals show RUN_ID` shows the diff, `ringfence approve "
            "RUN_ID` applies it, `ringfence deny RUN_ID` drops it."),
        bad="ringfence run -p strict -- touch .envrc",
        good="ringfence run -p strict -- touch notes.txt"),
    Rule(
        code="RF642", name="staged-run-interrupted",
        summary="an interrupted run's staged writes were never applied",
        explanation=(
            "ringfence applies a run's staged writes when the run ends. If ringfence "
            "itself was killed (SIGKILL) the sandbox died with it and nothing reached "
            "the workspace; the next run (or `ringfence doctor`) reports the stage it "
            "left, which is kept in ringfence's state dir, and removes the run's proxy "
            "runtime dir."),
        bad=("ringfence run -p strict -c 'touch notes; echo started; sleep 60' > out & "
             "pid=$!; while ! grep -q started out; do sleep 0.05; done; "
             "kill -9 $pid; wait $pid; ringfence run -p strict -- true"),
        good="ringfence run -p strict -c 'touch notes'; ringfence run -p strict -- true"),
    Rule(
        code="RF643", name="staged-change-not-applied",
        summary="a staged change could not be applied safely and was kept in the stage",
        explanation=(
            "ringfence applies staged writes without ever following a symbolic link: "
            "each target's parent is opened component by component with O_NOFOLLOW "
            "from the workspace's own directory. When a target cannot be reached that "
            "way (the host swapped a directory for a link between the plan and the "
            "apply, or made it unwritable while the run was in progress), or the stage "
            "cannot be read, the change is not applied: it is kept in the stage and "
            "reported, and nothing outside the workspace is ever created, moved or "
            "deleted."),
        known_problems=("The bad example needs an unprivileged user (root ignores the "
                        "mode); tests/ringfence/test_apply.py swaps in a link directly."),
        bad=("mkdir d; ringfence run -p strict -c 'touch d/x; echo ready; sleep 2' > out & "
             "while ! grep -q ready out; do sleep 0.05; done; chmod 0555 d; wait"),
        good="mkdir d; ringfence run -p strict -c 'touch d/x'"),
    Rule(
        code="RF644", name="settle-failed",
        summary="a run's staged writes could not be settled; nothing was applied, the stage is kept",
        explanation=(
            "After a staged run ringfence plans its writes (the exact change record) and "
            "applies the harmless ones. Planning walks only the stage, iteratively, so a "
            "tree of any depth works, and it is bounded in time (120 s, "
            "`RINGFENCE_SETTLE_SECONDS`): a stage that cannot be planned in time, or an "
            "error while settling, never loses the run. The command's own result is "
            "recorded in the ledger as usual, nothing from the stage is applied, the "
            "change record carries `settle_error`, and the stage is kept in ringfence's "
            "state dir, where `ringfence doctor` lists it."),
        bad="RINGFENCE_SETTLE_SECONDS=0 ringfence run -p strict -- touch notes.txt",
        good="ringfence run -p strict -- touch notes.txt"),
    Rule(
        code="RF645", name="private-state-writable",
        summary="ringfence's state or cache dir is inside the workspace or a writable root; nothing was run",
        explanation=(
            "The ledger, grants, held stages, the secret-mask cache and its key decide "
            "what runs without asking and what Strict hides. They are hidden in every "
            "sandbox, but a state dir inside the workspace (or the tooling dir) would be "
            "one a later run, or the host's tools acting on the workspace, could rewrite: "
            "a forged grant, a mask cache that forgets `.env`. ringfence refuses to run "
            "(exit 125) when `RINGFENCE_HOME`, `XDG_STATE_HOME` or `XDG_CACHE_HOME` put "
            "them there."),
        bad="RINGFENCE_HOME=$PWD/.rf ringfence run -p strict -- true",
        good="RINGFENCE_HOME=$HOME/.local/state/ringfence ringfence run -p strict -- true"),
    Rule(
        code="RF646", name="writable-root-inside-workspace",
        summary="a writable root inside the workspace is staged with it, not bound on its own",
        explanation=(
            "The workspace's writes are staged and judged before the host sees them; "
            "other writable roots (the tooling dir, a profile's extra `writable` entry) "
            "are bound writable directly. One inside a staged workspace would let a "
            "sandbox write workspace files past the stage, unjudged, so its own bind is "
            "dropped: it stays writable, through the staged workspace. Links from the "
            "workspace into a writable root elsewhere are held (RF641), and git "
            "redirects never follow a link."),
        bad=("printf 'extends = \"build\"\\n[filesystem]\\n"
             "writable = [\"{workspace}\", \"{workspace}/cache\"]\\n' > ../p.toml; "
             "mkdir cache; ringfence run -p ../p.toml -- true"),
        good="ringfence run -p build -- true"),
)
