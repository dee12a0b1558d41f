"""The public Python API. Thin: each function hands over to its stage."""

from __future__ import annotations

from ringfence.classifier import Verdict
from ringfence.classifier import classify as _classify


def classify(command: str) -> Verdict:
    """Classify one ``bash -c`` string into helper / capability / one_time."""
    return _classify(command)


def load_profile(name_or_path: str, *, workspace: str | None = None):
    """Load a built-in profile by name, or a TOML profile by path."""
    from ringfence.profiles.load import load_profile as _load

    return _load(name_or_path, workspace=workspace)


def compile_profile(profile, workspace: str, host=None):
    """Compile a profile into a pure, ordered SandboxSpec (no kernel needed)."""
    from ringfence.compiler.compile import compile_profile as _compile
    from ringfence.compiler.host import probe

    if host is None:
        host = probe().for_profile(profile, workspace)
    return _compile(profile, workspace, host)


def run(argv=None, *, command: str | None = None, profile: str = "build",
        workspace: str | None = None, **kwargs):
    """Run ``argv`` (or a bash ``command`` string) under ``profile``."""
    from ringfence.session.runner import run as _run

    return _run(argv, command=command, profile=profile, workspace=workspace, **kwargs)
