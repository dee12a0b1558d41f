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
    (".gitignore", "gitignore", "git status hides the files it names (held when it hides "
                                "a file the same run wrote)"),
    (".gitattributes", "attributes", "filter/diff/merge drivers run on checkout, diff, merge"),
    (".envrc", "held", "direnv runs it on cd"),
    (".vscode", "held", "VS Code runs tasks, settings point at programs (terminal, linters)"),
    (".idea", "held", "JetBrains IDEs run configured tools and startup tasks"),
    (".claude", "held", "Claude Code obeys it: settings (hooks that run commands, "
                        "permissions), CLAUDE.md, commands, agents and skills it follows"),
    (".codex", "held", "Codex config runs commands and MCP servers"),
    (".mcp.json", "held", "agents start the MCP servers it lists"),
    (".npmrc", "held", "npm obeys script-shell, node-options, registries, git"),
    (".yarnrc", "held", "yarn obeys yarn-path and registries"),
    (".yarnrc.yml", "held", "yarn runs yarnPath and plugins"),
    (".pnpmfile.cjs", "held", "pnpm runs it on every install"),
    (".pre-commit-config.yaml", "held", "pre-commit runs the hooks it lists on commit"),
    (".husky", "held", "husky's hooks run on commit (core.hooksPath)"),
    (".ringfence.toml", "held", "it selects the policy of the next ringfence run"),
    (".env", "dotenv", "direnv's dotenv loads it into the shell on cd (and so do mise, "
                     "docker compose, npm scripts' dotenv)"),
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
# Other tools the host runs in a workspace that act on these unasked (on cd, on
# opening the editor or the agent, on commit, on the next install). Each row:
# (a name glob matched against each path component, or a path suffix of
# components joined by "/"; kind; why; the tool's documentation).
OTHER_TOOLS: tuple[tuple[str, str, str, str], ...] = (
    (".hg/hgrc", "held", "Mercurial runs the [hooks] and extensions of a repository's hgrc",
     "https://www.mercurial-scm.org/doc/hgrc.5.html"),
    (".hg/sharedpath", "held", "Mercurial reads another repository's store (and hgrc) from it",
     "https://www.mercurial-scm.org/doc/hg.1.html#share"),
    (".jj/repo/config.toml", "held", "jj obeys the repository's config (aliases, fix tools)",
     "https://jj-vcs.github.io/jj/latest/config/"),
    (".jj/repo", "held", "in a jj workspace this file points at another repository",
     "https://jj-vcs.github.io/jj/latest/working-copy/#workspaces"),
    (".cursor", "held", "Cursor starts the MCP servers of .cursor/mcp.json and follows its rules",
     "https://docs.cursor.com/context/model-context-protocol"),
    (".cursorrules", "held", "Cursor's agent follows these rules",
     "https://docs.cursor.com/context/rules"),
    (".gemini", "held", "Gemini CLI's settings.json starts MCP servers and tool commands",
     "https://github.com/google-gemini/gemini-cli/blob/main/docs/cli/configuration.md"),
    (".amazonq", "held", "Amazon Q Developer starts the MCP servers of .amazonq/mcp.json",
     "https://docs.aws.amazon.com/amazonq/latest/qdeveloper-ug/command-line-mcp-configuration.html"),
    (".roo", "held", "Roo Code starts the MCP servers of .roo/mcp.json and follows .roo/rules",
     "https://docs.roocode.com/features/mcp/using-mcp-in-roo"),
    (".kiro", "held", "Kiro starts the MCP servers of .kiro/settings/mcp.json, runs its hooks",
     "https://kiro.dev/docs/mcp/configuration/"),
    ("*.code-workspace", "held", "VS Code obeys a workspace file's settings, tasks and launch",
     "https://code.visualstudio.com/docs/editor/workspaces/multi-root-workspaces"),
    (".zed", "held", "Zed obeys .zed/settings.json (language servers, tasks, context servers)",
     "https://zed.dev/docs/configuring-zed"),
    (".helix", "held", "Helix obeys .helix/config.toml and languages.toml (language servers)",
     "https://docs.helix-editor.com/languages.html"),
    ("lefthook.yml", "held", "lefthook runs the commands it lists as git hooks",
     "https://lefthook.dev/configuration/"),
    (".lefthook.yml", "held", "lefthook runs the commands it lists as git hooks",
     "https://lefthook.dev/configuration/"),
    ("lefthook*.y*ml", "held", "lefthook reads lefthook.yaml and lefthook-local.yml too",
     "https://lefthook.dev/configuration/"),
    (".lefthook*.y*ml", "held", "lefthook reads .lefthook.yaml and .lefthook-local.yml too",
     "https://lefthook.dev/configuration/"),
    (".lintstagedrc*", "held", "lint-staged runs the commands it lists on commit",
     "https://github.com/lint-staged/lint-staged#configuration"),
    ("lint-staged.config.*", "held", "lint-staged runs this config's commands on commit",
     "https://github.com/lint-staged/lint-staged#configuration"),
    (".tool-versions", "held", "asdf and mise install and run the tool versions it names",
     "https://asdf-vm.com/manage/configuration.html#tool-versions"),
    ("mise.toml", "held", "mise runs its [hooks] and [env] on cd and its tasks",
     "https://mise.jdx.dev/configuration.html"),
    (".mise.toml", "held", "mise runs its [hooks] and [env] on cd and its tasks",
     "https://mise.jdx.dev/configuration.html"),
    ("mise.*.toml", "held", "mise reads mise.local.toml and mise.<env>.toml too",
     "https://mise.jdx.dev/configuration.html"),
    (".mise", "held", "mise reads .mise/config.toml like mise.toml",
     "https://mise.jdx.dev/configuration.html"),
    (".aider.conf.yml", "held", "aider runs its lint-cmd and test-cmd",
     "https://aider.chat/docs/config/aider_conf.html"),
    (".dir-locals.el", "held", "Emacs applies its directory variables on opening a file",
     "https://www.gnu.org/software/emacs/manual/html_node/emacs/Directory-Variables.html"),
    (".nvim.lua", "held", "Neovim runs it on start when 'exrc' is set (once trusted)",
     "https://neovim.io/doc/user/options.html#'exrc'"),
    (".nvimrc", "held", "Neovim runs it on start when 'exrc' is set (once trusted)",
     "https://neovim.io/doc/user/options.html#'exrc'"),
    (".exrc", "held", "vi and Neovim run it on start when 'exrc' is set",
     "https://neovim.io/doc/user/options.html#'exrc'"),
    (".env.*", "dotenv", "direnv's dotenv/dotenv_if_exists load .env.local and the like on cd",
     "https://direnv.net/man/direnv-stdlib.1.html#codedotenv-ltdotenvpathgtcode"),
    (".mise.*.toml", "held", "mise reads .mise.local.toml and .mise.<env>.toml too",
     "https://mise.jdx.dev/configuration.html"),
    (".config/mise/config.toml", "held", "mise reads a project's .config/mise/config.toml",
     "https://mise.jdx.dev/configuration.html"),
    (".config/mise.toml", "held", "mise reads a project's .config/mise.toml",
     "https://mise.jdx.dev/configuration.html"),
    (".rtx.toml", "held", "rtx (mise's old name) runs its [env] and hooks on cd",
     "https://mise.jdx.dev/configuration.html"),
    ("lefthook*.toml", "held", "lefthook reads lefthook.toml and lefthook-local.toml too",
     "https://lefthook.dev/configuration/"),
    (".lefthook*.toml", "held", "lefthook reads .lefthook.toml too",
     "https://lefthook.dev/configuration/"),
    ("lefthook*.json", "held", "lefthook reads lefthook.json too",
     "https://lefthook.dev/configuration/"),
    (".lefthook*.json", "held", "lefthook reads .lefthook.json too",
     "https://lefthook.dev/configuration/"),
    (".hgsub", "held", "Mercurial clones and updates the subrepositories it lists",
     "https://www.mercurial-scm.org/wiki/Subrepository"),
    # Instructions the NEXT agent session obeys (at any depth: agents read the ones on
    # the way to the files they touch). Plain text, but a sandbox that writes one
    # writes the next session's prompt: no content rule makes that safe.
    ("CLAUDE.md", "held", "Claude Code loads it into the next session's prompt",
     "https://docs.anthropic.com/en/docs/claude-code/memory"),
    ("CLAUDE.local.md", "held", "Claude Code loads it into the next session's prompt",
     "https://docs.anthropic.com/en/docs/claude-code/memory"),
    ("AGENTS.md", "held", "Codex (and Copilot, Cline, Windsurf, Zed) follow its instructions",
     "https://developers.openai.com/codex/guides/agents-md"),
    ("AGENTS.override.md", "held", "Codex follows it in place of AGENTS.md",
     "https://developers.openai.com/codex/guides/agents-md"),
    ("agents.md", "held", "Windsurf's Cascade follows it like AGENTS.md",
     "https://docs.windsurf.com/windsurf/cascade/agents-md"),
    ("AGENT.md", "held", "Zed's agent follows it as the project's rules",
     "https://zed.dev/docs/ai/rules"),
    (".rules", "held", "Zed's agent follows it as the project's rules",
     "https://zed.dev/docs/ai/rules"),
    ("GEMINI.md", "held", "Gemini CLI loads it into every prompt",
     "https://github.com/google-gemini/gemini-cli/blob/main/docs/cli/gemini-md.md"),
    (".github/copilot-instructions.md", "held", "GitHub Copilot follows its instructions",
     "https://docs.github.com/en/copilot/how-tos/configure-custom-instructions-in-your-ide/"
     "add-repository-instructions-in-your-ide"),
    ("*.instructions.md", "held", "GitHub Copilot follows .github/instructions/*.instructions.md",
     "https://docs.github.com/en/copilot/how-tos/configure-custom-instructions-in-your-ide/"
     "add-repository-instructions-in-your-ide"),
    (".windsurfrules", "held", "Windsurf's Cascade follows these rules",
     "https://docs.windsurf.com/windsurf/cascade/memories"),
    (".windsurf", "held", "Windsurf's Cascade follows .windsurf/rules and its workflows",
     "https://docs.windsurf.com/windsurf/cascade/memories"),
    (".clinerules", "held", "Cline follows these rules (a file, or a directory of them)",
     "https://docs.cline.bot/features/cline-rules"),
    (".cline", "held", "Cline obeys the project's .cline/ rules, workflows and hooks",
     "https://docs.cline.bot/getting-started/config"),
    # Toolchain files: the host's rustc/cargo (through rustup's proxies; a shell prompt
    # runs `rustc --version`, rust-analyzer runs `cargo metadata` on opening the project)
    # run the toolchain and the wrappers these name.
    ("rust-toolchain.toml", "held", "rustup runs the toolchain it names (a path too)",
     "https://rust-lang.github.io/rustup/overrides.html#the-toolchain-file"),
    ("rust-toolchain", "held", "rustup runs the toolchain it names (a path too)",
     "https://rust-lang.github.io/rustup/overrides.html#the-toolchain-file"),
    (".cargo/config.toml", "held", "cargo runs its rustc-wrapper, runner and linker",
     "https://doc.rust-lang.org/cargo/reference/config.html"),
    (".cargo/config", "held", "cargo runs its rustc-wrapper, runner and linker",
     "https://doc.rust-lang.org/cargo/reference/config.html"),
    # More agents that start MCP servers or run plugins from the project.
    ("opencode.json", "held", "opencode starts its MCP servers and runs its commands",
     "https://opencode.ai/docs/config/"),
    ("opencode.jsonc", "held", "opencode starts its MCP servers and runs its commands",
     "https://opencode.ai/docs/config/"),
    (".opencode", "held", "opencode loads .opencode/plugin/ code and agents",
     "https://opencode.ai/docs/plugins/"),
    (".qwen", "held", "Qwen Code starts the MCP servers of .qwen/settings.json",
     "https://qwenlm.github.io/qwen-code-docs/en/cli/configuration/"),
    ("crush.json", "held", "Crush starts its MCP servers and LSPs",
     "https://github.com/charmbracelet/crush#configuration"),
    (".crush.json", "held", "Crush starts its MCP servers and LSPs",
     "https://github.com/charmbracelet/crush#configuration"),
    (".continue", "held", "Continue starts the MCP servers of .continue/mcpServers/",
     "https://docs.continue.dev/customize/deep-dives/mcp"),
    (".kilocode", "held", "Kilo Code starts the MCP servers of .kilocode/mcp.json",
     "https://kilocode.ai/docs/features/mcp/using-mcp-in-kilo-code"),
    # mise's other project config locations
    ("mise/config.toml", "held", "mise reads a project's mise/config.toml",
     "https://mise.jdx.dev/configuration.html"),
    (".config/mise/conf.d", "held", "mise reads every .config/mise/conf.d/*.toml",
     "https://mise.jdx.dev/configuration.html"),
    (".config/mise/config.*.toml", "held", "mise reads config.local.toml and config.<env>.toml",
     "https://mise.jdx.dev/configuration.html"),
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
