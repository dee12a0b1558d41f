"""Shared by the Session tests: the process environment of a box's stand-in user."""

from __future__ import annotations

import pytest


@pytest.fixture
def box_env(box, monkeypatch):
    """``box``'s environment (its home, state dir) in this process, without an active
    profile or session inherited from the caller's shell."""
    for k, v in box.env().items():
        monkeypatch.setenv(k, v)
    for k in ("RINGFENCE_PROFILE", "RINGFENCE_SESSION"):
        monkeypatch.delenv(k, raising=False)
    return box
