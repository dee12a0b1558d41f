"""Environment variables that change which program or code runs: one table, two users.

* the classifier's RF122 rule: assigning one of these (as a prefix, with
  ``export`` or through ``env``) makes the command ``one_time``;
* the workspace-overlay rule (RF513, ``profiles/overlay.py``): a profile file
  inside the workspace that sets one of these in ``env.set`` loosens its base,
  because it changes what every sandboxed command runs.

Sources, per group: bash(1) "Shell Variables" (``BASH_ENV``, ``ENV``, ``IFS``,
``PS0``-``PS4``, ``HISTFILE``, ``SHELLOPTS``, ``BASHOPTS``, ``CDPATH``, ``GLOBIGNORE``, ``TMOUT``,
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
    # options read from the environment that run programs: tar(1) TAR_OPTIONS
    # (--to-command=...), rsync(1) RSYNC_RSH / RSYNC_CONNECT_PROG, cvs CVS_RSH,
    # less(1) LESS (`+!cmd`) / LESSKEY* (a lesskey file sets LESSOPEN), more(1) MORE,
    # man(1) MANOPT (-P pager), systemd's SYSTEMD_PAGER/_EDITOR/_LESS, psql(1) PSQLRC,
    # the shells' FCEDIT, gcc's CFLAGS/LDFLAGS (-wrapper, -fplugin), RUSTFLAGS
    # (-C linker=), go(1) GOTOOLCHAIN / GOENV, python(1) PYTHONBREAKPOINT and
    # PYTHONWARNINGS (import a module), perl(1) PERL5DB, java CLASSPATH
    "TAR_OPTIONS", "RSYNC_RSH", "RSYNC_CONNECT_PROG", "CVS_RSH", "RSH", "LESS", "MORE",
    "LESSKEY", "LESSKEYIN", "LESSKEY_SYSTEM", "LESSKEYIN_SYSTEM", "MANOPT", "PSQLRC",
    "FCEDIT", "TERMINAL", "CFLAGS", "CXXFLAGS", "CPPFLAGS", "LDFLAGS", "RUSTFLAGS",
    "RUSTDOCFLAGS", "GOTOOLCHAIN", "GOENV", "GOROOT", "PYTHONBREAKPOINT", "PYTHONWARNINGS",
    "PYTHONEXECUTABLE", "PERL5DB", "CLASSPATH", "GEM_HOME", "GEM_PATH", "RUBYGEMS_GEMDEPS",
    "BASH_LOADABLES_PATH", "INPUTRC", "WGETRC", "CURL_HOME", "NETRC", "HGRCPATH",
    # glibc iconv(3) GCONV_PATH loads conversion modules (shared objects)
    "GCONV_PATH",
    # config files that name programs to run: the AWS CLI/SDKs' credential_process
    # (AWS_CONFIG_FILE, AWS_SHARED_CREDENTIALS_FILE), kubectl's exec credential
    # plugins (KUBECONFIG), docker's credsStore helpers (DOCKER_CONFIG), gcloud's
    # CLOUDSDK_CONFIG, Google "executable-sourced" credentials, ssh-style configs
    "AWS_CONFIG_FILE", "AWS_SHARED_CREDENTIALS_FILE", "KUBECONFIG", "DOCKER_CONFIG",
    "CLOUDSDK_CONFIG", "GOOGLE_APPLICATION_CREDENTIALS", "AZURE_CONFIG_DIR", "GNUPGHOME",
    "PIP_CONFIG_FILE", "NPM_CONFIG_USERCONFIG", "BUNDLE_GEMFILE", "GRADLE_USER_HOME",
    "MAVEN_OPTS", "GRADLE_OPTS", "ANT_OPTS", "SBT_OPTS",
    # libraries and startup code loaded by name: OpenSSL engines/providers
    # (OPENSSL_CONF), Lua's LUA_INIT (code), PHP's PHPRC/PHP_INI_SCAN_DIR
    # (auto_prepend_file), R's R_PROFILE_USER, GTK/GIO/Qt/GStreamer modules, cgo's
    # compiler flags, bash's EXECIGNORE, and package indexes whose packages run
    # install code (pip, uv)
    "OPENSSL_CONF", "OPENSSL_ENGINES", "OPENSSL_MODULES", "LUA_INIT", "LUA_PATH", "LUA_CPATH",
    "PHPRC", "PHP_INI_SCAN_DIR", "R_PROFILE", "R_PROFILE_USER", "R_ENVIRON_USER",
    "GTK_MODULES", "GIO_MODULE_DIR", "QT_PLUGIN_PATH", "GST_PLUGIN_PATH", "CGO_CFLAGS",
    "CGO_CPPFLAGS", "CGO_CXXFLAGS", "CGO_LDFLAGS", "EXECIGNORE", "RUSTUP_TOOLCHAIN",
    "PIP_INDEX_URL", "PIP_EXTRA_INDEX_URL", "PIP_FIND_LINKS", "UV_INDEX_URL",
    "UV_EXTRA_INDEX_URL", "UV_INDEX", "UV_FIND_LINKS", "TCLLIBPATH", "JULIA_LOAD_PATH",
    "VALGRIND_LIB", "PERL5SHELL",
    # options read from the environment: ripgrep's RIPGREP_CONFIG_PATH (--pre=CMD),
    # GNU make's GNUMAKEFLAGS (like MAKEFLAGS: --eval, SHELL=), valgrind's
    # VALGRIND_OPTS (--log-file=, --db-command=), zip(1) ZIPOPT (-TT cmd)
    "RIPGREP_CONFIG_PATH", "GNUMAKEFLAGS", "VALGRIND_OPTS", "ZIPOPT", "ZIP",
    # bash(1): PS0/PS1/PS2 are expanded (command substitution runs) by an
    # interactive shell, and HISTFILE names the file history is written to
    "PS0", "PS1", "PS2", "PS3", "HISTFILE",
    # pytest(1) reads options from PYTEST_ADDOPTS (-p PLUGIN, --basetemp) and loads
    # the modules named in PYTEST_PLUGINS
    "PYTEST_ADDOPTS", "PYTEST_PLUGINS",
})
EXEC_VAR_PREFIXES = ("LD_", "DYLD_", "BASH_FUNC_", "npm_config_", "NPM_CONFIG_", "CARGO_")
# *_COMMAND, and programs that name their pager, editor, browser, remote shell or
# askpass helper by variable: GIT_PAGER, GH_PAGER, PSQL_PAGER, SYSTEMD_PAGER,
# GIT_EDITOR, GH_EDITOR, SUDO_EDITOR, GH_BROWSER, RSYNC_RSH, GIT_ASKPASS ...
EXEC_VAR_SUFFIXES = ("_COMMAND", "_PAGER", "PAGER", "_EDITOR", "_BROWSER", "_RSH",
                     "_ASKPASS", "_SSH")
# GIT_* is conservative: every GIT_ variable except these informational ones, and
# the trace variables (GIT_TRACE, GIT_TRACE_*, GIT_TRACE2*): they run nothing, and
# the classifier judges the file a trace is written to (RF131).
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
    return name.startswith("GIT_") and name not in GIT_SAFE_VARS and \
        not name.startswith("GIT_TRACE")
