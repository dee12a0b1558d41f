"""Environment variables that change which program or code runs: one table, two users.

* the classifier's RF122 rule: assigning one of these (as a prefix, with
  ``export`` or through ``env``) makes the command ``one_time``;
* the workspace-overlay rule (RF513, ``profiles/overlay.py``): a profile file
  inside the workspace that sets one of these in ``env.set`` loosens its base,
  because it changes what every sandboxed command runs.

Sources, per group: bash(1) "Shell Variables" (``BASH_ENV``, ``ENV``, ``IFS``,
``PS4``, ``SHELLOPTS``, ``BASHOPTS``, ``CDPATH``, ``GLOBIGNORE``, ``TMOUT``,
``PROMPT_COMMAND``, ``BASH_FUNC_*`` exported functions); ld.so(8) (``LD_*``;
``DYLD_*`` is its macOS dyld(1) counterpart); python(1) "Environment variables";
node(1) ``NODE_OPTIONS``/``NODE_PATH``; perlrun(1) ``PERL5OPT``/``PERL5LIB``;
ruby(1) ``RUBYOPT``/``RUBYLIB``; the JVM's ``JAVA_TOOL_OPTIONS`` (JVMTI),
``_JAVA_OPTIONS``, ``JDK_JAVA_OPTIONS`` (java(1)); less(1) ``LESSOPEN``/
``LESSCLOSE``; ssh(1)/sudo(8) ``*_ASKPASS``; make(1) and the build tools'
``CC``/``CXX``/``LD``/``RUSTC_WRAPPER``/...; npm-config(7) ``npm_config_*``
(``script-shell``, ``node-options``); cargo's ``CARGO_*`` (``CARGO_BUILD_RUSTC_WRAPPER``,
``CARGO_TARGET_*_RUNNER``); git(1) ``GIT_*`` (``GIT_SSH_COMMAND``, ``GIT_EXEC_PATH``,
``GIT_CONFIG_*``, ...) except the informational ones listed.

Leaf module: stdlib only, imported by classifier and profiles alike (they never
import each other).
"""

from __future__ import annotations

EXEC_VARS = frozenset({
    "PATH", "BASH_ENV", "ENV", "IFS", "PAGER", "EDITOR", "VISUAL", "MANPAGER", "BROWSER",
    "PYTHONPATH", "PYTHONSTARTUP", "PYTHONHOME", "PYTHONINSPECT", "PYTHONUSERBASE",
    "NODE_OPTIONS", "NODE_PATH", "PERL5OPT", "PERL5LIB", "PERLLIB", "RUBYOPT", "RUBYLIB",
    "JAVA_TOOL_OPTIONS", "_JAVA_OPTIONS", "JDK_JAVA_OPTIONS", "PS4", "SHELL", "SHELLOPTS",
    "BASHOPTS", "HOME", "ZDOTDIR", "XDG_CONFIG_HOME", "CDPATH", "GLOBIGNORE", "TMOUT",
    "PROMPT_COMMAND", "LESSOPEN", "LESSCLOSE", "SSH_ASKPASS", "SUDO_ASKPASS",
    # build tools run these programs
    "CC", "CXX", "CPP", "LD", "AR", "AS", "RUSTC", "RUSTC_WRAPPER", "RUSTDOC", "GOFLAGS",
    "MAKEFLAGS", "MAKESHELL",
})
EXEC_VAR_PREFIXES = ("LD_", "DYLD_", "BASH_FUNC_", "npm_config_", "NPM_CONFIG_", "CARGO_")
EXEC_VAR_SUFFIXES = ("_COMMAND",)
# GIT_* is conservative: every GIT_ variable except these informational ones.
GIT_SAFE_VARS = frozenset({
    "GIT_AUTHOR_NAME", "GIT_AUTHOR_EMAIL", "GIT_AUTHOR_DATE", "GIT_COMMITTER_NAME",
    "GIT_COMMITTER_EMAIL", "GIT_COMMITTER_DATE", "GIT_TERMINAL_PROMPT", "GIT_TRACE",
    "GIT_TRACE_PACKET", "GIT_TRACE_PERFORMANCE", "GIT_TRACE_SETUP", "GIT_CURL_VERBOSE",
    "GIT_MERGE_AUTOEDIT", "GIT_FLUSH", "GIT_OPTIONAL_LOCKS", "GIT_LITERAL_PATHSPECS",
    "GIT_PROGRESS_DELAY", "GIT_REDACT_COOKIES",
})


def exec_var(name: str) -> bool:
    """Does assigning this variable change which program or code runs?"""
    if name in EXEC_VARS:
        return True
    if name.startswith(EXEC_VAR_PREFIXES) or name.endswith(EXEC_VAR_SUFFIXES):
        return True
    return name.startswith("GIT_") and name not in GIT_SAFE_VARS
