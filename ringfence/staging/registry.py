"""The host-obeyed registry's data: which workspace paths the host executes or obeys.

Data only (stdlib, a leaf): ``ringfence/staging/judges.py`` judges a sandbox's change to
these by content; the exporters (srt, Seatbelt, Claude Code), which cannot stage
writes, deny writing ``EXPORT_DENY_WRITE`` instead. Each row says why the host
obeys the path. See ringfence/staging/judges.py for the judges (``kind``).
"""

from __future__ import annotations

# Anywhere in the tree (matched against each path component's name).
BY_NAME: tuple[tuple[str, str, str], ...] = (
    (".gitmodules", "gitmodules", "git submodule reads urls and update commands (!cmd)"),
    (".gitattributes", "attributes", "filter/diff/merge drivers run on checkout, diff, merge"),
    (".envrc", "held", "direnv runs it on cd"),
    (".vscode", "held", "VS Code runs tasks, settings point at programs (terminal, linters)"),
    (".idea", "held", "JetBrains IDEs run configured tools and startup tasks"),
    (".claude", "held", "Claude Code settings define hooks that run commands"),
    (".codex", "held", "Codex config runs commands and MCP servers"),
    (".mcp.json", "held", "agents start the MCP servers it lists"),
    (".npmrc", "held", "npm obeys script-shell, node-options, registries, git"),
    (".yarnrc", "held", "yarn obeys yarn-path and registries"),
    (".yarnrc.yml", "held", "yarn runs yarnPath and plugins"),
    (".pnpmfile.cjs", "held", "pnpm runs it on every install"),
    (".pre-commit-config.yaml", "held", "pre-commit runs the hooks it lists on commit"),
    (".husky", "held", "husky's hooks run on commit (core.hooksPath)"),
    (".ringfence.toml", "held", "it selects the policy of the next ringfence run"),
)
# Only at the top of the workspace (they matter when the workspace is a home dir).
AT_TOP: tuple[tuple[str, str, str], ...] = tuple(
    (name, "held", "a shell reads it at start") for name in (
        ".bashrc", ".bash_profile", ".bash_login", ".bash_logout", ".profile", ".zshrc",
        ".zshenv", ".zprofile", ".zlogin", ".inputrc"))
# Below any ``.git`` component (the repository itself, nested repositories,
# ``modules/*`` and ``worktrees/*``): the last component's name, or a parent's.
IN_GIT_DIR: tuple[tuple[str, str, str], ...] = (
    ("config", "git-config", "git reads it on every command (core.fsmonitor, pager...)"),
    ("config.worktree", "git-config", "per-worktree config, read like config"),
    ("commondir", "git-redirect", "makes git read another directory's config"),
    ("gitdir", "git-redirect", "a worktree's back-pointer; git follows it"),
    ("hooks", "hook", "git runs hooks on commit, checkout, merge, push"),
    ("attributes", "attributes", "info/attributes: filter/diff/merge drivers"),
)
# Deleting these changes what the host does next (a tighter policy, a
# protection the profile asked for): deletion is held too.
HOLD_DELETE = frozenset({".ringfence.toml"})


# What the exporters deny writing inside each writable root (they cannot stage and
# judge): the registry's fixed paths, in a stable order (golden files).
EXPORT_DENY_WRITE = (
    ".git/hooks", ".git/config", ".gitmodules", ".bashrc", ".bash_profile", ".bash_login",
    ".bash_logout", ".profile", ".zshrc", ".zshenv", ".zprofile", ".zlogin", ".inputrc",
    ".envrc", ".vscode", ".idea", ".claude", ".codex", ".mcp.json", ".ringfence.toml",
)
